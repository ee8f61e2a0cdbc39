"""Best-first growth of one AOSO vector tree (paper 000, Algorithm 1 and section 4).

Control flow only: every number comes from a backend stage. Growth:

1. The root holds every row; it picks its class pair by eq (33) (or eq (32)), builds its
   histogram under that pair and finds its best split by eq (30).
2. Repeatedly split the leaf with the largest positive gain (ties: the lowest node id) until
   there are ``max_leaves`` leaves or no leaf has a valid split with positive gain. Each child
   picks its own pair from its own rows before its own split search.
3. Every node's value is the Newton step under its own pair, clipped (eq 27, 29).

A child that can never be split (fewer than ``2 * min_samples_leaf`` rows, at ``max_depth``, or
created by the split that reaches ``max_leaves``) gets only its node sums, not a histogram. The
larger child of a split (the right one of two as large) that gets a histogram and has its
parent's pair takes it by subtraction: the parent's minus the smaller child's under that pair
(``backends.base.derived_histogram``; the smaller child's own histogram where it has the pair
too, else one made for the purpose).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from . import losses
from .backends.base import COUNT, GRAD, HESS, Backend, derived_histogram, histograms_derivable
from .tree import Tree

__all__ = ["TreeGrower", "GrowerParams", "make_tree"]


@dataclass(frozen=True)
class GrowerParams:
    """How one tree is grown.

    ``fixed_pair`` None: every node chooses its pair by ``pair_rule`` (AOSO); (k, b): the whole
    tree uses that pair (ABC); (k, -1): a scalar tree of class k (MART, robust LogitBoost).
    ``first_order``: the split gain weighs rows by their weight instead of their Hessian (MART,
    ABC-MART); node values are Newton steps either way, times ``value_scale``.
    """

    max_leaves: int = 20
    max_depth: int | None = None  # a node at this depth (the root's: 0) is not split; None: no limit
    min_samples_leaf: int = 1
    min_child_weight: float = 0.0  # a child's least HESS sum (0: none, the papers'); not for vector trees
    pair_rule: str = "eq33"
    leaf_clip: float = 5.0
    fixed_pair: tuple[int, int] | None = None
    first_order: bool = False
    value_scale: float = 1.0
    vector: bool = False  # K-LogitBoost: every node has K values, the gain sums over classes
    edge: bool = False  # with vector: AdaBoost.MH's Hamming tree (edge gain, alpha x vote vectors)
    factorized: bool = False  # with edge and 2 leaves: AdaBoost.MH's stump, the sides vote v and -v
    # the features the tree may split on (n_features booleans; colsample_bytree's), or None: all
    features: np.ndarray | None = field(default=None, compare=False)


@dataclass
class _Node:
    start: int
    stop: int
    pair: tuple[int, int]
    sums: np.ndarray
    split: tuple | None = None  # (gain, feature, bin, missing_left)
    depth: int = 0
    children: tuple[int, int] | None = None
    hist: object = None  # the histogram its split was found on, kept until its children have theirs


class TreeGrower:
    """Grow one tree on the rows a backend holds.

    Parameters
    ----------
    backend : Backend
        Holds the data and this iteration's probabilities (``set_scores`` already called).
    params : GrowerParams
    bin_edge : callable
        ``bin_edge(features, bins)`` gives the raw thresholds stored beside the bin thresholds,
        for integer arrays of one shape (a tree's splits in one call; ``BinMapper.bin_upper_edge``).
    """

    def __init__(self, backend: Backend, params: GrowerParams, bin_edge, n_rows: int):
        self.backend = backend
        self.params = params
        self.bin_edge = bin_edge
        self.n_rows = n_rows

    def _evaluate(self, node_ids: list[int], can_grow: bool, parent: _Node | None = None) -> None:
        """Pairs, then sums or histograms and best splits, for a batch of new nodes (the root,
        or the two children of ``parent``)."""
        nodes = [self.nodes[i] for i in node_ids]
        segments = np.array([[n.start, n.stop] for n in nodes], dtype=np.int64)
        if self.params.vector:
            pairs = np.tile(np.array([0, losses.VECTOR], dtype=np.int64), (len(nodes), 1))
        elif self.params.fixed_pair is None:
            pairs = self.backend.select_pairs(segments, self.params.pair_rule)
        else:
            pairs = np.tile(np.asarray(self.params.fixed_pair, dtype=np.int64), (len(nodes), 1))
        for node, pair in zip(nodes, pairs):
            node.pair = (int(pair[0]), int(pair[1]))
        splittable = [
            can_grow and (n.stop - n.start) >= 2 * self.params.min_samples_leaf for n in nodes
        ]
        grow = [j for j, ok in enumerate(splittable) if ok]
        rest = [j for j, ok in enumerate(splittable) if not ok]
        if grow and self.params.vector:
            hists = self._vector_histograms(nodes, segments, grow, parent)
            found = self.backend.find_vector_splits(hists, self.params.min_samples_leaf,
                                                    factorized=self.params.factorized, features=self.params.features)
        elif grow:
            hists = self._histograms(nodes, segments, pairs, grow, parent)
            found = self.backend.find_splits(hists, self.params.min_samples_leaf, self.params.min_child_weight,
                                             features=self.params.features)
        if grow and self._keeps_histograms(hists.shape[-1] if self.params.vector else 8):
            for k, j in enumerate(grow):
                nodes[j].hist = hists[k]  # (for its larger child's, by subtraction: _derived_child)
        if parent is not None:
            parent.hist = None  # its children have their histograms
        if grow:
            for k, j in enumerate(grow):
                nodes[j].sums = found.sums[k]
                if found.gain[k] > 0.0:
                    nodes[j].split = (float(found.gain[k]), int(found.feature[k]),
                                      int(found.bin[k]), bool(found.missing_left[k]))
                    heapq.heappush(self.heap, (-found.gain[k], node_ids[j]))
        if rest:
            sums = (self.backend.vector_node_sums(segments[rest]) if self.params.vector
                    else self.backend.node_sums(segments[rest], pairs[rest]))
            for k, j in enumerate(rest):
                nodes[j].sums = sums[k]

    def _keeps_histograms(self, n_channels: int) -> bool:
        """Whether nodes keep their histograms until their children have theirs: only where a
        child's may be derived from them (a K-LogitBoost tree of 20 leaves on 100 classes and
        100 features held 1.3 GB of histograms no child could use)."""
        return bool(getattr(self.backend, "derives_histograms", False)
                    and histograms_derivable(self.params.max_leaves, self.backend.codes.shape[1],
                                             self.backend.n_codes, n_channels))

    def _derived_child(self, nodes, grow, parent, n_channels=8):
        """(larger, smaller): the batch indices of a split's children where the larger one's
        histogram is derived (it grows, has its parent's pair, and the backend and the memory
        rule allow it: ``Backend.derives_histograms``, ``histograms_derivable``), else None."""
        if (parent is None or parent.hist is None or not getattr(self.backend, "derives_histograms", False)
                or not histograms_derivable(self.params.max_leaves, self.backend.codes.shape[1],
                                            self.backend.n_codes, n_channels)):
            return None
        small = 0 if nodes[0].stop - nodes[0].start <= nodes[1].stop - nodes[1].start else 1
        if 1 - small in grow and nodes[1 - small].pair == parent.pair:
            return 1 - small, small
        return None

    def _vector_histograms(self, nodes, segments, grow, parent):
        """The vector histograms of the batch's nodes ``grow``, stacked; the larger child's by
        subtraction (every node of a vector tree has the same pair), the count last."""
        width = 0 if parent is None or parent.hist is None else parent.hist.shape[-1]
        derived = self._derived_child(nodes, grow, parent, width)
        if derived is None:
            return self.backend.vector_histograms(segments[grow])
        large, small = derived
        direct = [j for j in grow if j != large] if small in grow else [small]
        hists = dict(zip(direct, self.backend.vector_histograms(segments[direct])))
        hists[large] = derived_histogram(parent.hist, hists[small], count=-1)
        return np.stack([hists[j] for j in grow])

    def _histograms(self, nodes, segments, pairs, grow, parent):
        """The histograms of the batch's nodes ``grow`` (indices), stacked; the larger child's
        by subtraction where it has its parent's pair (see the module's docstring) and the
        backend's histograms allow it (``Backend.derives_histograms``)."""
        first_order = self.params.first_order
        derived = self._derived_child(nodes, grow, parent)
        if derived is None:
            return self.backend.histograms(segments[grow], pairs[grow], first_order)
        large, small = derived
        direct = [j for j in grow if j != large]
        hists = {}
        if direct:
            hists = dict(zip(direct, self.backend.histograms(segments[direct], pairs[direct], first_order)))
        if small in hists and nodes[small].pair == parent.pair:
            smaller = hists[small]
        else:  # the smaller child under its parent's pair
            smaller = self.backend.histograms(segments[[small]], np.array([parent.pair], dtype=np.int64),
                                              first_order)[0]
        hists[large] = derived_histogram(parent.hist, smaller)
        return np.stack([hists[j] for j in grow])

    def grow(self, params: GrowerParams | None = None, sample: np.ndarray | None = None
             ) -> tuple[Tree, np.ndarray, np.ndarray]:
        """Grow a tree (with ``params`` in place of the grower's own, if given), on the rows
        ``sample`` (increasing row ids; subsample's) or on every row.

        Returns
        -------
        tree : Tree
        leaf_segments : ndarray of shape (n_leaves, 2), int64
            [start, stop) of each leaf in the backend's row partition.
        leaf_ids : ndarray of shape (n_leaves,), int64
            The node id of each leaf segment.
        """
        if params is not None:
            self.params = params
        p = self.params
        self.backend.reset_partition(sample)
        n_root = self.n_rows if sample is None else len(sample)
        self.nodes: list[_Node] = [_Node(0, n_root, (0, 1), np.zeros(3))]
        self.heap: list = []
        self._evaluate([0], can_grow=p.max_leaves > 1 and self._below_max_depth(0))
        n_leaves = 1
        while n_leaves < p.max_leaves and self.heap:
            _, node_id = heapq.heappop(self.heap)
            node = self.nodes[node_id]
            _, feature, bin_, missing_left = node.split
            n_left = self.backend.partition((node.start, node.stop), feature, bin_, missing_left)
            middle = node.start + n_left
            left_id, right_id = len(self.nodes), len(self.nodes) + 1
            self.nodes.append(_Node(node.start, middle, (0, 1), np.zeros(3), depth=node.depth + 1))
            self.nodes.append(_Node(middle, node.stop, (0, 1), np.zeros(3), depth=node.depth + 1))
            node.children = (left_id, right_id)
            n_leaves += 1
            can_grow = n_leaves < p.max_leaves and self._below_max_depth(node.depth + 1)
            self._evaluate([left_id, right_id], can_grow=can_grow, parent=node)
        return self._finish()

    def _below_max_depth(self, depth: int) -> bool:
        """Whether nodes at ``depth`` may be split (max_depth None: no limit)."""
        return self.params.max_depth is None or depth < self.params.max_depth

    def _finish(self):
        nodes = self.nodes
        n = len(nodes)
        feature = np.full(n, -1, np.int32)
        bin_ = np.full(n, -1, np.int32)
        missing_left = np.zeros(n, bool)
        left = np.full(n, -1, np.int32)
        right = np.full(n, -1, np.int32)
        gain = np.zeros(n)
        for j, node in enumerate(nodes):
            if node.children is not None:
                gain[j], feature[j], bin_[j], missing_left[j] = node.split
                left[j], right[j] = node.children
        pairs = np.array([node.pair for node in nodes])
        if self.params.first_order:
            # the histograms summed weights, not Hessians: the values need the Hessian sums
            sums = self.backend.node_sums(np.array([[node.start, node.stop] for node in nodes]), pairs)
        else:
            sums = np.array([node.sums for node in nodes])
        if self.params.vector and self.params.edge:
            # AdaBoost.MH's Hamming tree: every node votes v = sign of its class-wise edges
            # (eq 12; a tie votes +1), scaled by the tree's alpha (eq 11) from its leaves' edge
            K = sums.shape[1] - 1
            votes = np.where(sums[:, :K] >= 0.0, 1.0, -1.0)
            leaves = np.array([node.children is None for node in nodes])
            if self.params.factorized and n == 3:  # the stump: one vote vector v, the sides vote v, -v
                v = np.where(sums[1, :K] - sums[2, :K] >= 0.0, 1.0, -1.0)
                votes[1], votes[2] = v, -v
                self.edge, alpha = losses.hamming_tree_alpha(sums[1, :K] - sums[2, :K])
            else:
                self.edge, alpha = losses.hamming_tree_alpha(sums[leaves, :K])
            vector = alpha * votes
            sums = np.stack([np.zeros(n), np.ones(n), sums[:, -1]], axis=1)  # value 0: see vector
        elif self.params.vector:
            K = (sums.shape[1] - 1) // 2
            vector = losses.node_value(sums[:, :K], sums[:, K:2 * K], self.params.leaf_clip)
            sums = np.stack([np.zeros(n), np.ones(n), sums[:, -1]], axis=1)  # value 0: see vector
        tree = make_tree(feature, bin_, missing_left, left, right, pairs, sums, gain, self.bin_edge,
                         self.params.leaf_clip, self.params.value_scale)
        if self.params.vector:
            tree.vector = vector
        leaf_ids = np.flatnonzero(tree.is_leaf)
        segments = np.array([[nodes[j].start, nodes[j].stop] for j in leaf_ids], dtype=np.int64)
        return tree, segments, leaf_ids


def make_tree(feature, bin_, missing_left, left, right, pair, sums, gain, bin_edge, leaf_clip,
              value_scale=1.0) -> Tree:
    """A Tree from per-node arrays (sums: (n_nodes, 3) channel totals); values by eq (27)."""
    feature = np.asarray(feature, np.int32)
    threshold = split_thresholds(feature, np.asarray(bin_), np.flatnonzero(feature >= 0), bin_edge)
    return Tree(
        feature=feature,
        bin=np.asarray(bin_, np.int32),
        threshold=threshold,
        missing_left=np.asarray(missing_left, bool),
        left=np.asarray(left, np.int32),
        right=np.asarray(right, np.int32),
        pair=np.asarray(pair, np.int32),
        value=losses.node_value(sums[:, GRAD], sums[:, HESS], leaf_clip, value_scale),
        n_samples=sums[:, COUNT].astype(np.int64),
        gain=np.asarray(gain, np.float64),
    )


def split_thresholds(feature, bin_, splits, bin_edge):
    """The nodes' raw thresholds: bin_edge of the split nodes' (feature, bin) at their ids
    ``splits``, NaN at the leaves; one bin_edge call a tree (it takes arrays: see TreeGrower)."""
    threshold = np.full(feature.shape[0], np.nan)
    if splits.size:
        threshold[splits] = bin_edge(feature[splits], bin_[splits])
    return threshold
