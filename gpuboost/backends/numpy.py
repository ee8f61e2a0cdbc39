"""The NumPy reference backend: naive, short, float64 sums.

It is the backend the others are tested against, so every stage is the plain formula of
``gpuboost.losses`` applied to a node's rows; speed comes from whole-array NumPy calls only.
"""

from __future__ import annotations

import numpy as np

from .. import losses
from .base import (COUNT, GRAD, HALVES_ROWS, HESS, N_CHANNELS, Backend, SplitBatch, hist_halves_rows, root_rows,
                   sparse_features, training_codes)

__all__ = ["NumpyBackend", "build_histogram", "fold_default_bins", "halved_histogram", "best_splits"]


def build_histogram(codes: np.ndarray, values: np.ndarray, n_codes: int, counts: bool = True) -> np.ndarray:
    """C-channel histogram of some rows.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_features), unsigned int, all below ``n_codes``
    values : ndarray of shape (n_rows, C), float64
        Per-row channel values, summed per (feature, code).
    n_codes : int
    counts : bool
        Append one more channel holding the number of rows (unweighted).

    Returns
    -------
    hist : ndarray of shape (n_features, n_codes, C + counts), float64
    """
    n_rows, n_features = codes.shape
    flat = (codes + np.arange(n_features, dtype=np.intp) * n_codes).ravel()
    size = n_features * n_codes
    n_channels = values.shape[1] + counts
    hist = np.empty((n_channels, size))
    for c in range(values.shape[1]):
        hist[c] = np.bincount(flat, weights=np.repeat(values[:, c], n_features), minlength=size)
    if counts:
        hist[-1] = np.bincount(flat, minlength=size)
    return hist.T.reshape(n_features, n_codes, n_channels)


def fold_default_bins(hist: np.ndarray, values: np.ndarray, sparse: np.ndarray) -> np.ndarray:
    """A block's histogram with each sparse feature's default bin made from the others.

    hist: build_histogram's (n_features, n_codes, C + 1) of a block of rows whose channel values
    are ``values`` (n_rows, C); sparse: base.sparse_features' (feature, default code) rows. The
    default bin becomes the block's totals (0.0 plus the values summed in row order; the count
    n_rows) minus the feature's other bins in code order, one at a time, and 0 in every
    channel where no row has the default code (count 0). The compiled backends compute the
    same; the fold is what lets them add only a row's codes other than the defaults. Changes
    hist in place and returns it.
    """
    n_rows, C = values.shape
    if len(sparse) == 0 or n_rows == 0:
        return hist
    f, d = sparse[:, 0], sparse[:, 1]
    totals = np.append(0.0 + np.cumsum(values, axis=0)[-1], float(n_rows))
    others = hist[f].copy()
    others[np.arange(len(f)), d] = 0.0  # (subtracting 0.0 changes nothing)
    chain = np.concatenate([np.broadcast_to(totals, (len(f), 1, C + 1)), others], axis=1)
    folded = np.subtract.accumulate(chain, axis=1)[:, -1]  # ((totals - bin 0) - bin 1) - ...
    folded[folded[:, C] == 0.0] = 0.0
    hist[f, d] = folded
    return hist


def sum_of_halves(n: int, n_codes: int, part) -> np.ndarray:
    """A node's histogram from part(lo, hi), the histogram of its rows lo:hi (in partition
    order, sparse features' default bins folded): part(0, n), or from
    base.hist_halves_rows(n_codes) rows the sum of its two halves' (the compiled backend sums
    the halves on two threads). The one rule for every backend that follows the reference."""
    if n < hist_halves_rows(n_codes):
        return part(0, n)
    mid = n // 2
    return part(0, mid) + part(mid, n)


def halved_histogram(codes: np.ndarray, values: np.ndarray, n_codes: int, sparse: np.ndarray | None = None
                     ) -> np.ndarray:
    """build_histogram of a node's rows (in partition order) by sum_of_halves, each part's
    default bins of the sparse features folded (fold_default_bins)."""
    sparse = np.zeros((0, 2), dtype=np.int64) if sparse is None else sparse
    return sum_of_halves(codes.shape[0], n_codes, lambda lo, hi: fold_default_bins(
        build_histogram(codes[lo:hi], values[lo:hi], n_codes), values[lo:hi], sparse))


def halved_column_sums(terms: np.ndarray) -> np.ndarray:
    """Column sums of a node's (n_rows, K) terms, in row order; with HALVES_ROWS rows or more,
    the sum of its halves' (the cross sums C_rk, which the compiled backend sums a half a
    thread)."""
    n = terms.shape[0]
    if n < HALVES_ROWS:
        return terms.sum(axis=0)
    mid = n // 2
    return terms[:mid].sum(axis=0) + terms[mid:].sum(axis=0)


def pair_gain(left, right, sums):
    """Eq (30) for side sums (..., N_CHANNELS) and node sums (n_nodes, N_CHANNELS)."""
    G = sums[:, None, None, GRAD]
    H = sums[:, None, None, HESS]
    return losses.split_gain(left[..., GRAD], left[..., HESS], right[..., GRAD], right[..., HESS], G, H)


def vector_gain(left, right, sums):
    """K-LogitBoost's gain: eq (30) per class on channels (g_0..g_K-1, h_0..h_K-1, count), summed."""
    K = (sums.shape[1] - 1) // 2
    total = 0.0
    for k in range(K):
        total = total + losses.split_gain(left[..., k], left[..., K + k], right[..., k], right[..., K + k],
                                          sums[:, None, None, k], sums[:, None, None, K + k])
    return total


def edge_gain(left, right, sums):
    """AdaBoost.MH's gain of a split: the growth of the tree's edge, sum over classes of
    |L_l| + |R_l| - |S_l| on channels (sum of W_il Y_il per class, count). A gain within
    the rounding of its own terms is 0 (a split that changes no vote)."""
    K = sums.shape[1] - 1
    left_edge = np.abs(left[..., :K]).sum(axis=-1)
    right_edge = np.abs(right[..., :K]).sum(axis=-1)
    parent = np.abs(sums[:, None, None, :K]).sum(axis=-1)
    gain = left_edge + right_edge - parent
    return np.where(gain > losses.GAIN_NOISE * (left_edge + right_edge + parent), gain, 0.0)


def stump_edge_gain(left, right, sums):
    """AdaBoost.MH's factorized stump (paper 002): the two sides vote v and -v, so the edge is
    sum_l |L_l - R_l|; the gain is its excess over the unsplit node's edge sum_l |S_l|."""
    K = sums.shape[1] - 1
    edge = np.abs(left[..., :K] - right[..., :K]).sum(axis=-1)
    parent = np.abs(sums[:, None, None, :K]).sum(axis=-1)
    gain = edge - parent
    return np.where(gain > losses.GAIN_NOISE * (edge + parent), gain, 0.0)


def _direction_gains(left, right, sums, min_samples_leaf, gain_fn, min_child_weight=0.0):
    """Gains for given side sums (..., channels); -inf where a side is too small: fewer rows
    than min_samples_leaf (the last channel counts rows) or, where min_child_weight > 0, a
    HESS channel below it (pair_gain's channels)."""
    gain = gain_fn(left, right, sums)
    valid = (left[..., -1] >= min_samples_leaf) & (right[..., -1] >= min_samples_leaf)
    if min_child_weight > 0:
        valid &= (left[..., HESS] >= min_child_weight) & (right[..., HESS] >= min_child_weight)
    return np.where(valid, gain, -np.inf)


def best_splits(hists: np.ndarray, sums: np.ndarray, min_samples_leaf: int, gain_fn=pair_gain,
                min_child_weight: float = 0.0, features: np.ndarray | None = None) -> SplitBatch:
    """Best split of each node by eq (30) (or ``gain_fn``), from its histogram.

    A threshold ``b`` sends value bins ``0..b`` left; missing values (the last code) go right
    or left, both tried. Each side's sums are prefix / suffix sums of the bins (no subtraction
    from the parent, which would cancel digits near convergence). Candidates are ordered
    (feature, bin, missing right before missing left) and the first of equal gains wins. When a
    node has no missing values, missing values at prediction go to the child with more rows
    (left on a tie).

    hists : (n_nodes, n_features, n_codes, channels); sums : (n_nodes, channels); the last
    channel counts rows. ``min_child_weight`` > 0 (pair_gain's channels only): a side's HESS
    sum must be at least that. ``features`` (n_features booleans, colsample_bytree's): only
    those features have candidates.
    """
    value_bins = hists[:, :, :-1, :]
    missing = hists[:, :, -1:, :]
    prefix = np.cumsum(value_bins, axis=2)
    # suffix[b] = sum of the value bins after b
    suffix = np.zeros_like(prefix)
    suffix[:, :, :-1, :] = np.cumsum(value_bins[:, :, :0:-1, :], axis=2)[:, :, ::-1, :]
    has_missing = missing[:, :, 0, -1] > 0  # (n_nodes, n_features): each feature has its own
    gain = np.full(prefix.shape[:3] + (2,), -np.inf)
    gain[..., 0] = _direction_gains(prefix, suffix + missing, sums, min_samples_leaf, gain_fn, min_child_weight)
    if has_missing.any():
        left_gain = _direction_gains(prefix + missing, suffix, sums, min_samples_leaf, gain_fn, min_child_weight)
        gain[..., 1] = np.where(has_missing[:, :, None], left_gain, -np.inf)
    if features is not None:
        gain[:, ~np.asarray(features, dtype=bool)] = -np.inf

    n_nodes, n_features, n_bins = gain.shape[:3]
    flat = gain.reshape(n_nodes, -1)
    top = flat.max(axis=1)
    # gains within SPLIT_TIE of the best are ties: the first candidate wins
    with np.errstate(invalid="ignore"):
        threshold = np.where(np.isfinite(top), top - losses.SPLIT_TIE * np.abs(top), np.inf)
    best = np.where(np.isfinite(top), np.argmax(flat >= threshold[:, None], axis=1), 0)
    feature, bin_, direction = np.unravel_index(best, (n_features, n_bins, 2))
    nodes = np.arange(n_nodes)
    left_rows = prefix[nodes, feature, bin_, -1] + np.where(direction == 1, missing[nodes, feature, 0, -1], 0)
    missing_left = np.where(has_missing[nodes, feature], direction == 1, left_rows >= sums[:, -1] - left_rows)
    return SplitBatch(
        # no split where no gain is finite: -inf (no candidate), or +inf and NaN (the sums broke
        # down: a Hessian sum below 0 or G^2 overflowing, as weights of 1e+-150 can make them)
        gain=np.where(np.isfinite(top), gain[nodes, feature, bin_, direction], -np.inf),
        feature=feature.astype(np.int64),
        bin=bin_.astype(np.int64),
        missing_left=missing_left.astype(bool),
        sums=sums,
    )


#: The links a backend computes p (and the gradients) with: the softmax (AOSO, the K-tree
#: family), K-LogitBoost's exp(F - 1), AdaBoost.MH's exponential weights, and multi-label
#: K-LogitBoost's per-label logistic function.
LINKS = ("softmax", "klogit", "exp", "logistic")


class NumpyBackend(Backend):
    """Reference implementation of every stage, in NumPy and float64."""

    name = "numpy"

    def __init__(self, codes, y, sample_weight, n_classes, n_bins, missing_code, n_threads=1, link="softmax",
                 labels=None):
        """``labels``: a multi-label indicator matrix (n, K): AdaBoost.MH's label sets
        (link "exp"), the LogitBoost family's targets eta = 1/|S_i| (link "softmax"), or
        multi-label K-LogitBoost's per-label targets (link "logistic", which needs them)."""
        codes = np.asarray(codes)
        if link not in LINKS:
            raise ValueError(f"link must be one of {LINKS}, got {link!r}")
        if link == "logistic" and labels is None:
            raise ValueError("link 'logistic' (multi-label K-LogitBoost) needs the label indicator matrix")
        self.link = link
        # Histograms are n_bins + 1 wide: the value bins in use, then the missing values.
        self.codes = training_codes(codes, n_bins, missing_code)
        self.y = np.asarray(y, dtype=np.intp)
        self.weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.sample_weight = self.weight
        self.n_classes = int(n_classes)
        self.n_codes = int(n_bins) + 1
        self.sparse = sparse_features(self.codes, self.n_codes)  # their default bins are folded
        self.rows = np.arange(self.codes.shape[0], dtype=np.intp)
        self.eta = losses.label_targets(labels) if (link == "softmax" and labels is not None) else None
        self.labels = np.asarray(labels, dtype=bool) if link == "logistic" else None
        if link == "exp" and labels is not None:  # AdaBoost.MH, multi-label: +1 for every label
            labels = np.asarray(labels, dtype=bool)  # of a row's set; uniform initial weights 1/(nL)
            self.Y = np.where(labels, 1.0, -1.0)
            s = np.ones(labels.shape[0]) if self.weight is None else self.weight
            self.W0 = np.repeat((s / s.sum() / self.n_classes)[:, None], self.n_classes, axis=1)
        elif link == "exp":  # AdaBoost.MH: labels as +-1 per class, and eq (2)'s initial weights
            self.Y = -np.ones((self.y.shape[0], self.n_classes))
            self.Y[np.arange(self.y.shape[0]), self.y] = 1.0
            self.W0 = losses.adaboost_initial_weights(self.y, self.n_classes, self.weight)
        if link == "exp":  # W0 never changes: its log once, for every set_scores
            with np.errstate(divide="ignore"):
                self._log_W0 = np.log(self.W0)

    # -- per-iteration state -------------------------------------------------------------
    def set_scores(self, F):
        if self.link == "exp":  # AdaBoost.MH: the weights, the exponential and Hamming losses
            self.W, loss, self.hamming_loss = losses.adaboost_weights(F, self.Y, self.W0, self._log_W0)
            self.p = self.pc = None
            return loss
        if self.link == "klogit":  # K-LogitBoost's unnormalised link: p = exp(F - 1)
            self.p, self.g, loss = losses.klogit_link(F, self.y, self.weight)
            self.pc = 1.0 - self.p  # (for class_losses only; K-LogitBoost needs no complement)
            self.h = self.p  # its Hessian diag(p)
            return loss
        if self.link == "logistic":  # multi-label K-LogitBoost: a logistic model per label
            self.p, self.pc, self.g, self.h, loss = losses.logistic_link(F, self.labels, self.weight)
            return loss
        if self.eta is not None:  # multi-label targets (paper 004)
            self.p, self.pc, loss = losses.multilabel_loss(F, self.eta, self.weight)
            return loss
        self.p, self.pc, loss = losses.softmax_with_loss(F, self.y, self.weight)
        return loss

    # -- K-LogitBoost's vector trees: channels (g_0..g_K-1, h_0..h_K-1, count) ------------
    def _vector_channels(self, idx):
        if self.link == "exp":  # AdaBoost.MH: the class-wise edges W_il Y_il (row weights are in W)
            return self.W[idx] * self.Y[idx]
        g, h = self.g[idx], self.h[idx]  # the diagonal Hessian
        w = self._weights(idx)
        if w is not None:
            g, h = g * w[:, None], h * w[:, None]
        return np.concatenate([g, h], axis=1)

    def _vector_width(self):
        return (1 if self.link == "exp" else 2) * self.n_classes + 1

    def vector_node_sums(self, segments):
        sums = np.empty((len(segments), self._vector_width()))
        for j, segment in enumerate(segments):
            idx = self._segment(segment)
            sums[j, :-1] = self._vector_channels(idx).sum(axis=0)
            sums[j, -1] = idx.size
        return sums

    def vector_histograms(self, segments):
        hists = np.empty((len(segments), self.codes.shape[1], self.n_codes, self._vector_width()))
        for j, segment in enumerate(segments):
            idx = self._segment(segment)
            values = self._vector_channels(idx)
            hists[j] = fold_default_bins(build_histogram(self.codes[idx], values, self.n_codes), values, self.sparse)
        return hists

    def find_vector_splits(self, hists, min_samples_leaf, factorized=False, features=None):
        """factorized: AdaBoost.MH's stump, whose sides vote v and -v (link "exp" only)."""
        gain = (stump_edge_gain if factorized else edge_gain) if self.link == "exp" else vector_gain
        return best_splits(hists, hists[:, 0, :, :].sum(axis=1), min_samples_leaf, gain, features=features)

    def reset_partition(self, sample=None):
        self.rows = root_rows(self.codes.shape[0], sample, np.intp)

    # -- per-node statistics -------------------------------------------------------------
    def _segment(self, segment):
        start, stop = int(segment[0]), int(segment[1])
        return self.rows[start:stop]

    def _weights(self, idx):
        return None if self.weight is None else self.weight[idx]

    def select_pairs(self, segments, rule):
        pairs = np.empty((len(segments), 2), dtype=np.int64)
        for j, segment in enumerate(segments):
            idx = self._segment(segment)
            p, pc, w = self.p[idx], self.pc[idx], self._weights(idx)
            g = (losses.gradient(p, pc, self.y[idx]) if self.eta is None
                 else losses.target_gradient(p, pc, self.eta[idx]))
            hd = p * pc
            if w is not None:
                g, hd, p_w = g * w[:, None], hd * w[:, None], p * w[:, None]
            else:
                p_w = p
            # column sums, not a matrix product: BLAS may sum each column in another order,
            # which would break exact ties between classes at random
            pairs[j] = losses.class_pair(g.sum(axis=0), hd.sum(axis=0),
                                         lambda r: halved_column_sums(p_w[:, r, None] * p), rule)
        return pairs

    def _channels(self, idx, pair, first_order=False):
        g, h = losses.pair_statistics(self.p[idx], self.pc[idx], self.y[idx], int(pair[0]), int(pair[1]),
                                      None if self.eta is None else self.eta[idx])
        if first_order:
            h = np.ones_like(h)
        w = self._weights(idx)
        if w is not None:
            g, h = g * w, h * w
        return np.stack([g, h], axis=1)

    def node_sums(self, segments, pairs):
        sums = np.empty((len(segments), N_CHANNELS))
        for j, (segment, pair) in enumerate(zip(segments, pairs)):
            idx = self._segment(segment)
            values = self._channels(idx, pair)
            sums[j, :2] = values.sum(axis=0)
            sums[j, COUNT] = idx.size
        return sums

    def histograms(self, segments, pairs, first_order=False):
        n_features = self.codes.shape[1]
        hists = np.empty((len(segments), n_features, self.n_codes, N_CHANNELS))
        for j, (segment, pair) in enumerate(zip(segments, pairs)):
            idx = self._segment(segment)
            hists[j] = halved_histogram(self.codes[idx], self._channels(idx, pair, first_order), self.n_codes,
                                        self.sparse)
        return hists

    def find_splits(self, hists, min_samples_leaf, min_child_weight=0.0, features=None):
        # Every feature's bins hold every row once: feature 0's bins give the node totals.
        sums = hists[:, 0, :, :].sum(axis=1)
        return best_splits(hists, sums, min_samples_leaf, min_child_weight=min_child_weight, features=features)

    def partition(self, segment, feature, bin, missing_left):
        start, stop = int(segment[0]), int(segment[1])
        idx = self.rows[start:stop]
        code = self.codes[idx, feature]
        is_missing = code == self.n_codes - 1
        go_left = np.where(is_missing, bool(missing_left), code <= bin)
        n_left = int(go_left.sum())
        self.rows[start:stop] = np.concatenate([idx[go_left], idx[~go_left]])
        return n_left

    def update_scores(self, F, segments, deltas):
        for (start, stop), delta in zip(segments, deltas):
            F[self.rows[int(start):int(stop)]] += delta
