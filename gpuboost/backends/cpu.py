"""The compiled CPU backend: the NumPy reference's stages as numba kernels.

Every stage of ``Backend`` is here (so that the tests hold each one to its NumPy twin), and
``grow_tree`` grows a whole tree in one compiled call, which is what training uses. numba is
imported when this module is, which ``gpuboost`` does only when a model is fitted on the CPU.
Kernels are compiled on first use and cached on disk (numba ``cache=True``), so the cost is
paid once per machine.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _numba_cpu as kernels
from .base import N_CHANNELS, Backend, SplitBatch

__all__ = ["CpuBackend"]


class CpuBackend(Backend):
    """numba kernels for every stage, and the whole tree in one call."""

    name = "cpu"

    def __init__(self, codes, y, sample_weight, n_classes, n_bins, missing_code, n_threads=1):
        codes = np.asarray(codes)
        self.codes = np.ascontiguousarray(np.where(codes == missing_code, n_bins, codes).astype(codes.dtype))
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.weighted = sample_weight is not None
        n = self.codes.shape[0]
        self.weight = np.ascontiguousarray(sample_weight, dtype=np.float64) if self.weighted else np.ones(n)
        self.sample_weight = self.weight if self.weighted else None
        self.n_classes = int(n_classes)
        self.n_codes = int(n_bins) + 1
        self.rows = np.arange(n, dtype=np.int64)
        self.p = np.empty((n, self.n_classes))
        self.pc = np.empty((n, self.n_classes))
        self._exponentials = np.empty((n, self.n_classes))
        self._scratch = np.empty(n, dtype=np.int64)
        self._gh = np.empty((n, 2))
        self.n_threads = max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
        K = self.n_classes
        self._G, self._Hd, self._C = np.empty(K), np.empty(K), np.empty(K)

    def set_scores(self, F):
        F = np.ascontiguousarray(F, dtype=np.float64)
        E = self._exponentials
        kernels.shifted_scores(F, E)
        np.exp(E, out=E)  # NumPy's vectorised exp: several times faster than a scalar one
        return float(kernels.softmax_from_exponentials(F, E, self.y, self.weight, self.weighted, self.p, self.pc))

    def reset_partition(self):
        self.rows[:] = np.arange(self.rows.shape[0])

    def select_pairs(self, segments, rule):
        pairs = np.empty((len(segments), 2), dtype=np.int64)
        for j, (start, stop) in enumerate(segments):
            pairs[j] = kernels.node_pair(self.rows, int(start), int(stop), self.p, self.pc, self.y, self.weight,
                                         self.weighted, rule == "eq32", self._G, self._Hd, self._C, self.n_threads)
        return pairs

    def node_sums(self, segments, pairs):
        sums = np.empty((len(segments), N_CHANNELS))
        for j, ((start, stop), (r, s)) in enumerate(zip(segments, pairs)):
            kernels.node_sums(self.rows, int(start), int(stop), int(r), int(s), self.p, self.pc, self.y,
                              self.weight, self.weighted, sums[j])
        return sums

    def histograms(self, segments, pairs, first_order=False):
        hists = np.empty((len(segments), self.codes.shape[1], self.n_codes, N_CHANNELS))
        for j, ((start, stop), (r, s)) in enumerate(zip(segments, pairs)):
            kernels.node_histogram(self.rows, int(start), int(stop), int(r), int(s), self.codes, self.p, self.pc,
                                   self.y, self.weight, self.weighted, bool(first_order), hists[j], self._gh,
                                   self.n_threads)
        return hists

    def find_splits(self, hists, min_samples_leaf):
        n = hists.shape[0]
        out = SplitBatch(gain=np.empty(n), feature=np.empty(n, np.int64), bin=np.empty(n, np.int64),
                         missing_left=np.empty(n, bool), sums=np.empty((n, N_CHANNELS)))
        prefix, suffix = np.empty((self.n_codes, 3)), np.empty((self.n_codes, 3))
        cand_gain = np.empty(2 * hists.shape[1] * self.n_codes)
        cand_at = np.empty(cand_gain.shape[0], np.int64)
        for j in range(n):
            found = kernels.best_split(np.ascontiguousarray(hists[j]), int(min_samples_leaf), out.sums[j], prefix,
                                       suffix, cand_gain, cand_at)
            out.gain[j], out.feature[j], out.bin[j], out.missing_left[j] = found
        return out

    def partition(self, segment, feature, bin, missing_left):
        return int(kernels.partition(self.rows, int(segment[0]), int(segment[1]), self.codes, int(feature),
                                     int(bin), bool(missing_left), self.n_codes - 1, self._scratch))

    def update_scores(self, F, segments, deltas):
        segments = np.asarray(segments, dtype=np.int64)
        kernels.update_scores(F, self.rows, np.ascontiguousarray(segments[:, 0]), np.ascontiguousarray(segments[:, 1]),
                              np.ascontiguousarray(deltas, dtype=np.float64))

    @staticmethod
    def tree_leaves(tree, codes, missing_code):
        out = np.empty(codes.shape[0], dtype=np.int64)
        kernels.apply_tree(np.ascontiguousarray(codes), tree.feature, tree.bin, tree.missing_left, tree.left,
                           tree.right, int(missing_code), out)
        return out

    def grow_tree(self, params, bin_edge):
        """Grow a tree in one compiled call; returns (tree, leaf_segments, leaf_ids) as the grower."""
        from ..grower import make_tree

        previous = numba.get_num_threads()
        numba.set_num_threads(self.n_threads)
        try:
            (n_nodes, start, stop, pair, sums, gain, feature, bin_, missing_left, left, right) = kernels.grow_tree(
                self.codes, self.y, self.weight, self.weighted, self.p, self.pc, self.rows, self.n_codes,
                int(params.max_leaves), int(params.min_samples_leaf), params.pair_rule == "eq32", self.n_threads,
                -1 if params.fixed_pair is None else int(params.fixed_pair[0]),
                -1 if params.fixed_pair is None else int(params.fixed_pair[1]),
                bool(params.first_order),
            )
        finally:
            numba.set_num_threads(previous)
        tree = make_tree(feature, bin_, missing_left, left, right, pair, sums, gain, bin_edge, params.leaf_clip,
                         params.value_scale)
        leaf_ids = np.flatnonzero(tree.is_leaf)
        return tree, np.stack([start[leaf_ids], stop[leaf_ids]], axis=1), leaf_ids
