"""The backend interface: the stages of one boosting iteration, on arrays a backend owns.

The grower decides, a backend computes. A backend holds the binned data, the labels, the
weights, the per-sample probabilities of the current iteration and the row partition::

    rows:  | node 3 rows | node 4 rows |  node 2 rows  |
           ^start3       ^start4       ^start2         ^stop2

Every node of the tree being grown is a contiguous segment ``rows[start:stop]``; splitting a
node stably partitions its segment into [left rows | right rows], so the children are again
segments. Stages take a batch of nodes (a GPU backend serves a batch in one launch) and return
a few numbers per node, the only things the grower reads back.

Histogram layout, shared by every backend::

    hist[node, feature, code, channel]     float64
    code:    0 .. n_bins-1 value bins, n_bins = missing values
    channel: 0 = sum of w_i g_i, 1 = sum of w_i h_i (or of w_i: first-order gain),
         2 = number of rows (unweighted)

``g_i`` and ``h_i`` are the node's projected statistics (for AOSO: eqs (25), (26) under the
node's own class pair). Sample weights multiply every channel but the count.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

__all__ = ["Backend", "SplitBatch", "N_CHANNELS", "GRAD", "HESS", "COUNT", "HALVES_ROWS", "hist_halves_rows",
           "training_codes", "all_features", "root_rows", "sparse_features", "SPARSE_MAX_BYTES", "derived_histogram",
           "histograms_derivable", "DERIVE_MAX_BYTES"]

#: The channels of a histogram and of node sums.
GRAD, HESS, COUNT = 0, 1, 2
N_CHANNELS = 3

#: A node of at least this many rows has the sum of its two halves' cross sums C_rk (the rows
#: of the node in partition order, split at the middle, each half summed in row order): the
#: compiled backend gives the halves to two threads. Smaller nodes are summed in one pass. The
#: rule depends on the node alone, never on the number of threads.
HALVES_ROWS = 4096

#: The same rule for histograms (a node's histogram is the sum of its two halves', added bin
#: by bin, first half + second half), from hist_halves_rows(n_codes) rows: HIST_HALVES_MIN, or
#: HIST_HALVES_PER_CODE rows a histogram column where there are many codes. A histogram pass
#: costs more a row than the cross sums, so halves pay from fewer rows; but each half has a
#: histogram of its own to clear and to scan for the best split (the compiled backend adds the
#: halves there), a cost of the number of codes. Measured (grow_tree at 2 threads, A/B against
#: 4096 rows): letter's 17 codes gain 6-7% from 256 to 680 rows, pendigits' 102 codes nothing
#: at any size below 4096; at 1 thread a halved node costs a little (1.5-3% a tree).
HIST_HALVES_MIN = 256
HIST_HALVES_PER_CODE = 40


def hist_halves_rows(n_codes: int) -> int:
    """The fewest rows of a node whose histogram is the sum of its two halves'."""
    return max(HIST_HALVES_MIN, HIST_HALVES_PER_CODE * int(n_codes))


#: Histogram subtraction keeps the histogram of every node that may still be split: where
#: (max_leaves + 1) of them would pass this many bytes, a tree is grown without it (the
#: compiled AOSO grower keeps a pair of 4-channel histograms a node: 64 bytes a bin).
DERIVE_MAX_BYTES = 1 << 28


#: Sparse features (sparse_features) are used up to this many bytes of their codes other than
#: the defaults (8 bytes each, and 8 a row: CpuBackend's cells); beyond it every feature is
#: summed densely.
SPARSE_MAX_BYTES = 1 << 30

#: sparse_features reads the codes' columns a block of about this many bytes at a time
SPARSE_BLOCK_BYTES = 8 << 20


def training_codes(codes: np.ndarray, n_bins: int, missing_code: int) -> np.ndarray:
    """A backend's copy of the binned training data: missing values (``missing_code``) moved to
    code ``n_bins``, after the value bins, in uint8 wherever the ``n_bins + 1`` codes fit it.

    The binning's dtype follows ``max_bins`` (its missing code is ``max_bins``), but a backend
    only needs its own codes: ``max_bins=1000`` (ABCBoost's default) on data whose features
    have at most 255 distinct values trains on uint8 codes. The codes are the same numbers, so
    the model is the same; they take half the memory, and the kernels are the ones that
    ``max_bins <= 255`` uses (no second compilation for uint16 codes).
    """
    codes = np.asarray(codes)
    dtype = np.dtype(np.uint8) if n_bins <= np.iinfo(np.uint8).max else codes.dtype
    return np.ascontiguousarray(np.where(codes == missing_code, n_bins, codes).astype(dtype))


def sparse_features(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """The features whose most frequent code (the lowest of equals), their default, holds at
    least half of the rows, as int64 rows (feature, default code); none where there are no rows
    or their other codes would pass SPARSE_MAX_BYTES.

    The default bin of such a feature in a histogram (pair or vector) is not summed from its
    rows: it is the block's totals minus the feature's other bins (numpy.fold_default_bins),
    so that the compiled backends add only a row's other codes (covertype's 44 one-hot
    features: two a row). It is part of what the CPU backends' histograms are; it depends on
    the training codes alone (the GPU sums every bin: the same to rounding).
    """
    codes = np.asarray(codes)
    n, D = codes.shape
    none = np.zeros((0, 2), dtype=np.int64)
    if n == 0:
        return none
    found = []
    others = 0
    block = max(1, SPARSE_BLOCK_BYTES // (n * codes.itemsize))  # (a block's columns as contiguous rows:
    for first in range(0, D, block):                              # a column of wide codes is strided)
        columns = np.ascontiguousarray(codes[:, first:first + block].T)
        for j, column in enumerate(columns):
            counts = np.bincount(column, minlength=n_codes)
            default = int(np.argmax(counts))
            if 2 * int(counts[default]) >= n:
                found.append((first + j, default))
                others += n - int(counts[default])
    if not found or (others + n + 1) * 8 > SPARSE_MAX_BYTES:
        return none
    return np.array(found, dtype=np.int64)


def histograms_derivable(max_leaves: int, n_features: int, n_codes: int, n_channels: int = 8) -> bool:
    """Whether a tree's larger children may take their histograms by subtraction: (max_leaves
    + 1) nodes' histograms of n_channels float64 numbers a bin fit in DERIVE_MAX_BYTES."""
    return (int(max_leaves) + 1) * int(n_features) * int(n_codes) * int(n_channels) * 8 <= DERIVE_MAX_BYTES


def derived_histogram(parent, smaller, count: int = COUNT):
    """The histogram of a split's larger child from its parent's and its sibling's (histogram
    subtraction; the sibling's under the parent's pair): parent - smaller, bin by bin and
    channel by channel, and 0 in every channel of a bin that holds no row of the child (channel
    ``count`` 0: the counts are exact), where the difference leaves rounding residue and the
    child's own sum is 0.0. Any array type with NumPy's operators and boolean-mask assignment;
    the compiled backend computes the same.

    The tree grower uses it where the larger child (the right one where the two children have
    as many rows) gets a histogram and has its parent's pair: 17-24% of AOSO's histogram rows
    on pendigits, optdigits and letter, and every larger child of a tree with one
    pair for all nodes (MART, ABC, LogitBoost) or of a vector tree (K-LogitBoost, AdaBoost.MH's
    Hamming trees). The sums are the direct ones up to rounding.
    """
    out = parent - smaller
    out[out[..., count] == 0.0] = 0.0
    return out


@dataclass
class SplitBatch:
    """The best split of each node of a batch (arrays of shape (n_nodes,)).

    ``gain`` is -inf where a node has no valid split. ``sums`` holds the node totals,
    shape (n_nodes, N_CHANNELS).
    """

    gain: np.ndarray
    feature: np.ndarray
    bin: np.ndarray
    missing_left: np.ndarray
    sums: np.ndarray


class Backend(ABC):
    """Stages on the arrays of one training run. See the module docstring for the layouts."""

    #: Short name, shown in messages and stored in nothing.
    name: str = "abstract"

    #: Whether the tree grower may take a larger child's histogram by subtraction
    #: (derived_histogram) from ``histograms``' float64 sums, asking for the smaller child's
    #: under its parent's pair where that is not its own.
    derives_histograms: bool = True

    @abstractmethod
    def __init__(
        self,
        codes: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None,
        n_classes: int,
        n_bins: int,
        missing_code: int,
        n_threads: int = 1,
    ):
        """Take the binned training data.

        codes : (n_samples, n_features) uint8/uint16, value bins below ``n_bins`` and
        ``missing_code`` for missing values; y : (n_samples,) int labels 0..K-1;
        sample_weight : (n_samples,) float64 or None; n_bins : the number of value bins
        in use (histograms are ``n_bins + 1`` wide, the missing values last); n_threads :
        threads a backend may use (results must not depend on it).
        """

    # Every backend keeps the binned training data as ``codes`` (missing values remapped to
    # ``n_codes - 1``), its histogram width as ``n_codes``, the labels ``y``, the weights
    # ``sample_weight`` (or None), and this iteration's probabilities ``p`` and complements ``pc``.
    codes: np.ndarray
    n_codes: int
    y: np.ndarray
    sample_weight: np.ndarray | None
    p: np.ndarray
    pc: np.ndarray

    def class_losses(self) -> np.ndarray:
        """Training loss per true class, ``sum_{i: y_i = k} w_i (-log p_{i,k})``, shape (K,).

        ABC's base-class search ranks classes by it. ``-log p`` is ``-log1p(-(1 - p))`` where p is
        near 1, so that converged classes keep their digits.
        """
        rows = np.arange(self.y.shape[0])
        return label_losses(self.p[rows, self.y], self.pc[rows, self.y], self.y, self.sample_weight,
                            self.p.shape[1])

    def training_codes(self) -> np.ndarray:
        """The training rows' codes, as ``tree_leaves`` takes them with ``missing_code``."""
        return self.codes

    @property
    def missing_code(self) -> int:
        return self.n_codes - 1

    @abstractmethod
    def set_scores(self, F: np.ndarray) -> float:
        """Compute this iteration's probabilities from F (n_samples, n_classes); return the
        training loss ``sum_i w_i (-log p_{i,y_i})`` of F, computed stably."""

    @abstractmethod
    def reset_partition(self, sample: np.ndarray | None = None) -> None:
        """Put every row into the root segment, in row order; or, given ``sample`` (increasing
        row ids, subsample's rows), those rows first, as the root segment [0, len(sample)),
        then the others."""

    def spread_leaves(self, tree, segments: np.ndarray, leaf_ids: np.ndarray) -> np.ndarray:
        """After ``tree`` was grown on the rows of the root segment [0, m) (reset_partition's
        sample; ``segments``: its leaves' segments there, ``leaf_ids`` their node ids): put
        every row into its leaf's segment and return the new segments, shape (n_leaves, 2), for
        update_scores. Each leaf's segment holds its grown rows, in their order, then the other
        rows (rows[m:], in their order) that the tree puts in that leaf (tree_leaves).
        """
        segments = np.asarray(segments, dtype=np.int64)
        m = int(segments[:, 1].max()) if len(segments) else 0
        rest = self.rows[m:]
        leaf = self.tree_leaves(tree, self.training_codes()[rest], self.missing_code)
        parts = []
        for (start, stop), node in zip(segments, leaf_ids):
            parts += [self.rows[start:stop], rest[leaf == node]]
        rows = np.concatenate(parts)
        if rows.shape[0] != self.rows.shape[0]:
            raise RuntimeError("spread_leaves: a row's leaf is not among leaf_ids (a bug)")
        sizes = np.array([len(part) for part in parts]).reshape(-1, 2).sum(axis=1)
        self.rows[:] = rows
        stops = np.cumsum(sizes)
        return np.stack([stops - sizes, stops], axis=1).astype(np.int64)

    @abstractmethod
    def select_pairs(self, segments: np.ndarray, rule: str) -> np.ndarray:
        """Class pair (r, s) of each node, shape (n_nodes, 2), by eq (33) or eq (32).

        segments : (n_nodes, 2) int, [start, stop) of each node.
        """

    @abstractmethod
    def node_sums(self, segments: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """Totals of the histogram channels of each node, shape (n_nodes, N_CHANNELS)."""

    @abstractmethod
    def histograms(self, segments: np.ndarray, pairs: np.ndarray, first_order: bool = False) -> np.ndarray:
        """Histograms of a batch of nodes, shape (n_nodes, n_features, n_codes, N_CHANNELS).

        A node of hist_halves_rows(n_codes) rows or more has the sum of its two halves' histograms.
        With ``first_order`` the HESS channel sums the weights w_i (1 per row unweighted)
        instead of w_i h_i: the first-order gain of MART and ABC-MART.
        """

    @abstractmethod
    def find_splits(self, hists: np.ndarray, min_samples_leaf: int, min_child_weight: float = 0.0,
                    features: np.ndarray | None = None) -> SplitBatch:
        """Best split of each node by eq (30); ties to the lowest feature, then bin. A side with
        fewer than min_samples_leaf rows, or a HESS sum below min_child_weight (> 0), is no
        candidate; with ``features`` (n_features booleans), only those features are."""

    @abstractmethod
    def partition(self, segment: tuple[int, int], feature: int, bin: int, missing_left: bool) -> int:
        """Stably partition a node's rows into [left | right]; return the number of left rows."""

    @staticmethod
    def tree_leaves(tree, codes: np.ndarray, missing_code: int) -> np.ndarray:
        """Leaf id of every row of ``codes`` (binned by the model's BinMapper) in ``tree``."""
        return tree.apply(codes, missing_code)

    @classmethod
    def add_trees(cls, F: np.ndarray, trees, codes: np.ndarray, missing_code: int, learning_rate: float) -> None:
        """Add ``learning_rate * leaf vector`` of every tree to F in place, tree by tree.

        The order of operations is the training loop's, so the scores of the training rows are
        reproduced bit for bit.
        """
        n_classes = F.shape[1]
        for tree in trees:
            step = learning_rate * tree.node_vectors(n_classes)
            F += step[cls.tree_leaves(tree, codes, missing_code)]

    def leaf_steps(self, tree, leaf_ids: np.ndarray, learning_rate: float) -> np.ndarray:
        """``learning_rate`` times the vectors (eq 29) of the tree's leaves ``leaf_ids``, shape
        (n_leaves, n_classes): the deltas of update_scores for the leaves' segments."""
        return learning_rate * tree.node_vectors(self.n_classes, leaf_ids)

    @abstractmethod
    def update_scores(self, F: np.ndarray, segments: np.ndarray, deltas: np.ndarray) -> None:
        """``F[rows of leaf j] += deltas[j]`` for each leaf segment; deltas (n_leaves, n_classes)."""


def all_features(n_features: int, features) -> np.ndarray:
    """The split search's feature mask: ``features`` (n_features booleans, colsample_bytree's)
    as a contiguous bool array, or every feature where it is None."""
    if features is None:
        return np.ones(n_features, dtype=np.bool_)
    features = np.ascontiguousarray(features, dtype=np.bool_)
    if features.shape != (n_features,):
        raise ValueError(f"a feature mask must have one entry per feature ({n_features}), got shape {features.shape}")
    return features


def check_row_sample(n_rows: int, sample) -> np.ndarray:
    """``sample`` as an array, checked: increasing row ids in [0, n_rows), at least one."""
    sample = np.asarray(sample)
    if sample.ndim != 1 or not 0 < sample.size <= n_rows or sample[0] < 0 or sample[-1] >= n_rows or (
            sample.size > 1 and not np.all(sample[1:] > sample[:-1])):
        raise ValueError("a row sample must be increasing row ids in [0, n_rows), at least one")
    return sample


def root_rows(n_rows: int, sample, dtype) -> np.ndarray:
    """Backend.reset_partition's row order: 0 .. n_rows - 1, or the rows ``sample`` (increasing)
    then the others in row order."""
    if sample is None:
        return np.arange(n_rows, dtype=dtype)
    sample = check_row_sample(n_rows, sample)
    rest = np.ones(n_rows, dtype=bool)
    rest[sample] = False
    return np.concatenate([sample, np.flatnonzero(rest)]).astype(dtype)


def label_losses(p_y, pc_y, y, sample_weight, n_classes):
    """Backend.class_losses from each row's p and 1 - p at its own class (p_y, pc_y)."""
    with np.errstate(divide="ignore"):
        loss = np.where(p_y > 0.5, -np.log1p(-pc_y), -np.log(p_y))
    if sample_weight is not None:
        loss = loss * sample_weight
    return np.bincount(y, weights=loss, minlength=n_classes)
