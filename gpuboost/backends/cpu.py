"""The compiled CPU backend: the NumPy reference's stages as numba kernels.

Every stage of ``Backend`` is here (so that the tests hold each one to its NumPy twin), and
``grow_tree`` grows a whole tree in one compiled call, which is what training uses. numba is
imported when this module is, which ``gpuboost`` does only when a model is fitted on the CPU.
Kernels are compiled on first use and cached on disk (numba ``cache=True``), so the cost is
paid once per machine, or per user of a read-only install (numba reads a cache only where it can
write it; ``gpuboost._numba_cache``), unless NUMBA_CACHE_DIR names a folder they share.
"""

from __future__ import annotations

import functools
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from typing import NamedTuple

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher

from ..grower import split_thresholds
from ..tree import Tree
from . import _numba_cpu
from .base import (COUNT, N_CHANNELS, Backend, SplitBatch, all_features, label_losses, root_rows, sparse_features,
                   training_codes)
from .numpy import NumpyBackend, fold_default_bins, sum_of_halves

__all__ = ["CpuBackend", "CpuVectorBackend"]


#: numba's workqueue threading layer (its fallback where it finds neither OpenMP nor TBB: numba
#: from PyPI on macOS, for one) is not thread-safe: numba terminates the process when two Python
#: threads run parallel kernels at once (two models fitted in threads, say). Until numba's layer is
#: known to be OpenMP or TBB, which are safe, the compiled kernels run one Python thread at a time:
#: each call holds this lock.
_SERIAL = threading.RLock()
_SAFE_LAYERS = ("omp", "tbb")
_layer_safe = False


def serial_kernels():
    """The context a compiled kernel is called in: the lock above where numba's threading layer
    is workqueue, or not known yet (no parallel kernel has run); nothing otherwise."""
    global _layer_safe
    if not _layer_safe:
        try:
            _layer_safe = numba.threading_layer() in _SAFE_LAYERS
        except ValueError:  # no parallel kernel has run: numba has not chosen its layer
            pass
    return nullcontext() if _layer_safe else _SERIAL


class _SerialKernels:
    """A kernels module whose compiled functions are called in serial_kernels(); its other
    names (constants, helpers) as they are. Setting a name sets the module's."""

    def __init__(self, module):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_wrapped", {})

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if not isinstance(value, Dispatcher) or _layer_safe:
            return value
        wrapped = self._wrapped.get(value)
        if wrapped is None:
            @functools.wraps(value)
            def wrapped(*args, _kernel=value, **kwargs):
                with serial_kernels():
                    return _kernel(*args, **kwargs)

            self._wrapped[value] = wrapped
        return wrapped

    def __setattr__(self, name, value):
        setattr(self._module, name, value)


kernels = _SerialKernels(_numba_cpu)


#: Rows times trees from which add_packed walks on numba's threads: below, one thread walks them
#: all (about a millisecond), and no parallel region waits for a second thread that may not
#: get a CPU soon (beside a busy process: see kernels.add_trees).
PARALLEL_WALKS = 1 << 15


@contextmanager
def _threads(n):
    """numba's parallel kernels run on n threads inside the block; the caller's count after.
    (Setting the count costs microseconds, a few times a tree: it is left alone when equal.)"""
    previous = numba.get_num_threads()
    if previous == n:
        yield
        return
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _iterations_at_once(n_threads):
    """Whether numba's threading layer runs the iterations of a two-iteration parallel region
    on two threads at once, so that they may wait for each other (kernels._barrier): OpenMP
    and workqueue give each thread its share; TBB makes tasks of them, which one thread may run
    in turn (a wait would never end). grow_tree checks the region itself too (_concurrent)."""
    with _threads(n_threads):
        kernels._concurrent()  # a parallel region: numba has chosen its threading layer by now
    return numba.threading_layer() in ("omp", "workqueue")


def machine_code_cached(dispatcher) -> bool | None:
    """Whether a ``cache=True`` kernel has this machine's code, compiled in this process or in
    numba's cache for its current source; None where that cannot be told (numba's cache index
    is not public: another numba version)."""
    try:
        if dispatcher.signatures:
            return True
        magic = dispatcher.targetctx.codegen().magic_tuple()
        return any(key[1] == magic for key in dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - unknown: say nothing
        return None


def kernels_compiled(vector: bool = False) -> bool | None:
    """machine_code_cached of the kernels a fit's trees start with (grow_tree, and grow_rounds,
    which links grow_tree's code into its own, where the backend calls it: libm_matches_numpy;
    the vector trees' vector_best_split): False before a machine's first fit, which compiles
    the kernels."""
    if vector:
        kernels_ = (_numba_cpu.vector_best_split,)
    else:
        kernels_ = (_numba_cpu.grow_tree,) + ((_numba_cpu.grow_rounds,) if libm_matches_numpy() else ())
    states = [machine_code_cached(k) for k in kernels_]
    return False if False in states else None if None in states else True


def compiled_measures_usable() -> bool:
    """Whether boosting's eval sets are measured by kernels.eval_measures: where the compiled
    backend is the one in use (not GPUBOOST_CPU_BACKEND=numpy, nor a process forked after
    OpenMP started) and its exp and log1p give NumPy's values."""
    from . import backend_class

    return backend_class("cpu") is CpuBackend and libm_matches_numpy()


@functools.cache
def libm_matches_numpy():
    """Whether NumPy's float64 exp and log1p give the C library's values (those numba's
    math.exp and math.log1p call), bit for bit, on arguments of the scoring's ranges (exp: F
    minus its shift, from underflow to SHIFT_STEP; log1p: the others' exponentials over the
    top's, 0 to K - 1, and tiny ones). True where NumPy has no SIMD exp of its own for the
    CPU (without AVX-512 it loops over the C library's, as the kernels would): the compiled
    scoring then calls them itself, on every thread, and skips two passes of one thread
    (letter, 16000 rows: 0.26 ms of exp and 0.13 of log1p a tree, 2026-11-27). False where
    any value differs: NumPy's then, as the reference's."""
    rng = np.random.default_rng(20261127)
    x = np.concatenate([np.linspace(-746.0, 8.0, 1 << 14), rng.uniform(-40.0, 8.0, 1 << 14),
                        -rng.exponential(1.0, 1 << 12), -np.geomspace(1e-300, 1.0, 1 << 10), [0.0, -0.0]])
    z = np.concatenate([rng.uniform(0.0, 30.0, 1 << 14), np.geomspace(1e-320, 1e3, 1 << 14),
                        rng.exponential(0.1, 1 << 12), [0.0]])
    e, lp = np.empty_like(x), np.empty_like(z)
    kernels.libm_exp_log1p(x, e, z, lp)
    return bool(np.array_equal(e, np.exp(x)) and np.array_equal(lp, np.log1p(z)))


class CpuBackend(Backend):
    """numba kernels for every stage, and the whole tree in one call."""

    name = "cpu"

    def __init__(self, codes, y, sample_weight, n_classes, n_bins, missing_code, n_threads=1):
        self.codes = training_codes(codes, n_bins, missing_code)
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.weighted = sample_weight is not None
        n = self.codes.shape[0]
        self.weight = np.ascontiguousarray(sample_weight, dtype=np.float64) if self.weighted else np.ones(n)
        self.sample_weight = self.weight if self.weighted else None
        self.n_classes = int(n_classes)
        self.n_codes = int(n_bins) + 1
        # the sparse features (their default bins folded, see base.sparse_features), their codes
        # other than the defaults (cells), the others (wide), and the columns for the partition
        self.sparse = sparse_features(self.codes, self.n_codes)
        self.wide, self.cells = sparse_cells(self.codes, self.sparse, self.n_codes)
        self.columns = feature_columns(self.codes)
        self.rows = np.arange(n, dtype=np.int64)
        self._every_feature = np.ones(self.codes.shape[1], dtype=np.bool_)  # (the kernels only read it)
        self.p = np.empty((n, self.n_classes))
        # 1 - p where it loses digits: at each row's first largest score (top), computed from the
        # other exponentials; elsewhere the kernels compute 1 - p where they read it (see pc)
        self.pct = np.empty(n)
        self.top = np.empty(n, dtype=np.int64)
        # set_scores keeps E = exp(F - c) (c: losses.exponent_shift) and the F it came from, and
        # recomputes only the exponentials whose argument changed (kernels.exponent_arguments)
        self._exponentials = np.empty((n, self.n_classes))
        self._F_last = np.empty((n, self.n_classes))
        self._last_kept = False  # _F_last is the last scored F (update_and_score leaves it stale)
        self._row_max = np.empty(n)
        self._scored = False
        self._scored_F = None  # the array set_scores last scored (update_and_score's fast path)
        self._leaf_of = np.empty(n, dtype=np.int64)
        self._exp_values = np.empty(n * self.n_classes)
        self._exp_at = np.empty(n * self.n_classes, dtype=np.int64)
        self._rest = np.empty(n)
        self._margin = np.empty(n)
        self._scratch = np.empty(n, dtype=np.int64)
        self._gh = np.empty((n, 2))
        self.n_threads = max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
        self._exp_counts = np.zeros(self.n_threads, dtype=np.int64)
        K = self.n_classes
        self._G, self._Hd, self._C = np.empty(K), np.empty(K), np.empty(K)
        # the class sums of p's row blocks, made with p by the softmax (for the next root)
        self._root_sums = np.zeros((self.n_threads if K <= kernels.ROOT_SUMS_CLASSES else 0, 3, K))
        self._root_blocks = 0
        self._may_wait = self.n_threads > 1 and _iterations_at_once(self.n_threads)
        # the scoring calls exp and log1p in its kernel, on every thread, where they are NumPy's
        self.libm = libm_matches_numpy()
        self._sample = self._sample_order = None  # reset_partition's last row sample, and its row order
        self._tree_seconds = None  # the last grow_rounds call's time a tree

    def set_scores(self, F):
        return self._score(F, None)

    def threads(self):
        """The context in which numba's kernels run on this backend's threads (n_threads)."""
        return _threads(self.n_threads)

    @property
    def pc(self):
        """1 - p of every row and class, as the reference's pc: pct at each row's top class, 1 - p
        elsewhere (made on demand; the kernels read p, pct and top)."""
        pc = 1.0 - self.p
        pc[np.arange(pc.shape[0]), self.top] = self.pct
        return pc

    def class_losses(self):
        """Backend.class_losses from each row's own class's p and 1 - p alone (pc, an n x K
        array, is made on demand)."""
        rows = np.arange(self.y.shape[0])
        p_y = self.p[rows, self.y]
        pc_y = np.where(self.y == self.top, self.pct, 1.0 - p_y)
        return label_losses(p_y, pc_y, self.y, self.sample_weight, self.n_classes)

    def update_and_score(self, F, segments, deltas):
        """update_scores then set_scores, the same results, in fewer passes: the scores that
        change are known from the leaves, so F is not compared with the last scored one. The
        boosting loop calls it with the F it scored last, unchanged since; any other F takes
        the two calls."""
        if not self._scored or F is not self._scored_F or not F.flags.c_contiguous or F.dtype != np.float64:
            self.update_scores(F, segments, deltas)
            return self.set_scores(F)
        return self._score(F, (np.asarray(segments, dtype=np.int64), np.ascontiguousarray(deltas, dtype=np.float64)))

    def _score(self, F, update):
        F = np.ascontiguousarray(F, dtype=np.float64)
        n, K = F.shape
        counts = self._score_blocks(F)
        with _threads(self.n_threads):
            if update is None:
                kernels.exponent_arguments(F, self._F_last, self._row_max, self.top, self._scored and self._last_kept,
                                           self._exp_values, self._exp_at, counts, self.y, self._margin)
                self._last_kept = True
            else:
                segments, deltas = update
                kernels.update_and_arguments(F, self.rows, np.ascontiguousarray(segments[:, 0]),
                                             np.ascontiguousarray(segments[:, 1]), deltas, self._leaf_of,
                                             self._row_max, self.top, self._exp_values, self._exp_at, counts, self.y,
                                             self._margin)
                self._last_kept = False  # _F_last is stale: the next set_scores rescores every row
            if not self.libm:
                for block, count in enumerate(counts):
                    offset = block * n // len(counts) * K
                    values = self._exp_values[offset:offset + count]
                    np.exp(values, out=values)  # NumPy's own exp, vectorised (see libm_matches_numpy)
            kernels.softmax_from_exponentials(self._exponentials, self._exp_values, self._exp_at, counts, self.p,
                                              self.pct, self.top, self._rest, self.y, self.weight, self.weighted,
                                              self._root_sums, self._margin, self.libm)
            # the next tree's root class sums, from this p (softmax_from_exponentials)
            self._root_blocks = len(counts) if len(self._root_sums) else 0
        self._scored = True
        self._scored_F = F
        # the loss as losses.softmax_with_loss computes it: margin + log1p(rest), NumPy's sum
        per_sample = self._margin
        if not self.libm:  # (else softmax_from_exponentials made the terms)
            per_sample += np.log1p(self._rest, out=self._rest)
            if self.weighted:
                per_sample *= self.weight
        return float(per_sample.sum())

    def _score_blocks(self, F):
        """The scoring's counts of row blocks: one per thread, where the rows are many enough to
        pay for a second thread."""
        return self._exp_counts[:self.n_threads if F.size >= kernels.PARALLEL_SCORES else 1]

    def reset_partition(self, sample=None):
        if sample is None:
            self.rows[:] = root_rows(self.rows.shape[0], None, np.int64)
            return
        if sample is not self._sample:  # a sample's row order, made once (MART's K trees share it)
            self._sample, self._sample_order = sample, root_rows(self.rows.shape[0], sample, np.int64)
        self.rows[:] = self._sample_order

    def select_pairs(self, segments, rule):
        pairs = np.empty((len(segments), 2), dtype=np.int64)
        for j, (start, stop) in enumerate(segments):
            pairs[j] = kernels.node_pair(self.rows, int(start), int(stop), self.p, self.pct, self.top, self.y,
                                         self.weight, self.weighted, rule == "eq32", self._G, self._Hd, self._C)
        return pairs

    def node_sums(self, segments, pairs):
        sums = np.empty((len(segments), N_CHANNELS))
        for j, ((start, stop), (r, s)) in enumerate(zip(segments, pairs)):
            kernels.node_sums(self.rows, int(start), int(stop), int(r), int(s), self.p, self.pct, self.top, self.y,
                              self.weight, self.weighted, sums[j])
        return sums

    def histograms(self, segments, pairs, first_order=False):
        hists = np.empty((len(segments), self.codes.shape[1], self.n_codes, N_CHANNELS))
        for j, ((start, stop), (r, s)) in enumerate(zip(segments, pairs)):
            kernels.node_histogram(self.rows, int(start), int(stop), int(r), int(s), self.codes, self.sparse, self.p,
                                   self.pct, self.top, self.y, self.weight, self.weighted, bool(first_order), hists[j],
                                   self._gh, self.n_threads)
        return hists

    def find_splits(self, hists, min_samples_leaf, min_child_weight=0.0, features=None):
        allowed = all_features(hists.shape[1], features)
        n = hists.shape[0]
        out = SplitBatch(gain=np.empty(n), feature=np.empty(n, np.int64), bin=np.empty(n, np.int64),
                         missing_left=np.empty(n, bool), sums=np.empty((n, N_CHANNELS)))
        prefix, suffix = np.empty((self.n_codes, 3)), np.empty((self.n_codes, 3))
        cand_gain = np.empty(2 * hists.shape[1] * self.n_codes)
        for j in range(n):
            hist = np.ascontiguousarray(hists[j])
            found = kernels.best_split(hist, hist, False, int(min_samples_leaf), float(min_child_weight), allowed,
                                       out.sums[j], prefix, suffix, cand_gain)
            out.gain[j], out.feature[j], out.bin[j], out.missing_left[j] = found
        return out

    def partition(self, segment, feature, bin, missing_left):
        return int(kernels.partition(self.rows, int(segment[0]), int(segment[1]), self.codes, self.columns,
                                     int(feature), int(bin), bool(missing_left), self.n_codes - 1, self._scratch))

    def leaf_steps(self, tree, leaf_ids, learning_rate):
        """Backend.leaf_steps; for a tree whose leaves all have a pair (AOSO's, ABC's), in one
        compiled call (kernels.pair_steps: the same values as node_vectors' times the rate,
        without its NumPy calls, about 7 us a tree)."""
        if tree.vector is None and len(leaf_ids):
            out = np.empty((len(leaf_ids), self.n_classes))
            if kernels.pair_steps(tree.pair, tree.value, np.asarray(leaf_ids, dtype=np.int64), float(learning_rate),
                                  out):
                return out
        return super().leaf_steps(tree, leaf_ids, learning_rate)

    def spread_leaves(self, tree, segments, leaf_ids):
        """Backend.spread_leaves in one compiled pass (kernels.spread_rows: the same rows)."""
        segments = np.asarray(segments, dtype=np.int64)
        leaf_ids = np.asarray(leaf_ids, dtype=np.int64)
        out = np.empty((len(leaf_ids), 2), dtype=np.int64)
        kernels.spread_rows(self.rows, int(segments[:, 1].max()), np.ascontiguousarray(segments[:, 0]),
                            np.ascontiguousarray(segments[:, 1]), leaf_ids, self.codes, tree.feature, tree.bin,
                            tree.missing_left, tree.left, tree.right, self.missing_code, self._scratch, self._leaf_of,
                            out)
        return out

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

    @classmethod
    def add_trees(cls, F, trees, codes, missing_code, learning_rate):
        """Backend.add_trees in one compiled call over the whole ensemble (the same sums)."""
        trees = list(trees)
        if trees:
            cls.add_packed(F, pack_trees(trees, F.shape[1], learning_rate), codes, missing_code)

    @staticmethod
    def pack_trees(trees, n_classes, learning_rate):
        return pack_trees(trees, n_classes, learning_rate)

    @staticmethod
    def add_packed(F, packed, codes, missing_code):
        """add_trees of the trees that pack_trees packed (for the n_classes and learning rate
        it was given), on numba's threads where the rows times the trees reach PARALLEL_WALKS,
        else on the calling thread (the same sums)."""
        out = np.ascontiguousarray(F, dtype=np.float64)
        args = (out, np.ascontiguousarray(codes), int(missing_code), packed.feature, packed.bin, packed.missing_left,
                packed.left, packed.right, packed.depth, packed.leaf_start, packed.classes, packed.steps,
                packed.node_offset)
        n_threads = numba.get_num_threads()
        if n_threads > 1 and out.shape[0] * (len(packed.node_offset) - 1) >= PARALLEL_WALKS:
            kernels.add_trees(*args, n_threads)
        else:
            kernels.add_trees_serial(*args)
        if out is not F:
            F[...] = out

    def grow_tree(self, params, bin_edge, sample=None):
        """Grow a tree in one compiled call; returns (tree, leaf_segments, leaf_ids) as the grower
        (on the rows ``sample`` as TreeGrower.grow: the root's class sums from them, not the
        softmax's of every row)."""
        arguments = self._tree_arguments(params, sample)
        with _threads(self.n_threads):
            grown = kernels.grow_tree(*arguments)
        return _adopt_grown(grown, bin_edge)

    def grow_and_score(self, F, params, bin_edge, learning_rate):
        """A boosting iteration of one tree on every row: grow_tree, leaf_steps and
        update_and_score, with the same results; returns (tree, loss). In one compiled call
        (kernels.grow_rounds, one round) where update_and_score's fast path applies (F the
        array scored last, unchanged since) and the kernels call the C library's exp (libm);
        else the three calls."""
        if not self._scores_in_kernel(F):
            tree, segments, leaf_ids = self.grow_tree(params, bin_edge)
            return tree, self.update_and_score(F, segments, self.leaf_steps(tree, leaf_ids, learning_rate))
        trees, losses = self._rounds(F, params, bin_edge, learning_rate, 1, -np.inf, None)
        return trees[0], losses[0]

    def grow_rounds(self, F, params, bin_edge, learning_rate, n_rounds, tol, features=None):
        """Up to n_rounds boosting iterations of one tree each on every row, as grow_and_score
        called for each in turn, stopping after a tree whose loss is <= tol or not finite (where
        the boosting loop stops or raises); features: the trees' feature masks, a row each, or
        None (params.features for all). Returns (trees, losses), at least one tree.

        In one compiled call (kernels.grow_rounds) where grow_and_score would make one: the
        Python between trees, on caches the kernels had emptied, cost 0.37 ms a tree on
        pendigits and 0.53 ms on letter (2026-11-28). A call grows at most rounds_at_once()
        trees, so that a KeyboardInterrupt is answered within about ROUND_SECONDS."""
        n_rounds = max(1, min(int(n_rounds), self.rounds_at_once()))
        if not self._scores_in_kernel(F):
            trees, losses = [], []
            for t in range(n_rounds):
                tree, loss = self.grow_and_score(F, params if features is None else replace(
                    params, features=features[t]), bin_edge, learning_rate)
                trees.append(tree)
                losses.append(loss)
                if loss <= tol or not np.isfinite(loss):
                    break
            return trees, losses
        return self._rounds(F, params, bin_edge, learning_rate, n_rounds, tol, features)

    def rounds_at_once(self):
        """How many trees grow_rounds grows in one call: as many as take about ROUND_SECONDS at
        the last call's time a tree (one at the first call), at most MAX_ROUNDS. The trees do
        not depend on it."""
        if self._tree_seconds is None:
            return 1
        return max(1, min(MAX_ROUNDS, int(ROUND_SECONDS / max(self._tree_seconds, 1e-9))))

    def _scores_in_kernel(self, F):
        """Whether the scoring after a tree can run inside kernels.grow_rounds: update_and_score's
        fast path (F the array scored last, unchanged since) with the C library's exp."""
        return (self.libm and self._scored and F is self._scored_F and F.flags.c_contiguous
                and F.dtype == np.float64)

    def _rounds(self, F, params, bin_edge, learning_rate, n_rounds, tol, features):
        """grow_rounds' compiled call (_scores_in_kernel(F) holds)."""
        D = self.codes.shape[1]
        allowed = (all_features(D, params.features)[None] if features is None
                   else np.ascontiguousarray(features[:n_rounds], dtype=np.bool_))
        if allowed.shape[1:] != (D,):
            raise ValueError(f"a feature mask must have one entry per feature ({D}), got shape {allowed.shape[1:]}")
        arguments = self._tree_arguments(params, None, allowed)
        counts = self._score_blocks(F)
        max_nodes = 2 * int(params.max_leaves) - 1
        n_nodes = np.empty(n_rounds, np.int64)
        pair = np.empty((n_rounds, max_nodes, 2), np.int32)
        value, gain = np.empty((n_rounds, max_nodes)), np.empty((n_rounds, max_nodes))
        n_samples = np.empty((n_rounds, max_nodes), np.int64)
        feature, bin_, left, right = (np.empty((n_rounds, max_nodes), np.int32) for _ in range(4))
        missing_left = np.empty((n_rounds, max_nodes), np.bool_)
        losses = np.empty(n_rounds)
        # as _score after update_and_arguments (before the call: F and E change in it, and a
        # KeyboardInterrupt can come as it returns)
        self._last_kept = False
        began = time.perf_counter()
        with _threads(self.n_threads):
            done, scored, segments, leaf_ids = kernels.grow_rounds(
                *arguments, float(learning_rate), F, self._exponentials, self._leaf_of, self._row_max,
                self._exp_values, self._exp_at, counts, self._margin, self._rest, float(tol), n_nodes, pair, value,
                n_samples, gain, feature, bin_, missing_left, left, right, losses)
        self._tree_seconds = (time.perf_counter() - began) / done
        self._root_blocks = len(counts) if len(self._root_sums) else 0
        # the split nodes' thresholds, every tree's in one lookup (grower.split_thresholds')
        threshold = np.full((done, max_nodes), np.nan)
        splits = (np.arange(max_nodes) < n_nodes[:done, None]) & (left[:done] >= 0)
        if splits.any():
            threshold[splits] = bin_edge(feature[:done][splits], bin_[:done][splits])
        trees = []
        for t in range(done):
            m = n_nodes[t]
            trees.append(Tree.adopt(feature[t, :m].copy(), bin_[t, :m].copy(), threshold[t, :m].copy(),
                                    missing_left[t, :m].copy(), left[t, :m].copy(), right[t, :m].copy(),
                                    pair[t, :m].copy(), value[t, :m].copy(), n_samples[t, :m].copy(),
                                    gain[t, :m].copy()))
        losses = losses[:done].tolist()
        if not scored:  # its leaves do not all have a pair: F and p as before it
            losses[-1] = self.update_and_score(F, segments, self.leaf_steps(trees[-1], leaf_ids, learning_rate))
        return trees, losses

    def _tree_arguments(self, params, sample, allowed=None):
        """kernels.grow_tree's arguments for a tree of ``params`` on the rows ``sample`` (or all);
        allowed: the features it may split on, if not params.features (grow_rounds: a row a tree)."""
        if allowed is None:
            allowed = (self._every_feature if params.features is None
                       else all_features(self.codes.shape[1], params.features))
        n_root = -1  # every row: the kernel puts them in order
        if sample is not None:
            self.reset_partition(sample)
            n_root = len(sample)
        return (self.codes, self.wide, self.columns, self.sparse, self.cells, self.y, self.weight, self.weighted,
                self.p, self.pct, self.top, self.rows, self.n_codes,
                int(params.max_leaves), int(params.min_samples_leaf), float(params.min_child_weight),
                allowed, params.pair_rule == "eq32", self.n_threads,
                -1 if params.fixed_pair is None else int(params.fixed_pair[0]),
                -1 if params.fixed_pair is None else int(params.fixed_pair[1]),
                bool(params.first_order), self.derives_histograms, float(params.leaf_clip), float(params.value_scale),
                self._root_sums, self._root_blocks if sample is None else 0, self._may_wait, n_root,
                -1 if params.max_depth is None else int(params.max_depth))


def _adopt_grown(grown, bin_edge):
    """(tree, leaf_segments, leaf_ids) from kernels.grow_tree's results: grower.make_tree's
    tree, its values and counts computed by the kernel."""
    (n_nodes, leaf_ids, segments, splits, pair, value, n_samples, gain, feature, bin_, missing_left, left,
     right) = grown
    threshold = split_thresholds(feature, bin_, splits, bin_edge)
    tree = Tree.adopt(feature, bin_, threshold, missing_left, left, right, pair, value, n_samples, gain)
    return tree, segments, leaf_ids


#: grow_rounds grows up to this many trees in one compiled call, as many as take about
#: ROUND_SECONDS (at the time a tree took in the last call): the answer to a KeyboardInterrupt
#: waits for the call
MAX_ROUNDS = 64
ROUND_SECONDS = 0.2


#: The codes' feature-major copy (columns) is made up to this many bytes. It is only a faster
#: path: beyond it the partition reads the row-major codes.
COLUMNS_COPY_BYTES = 1 << 30


def feature_columns(codes):
    """The codes' feature-major copy, shape (D, N), or an empty (0, N) array beyond
    COLUMNS_COPY_BYTES. The partition reads the split feature's column (contiguous: a few cache
    lines where the row-major codes take one a row)."""
    if codes.size * codes.itemsize > COLUMNS_COPY_BYTES:
        return np.zeros((0, codes.shape[0]), codes.dtype)
    return np.ascontiguousarray(codes.T)


def sparse_cells(codes, sparse, n_codes):
    """(wide, cells) for the kernels' histograms: the ids of the features that are not sparse,
    and the sparse features' codes other than their defaults as one int64 array, the row starts
    (N + 1 entries, offsets into the array itself) then the cells, flat bins f * n_codes + code,
    row i's at cells[cells[i]:cells[i + 1]] (feature order)."""
    n = codes.shape[0]
    wide = np.setdiff1d(np.arange(codes.shape[1]), sparse[:, 0]).astype(np.int64)
    if len(sparse) == 0:
        return wide, np.zeros(n + 1, dtype=np.int64)
    features = sparse[:, 0]
    own = codes[:, features]
    rows, which = np.nonzero(own != sparse[:, 1])  # row by row, each row's features in order
    cells = features[which] * n_codes + own[rows, which].astype(np.int64)
    starts = n + 1 + np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    return wide, np.concatenate([starts, cells]).astype(np.int64)


class PackedTrees(NamedTuple):
    """An ensemble as kernels.add_trees walks it: the trees' nodes concatenated (tree t's are
    node_offset[t]:node_offset[t + 1], child ids local to the tree), each leaf its own child
    (kernels._walks), each tree's depth, and the nodes' sparse steps (_sparse_steps)."""

    feature: np.ndarray
    bin: np.ndarray
    missing_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    depth: np.ndarray
    leaf_start: np.ndarray
    classes: np.ndarray
    steps: np.ndarray
    node_offset: np.ndarray


def pack_trees(trees, n_classes, learning_rate) -> PackedTrees:
    """The trees (a non-empty list) packed for CpuBackend.add_packed. Packing costs about as
    much as walking a few hundred rows through the trees, which a prediction of a few rows
    would pay every time: the estimator keeps its ensemble's packing."""
    node_offset = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum([tree.n_nodes for tree in trees], out=node_offset[1:])

    def joined(name, dtype):
        return np.concatenate([getattr(tree, name) for tree in trees]).astype(dtype)

    feature = joined("feature", np.int64)
    left, right, depth = kernels._walks(feature, joined("left", np.int64), joined("right", np.int64), node_offset)
    leaf_start, classes, steps = _sparse_steps(trees, n_classes, learning_rate)
    return PackedTrees(feature, joined("bin", np.int64), joined("missing_left", np.bool_), left, right, depth,
                       leaf_start, classes, steps, node_offset)


def _sparse_steps(trees, n_classes, learning_rate):
    """Every node's step, learning_rate x Tree.node_vectors, as sparse rows (CSR).

    Returns (start, classes, steps): node j (over the concatenated trees) adds steps[q] to
    class classes[q] for q in start[j]:start[j + 1]. Pair nodes (s >= 0) have the two entries
    lr (0 + t) at r and lr (0 - t) at s, scalar nodes (s = -1) one: the values node_vectors
    gives, computed for all trees at once. Other trees (LogitBoost's centred ones, K-LogitBoost's
    vectors) take their dense vectors.
    """
    pair = np.concatenate([tree.pair for tree in trees]).astype(np.int64)
    value = np.concatenate([tree.value for tree in trees])
    if any(tree.vector is not None for tree in trees) or np.any(pair[:, 1] < -1):
        dense = np.concatenate([learning_rate * tree.node_vectors(n_classes) for tree in trees])
        at_node, classes = np.nonzero(dense)
        start = np.zeros(dense.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(at_node, minlength=dense.shape[0]), out=start[1:])
        return start, classes.astype(np.int64), np.ascontiguousarray(dense[at_node, classes])
    paired = pair[:, 1] >= 0
    start = np.zeros(pair.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.where(paired, 2, 1), out=start[1:])
    first = start[:-1]
    classes = np.empty(start[-1], dtype=np.int64)
    steps = np.empty(start[-1])
    classes[first] = pair[:, 0]
    steps[first] = learning_rate * (0.0 + value)
    classes[first[paired] + 1] = pair[paired, 1]
    steps[first[paired] + 1] = learning_rate * (0.0 - value[paired])
    return start, classes, steps


class CpuVectorBackend(NumpyBackend):
    """The NumPy reference backend with its costly stages compiled: what ``device="cpu"``
    trains K-LogitBoost, AdaBoost.MH and multi-label models with (the reference's Python
    grower calls them stage by stage).

    Each compiled stage is the reference's arithmetic in the reference's order, so the models
    are the reference's bit for bit (tests hold every stage to it): histograms sum each bin in
    row order, as NumPy's bincount does (pair histograms by halves from hist_halves_rows rows);
    sums that NumPy computes with its pairwise summation (AdaBoost.MH's sums over classes and
    its weights' total, the multi-label loss) follow that summation (_numpy_sum); exponentials
    and log1p are NumPy's (the exponentials computed on the threads where NumPy's exp is the C
    library's: _exp). Compiled: the vector histograms and their best splits (features in
    blocks, a thread each), AdaBoost.MH's weights, the multi-label softmax, loss, pairs, pair
    channels and node sums, the pair histograms' splits (CpuBackend's kernel), the partition and
    the update of F. K-LogitBoost's link, and original LogitBoost's working response under
    multi-label targets, are the reference's own code.
    """

    name = "cpu-vector"

    def __init__(self, *args, n_threads=1, **kwargs):
        super().__init__(*args, **kwargs)
        self.codes = np.ascontiguousarray(self.codes)
        self.rows = self.rows.astype(np.int64)
        self.n_threads = max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
        self._scratch = np.empty(self.codes.shape[0], dtype=np.int64)
        self.columns = feature_columns(self.codes)  # for the partition (CpuBackend.partition)
        # the vector histograms' sparse features' codes other than their defaults (as CpuBackend's)
        self.wide, self.cells = sparse_cells(self.codes, self.sparse, self.n_codes)
        # the kernels' weight arguments: the row weights, or a placeholder they do not read
        self._weighted = self.weight is not None
        self._w = self.weight if self._weighted else np.ones(1)
        self.libm = libm_matches_numpy()  # NumPy's exp is the C library's: kernels.libm_exp on every thread

    def _exp(self, a):
        """np.exp(a, out=a): NumPy's, or the same values from kernels.libm_exp (libm; a is
        C-contiguous), a block of values a thread from PARALLEL_SCORES values on."""
        if not self.libm:
            return np.exp(a, out=a)
        with _threads(self.n_threads):
            kernels.libm_exp(a, self.n_threads if a.size >= kernels.PARALLEL_SCORES else 1)
        return a

    def set_scores(self, F):
        """AdaBoost.MH: losses.adaboost_weights with its passes compiled (adaboost_arguments, and
        NumPy's pairwise sums as _numpy_sum rounds them), its exponentials NumPy's (_exp): the
        same weights and losses. Multi-label targets: _multilabel_scores. K-LogitBoost: the
        reference's."""
        if self.eta is not None:
            return self._multilabel_scores(F)
        if self.link != "exp":
            return super().set_scores(F)
        F = np.ascontiguousarray(F, dtype=np.float64)
        a = np.empty(F.shape)
        terms = np.empty(F.size)
        top, m = kernels.adaboost_arguments(F, self.Y, self._log_W0, self.W0, a, terms)
        self._exp(a)
        total = kernels._numpy_sum(a.reshape(-1), 0, a.size)
        self.W = np.divide(a, total, out=a)
        self._WY = np.multiply(self.W, self.Y)  # the histograms' channels (_vector_channels')
        with np.errstate(over="ignore"):  # the loss itself may overflow to inf; the weights do not
            loss = float(np.exp(top) * total)
        self.hamming_loss = float(kernels._numpy_sum(terms, 0, m))
        self.p = self.pc = None
        return loss

    def _multilabel_scores(self, F):
        """losses.multilabel_loss with its passes compiled (softmax_arguments, softmax_parts,
        multilabel_losses; NumPy's exponentials, log1p and pairwise sums): the same p, pc and
        loss."""
        F = np.ascontiguousarray(F, dtype=np.float64)
        n, K = F.shape
        n_blocks = self.n_threads if n * K >= kernels.PARALLEL_SCORES else 1  # rows a thread
        top = np.empty(n, np.int64)
        E = np.empty((n, K))
        self.p, self.pc, rest = np.empty((n, K)), np.empty((n, K)), np.empty(n)
        with _threads(self.n_threads):
            kernels.softmax_arguments(F, top, E, n_blocks)
            self._exp(E)
            kernels.softmax_parts(E, top, self.p, self.pc, rest, n_blocks)
        per_sample = np.empty(n)
        kernels.multilabel_losses(F, top, self.eta, np.log1p(rest), self._w, self._weighted, per_sample)
        return float(kernels._numpy_sum(per_sample, 0, n))

    def _histogram(self, idx, values, out):
        """out (zero on entry) += the histogram of the rows idx's channel values and a count."""
        with _threads(self.n_threads):
            kernels.vector_histogram(self.codes, np.ascontiguousarray(idx), np.ascontiguousarray(values, np.float64),
                                     out, min(self.n_threads, self.codes.shape[1]))

    def vector_histograms(self, segments):
        """The reference's vector histograms, each row's channel values computed where it is
        summed (vector_histogram_rows) instead of gathered first."""
        hists = np.empty((len(segments), self.codes.shape[1], self.n_codes, self._vector_width()))  # zeroed there
        single = self.link == "exp"
        A, B = (self._WY, self._WY) if single else (self.g, self.h)
        weighted = not single and self._weighted  # AdaBoost.MH's weights are in W already
        with _threads(self.n_threads):
            for j, segment in enumerate(segments):
                kernels.vector_histogram_rows(self.codes, self._segment(segment), A, B, self._w, weighted, single,
                                              self.wide, self.sparse, self.cells, hists[j],
                                              max(1, min(self.n_threads, len(self.wide))))
        return hists

    def find_vector_splits(self, hists, min_samples_leaf, factorized=False, features=None):
        """The reference's best splits by its vector gains, compiled (vector_best_split)."""
        allowed = all_features(hists.shape[1], features)
        if self.link == "exp":
            mode = kernels.STUMP_GAIN if factorized else kernels.EDGE_GAIN
        else:
            mode = kernels.VECTOR_GAIN
        n, C = hists.shape[0], hists.shape[3]
        out = SplitBatch(gain=np.empty(n), feature=np.empty(n, np.int64), bin=np.empty(n, np.int64),
                         missing_left=np.empty(n, bool), sums=np.empty((n, C)))
        n_blocks = min(self.n_threads, hists.shape[1])  # feature blocks, a thread each
        prefix, suffix = np.empty((n_blocks, self.n_codes, C)), np.empty((n_blocks, self.n_codes, C))
        cand_gain = np.empty(2 * hists.shape[1] * self.n_codes)
        cand_at = np.empty(cand_gain.shape[0], np.int64)
        with _threads(self.n_threads):
            for j in range(n):
                found = kernels.vector_best_split(np.ascontiguousarray(hists[j]), int(min_samples_leaf), mode,
                                                  out.sums[j], prefix, suffix, cand_gain, cand_at, n_blocks, allowed)
                out.gain[j], out.feature[j], out.bin[j], out.missing_left[j] = found
        return out

    def select_pairs(self, segments, rule):
        """Multi-label targets: the reference's pairs, compiled (eta_class_sums, then r, the cross
        sums by halves and s as CpuBackend picks them)."""
        if self.eta is None:
            return super().select_pairs(segments, rule)
        K = self.n_classes
        G, Hd, C = np.empty(K), np.empty(K), np.empty(K)
        rule_eq32 = rule == "eq32"
        pairs = np.empty((len(segments), 2), dtype=np.int64)
        for j, (start, stop) in enumerate(segments):
            kernels.eta_class_sums(self.rows, int(start), int(stop), self.p, self.pc, self.eta, self._w,
                                   self._weighted, G, Hd)
            pairs[j] = kernels.pair_from_class_sums(self.rows, int(start), int(stop), self.p, self._w, self._weighted,
                                                    rule_eq32, G, Hd, C)
        return pairs

    def _segment_channels(self, segment, pair, first_order=False):
        """The reference's _channels of a segment's rows; compiled for multi-label targets."""
        if self.eta is None or pair[1] < -1:
            return self._channels(self._segment(segment), pair, first_order)
        start, stop = int(segment[0]), int(segment[1])
        out = np.empty((stop - start, 2))
        kernels.eta_pair_channels(self.rows, start, stop, int(pair[0]), int(pair[1]), self.p, self.pc, self.eta,
                                  self._w, self._weighted, bool(first_order), out)
        return out

    def node_sums(self, segments, pairs):
        sums = np.empty((len(segments), N_CHANNELS))
        for j, (segment, pair) in enumerate(zip(segments, pairs)):
            sums[j, :2] = self._segment_channels(segment, pair).sum(axis=0)
            sums[j, COUNT] = int(segment[1]) - int(segment[0])
        return sums

    # CpuBackend's: the pair histograms' best splits (the same histogram layout), the stable
    # partition of the rows, and F's update (the reference's F[rows of leaf j] += deltas[j])
    find_splits = CpuBackend.find_splits
    partition = CpuBackend.partition
    update_scores = CpuBackend.update_scores

    def histograms(self, segments, pairs, first_order=False):
        """The LogitBoost family's pair histograms (multi-label targets), by the reference's
        rule (numpy.sum_of_halves, as halved_histogram), each part compiled (_histogram)."""
        hists = np.empty((len(segments), self.codes.shape[1], self.n_codes, N_CHANNELS))
        for j, (segment, pair) in enumerate(zip(segments, pairs)):
            idx = self._segment(segment)
            values = self._segment_channels(segment, pair, first_order)

            def part(lo, hi, idx=idx, values=values):
                out = np.zeros(hists.shape[1:])
                self._histogram(idx[lo:hi], values[lo:hi], out)
                return fold_default_bins(out, values[lo:hi], self.sparse)

            hists[j] = sum_of_halves(idx.size, self.n_codes, part)
        return hists
