"""The compiled (numba) CPU backend against its NumPy twin, stage by stage and tree by tree."""

import contextlib
import json
import math
import os
import subprocess
import sys
from dataclasses import replace

import numba
import numpy as np
import pytest

from gpuboost.backends.cpu import CpuBackend
from gpuboost.backends.numpy import NumpyBackend
from gpuboost.grower import GrowerParams, TreeGrower

from conftest import bins_as_thresholds, start_early

CASES = [
    # (seed, n_rows, n_features, n_classes, n_bins, weighted, missing fraction, code dtype)
    (0, 200, 4, 3, 10, False, 0.0, np.uint8),
    (1, 300, 3, 5, 40, True, 0.1, np.uint8),
    (2, 150, 5, 2, 2, False, 0.2, np.uint8),
    (3, 400, 2, 30, 300, True, 0.05, np.uint16),
    (4, 1, 3, 4, 5, False, 0.0, np.uint8),  # one row
    (5, 100, 3, 4, 1, False, 0.3, np.uint8),  # every row in one value bin
]


def pair_of_backends(seed, n, d, k, n_bins, weighted, missing, dtype):
    rng = np.random.default_rng(seed)
    missing_code = 255 if dtype == np.uint8 else 65535
    codes = rng.integers(0, n_bins, size=(n, d)).astype(dtype)
    codes[rng.random((n, d)) < missing] = missing_code
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    F = rng.normal(scale=2.0, size=(n, k))
    backends = [cls(codes, y, w, k, n_bins=n_bins, missing_code=missing_code) for cls in (NumpyBackend, CpuBackend)]
    losses = [b.set_scores(F) for b in backends]
    return backends, F, losses, codes, missing_code



def scored_backends(codes, y, w, k, n_bins, F):
    """The reference and the compiled backend on the same codes (missing code 255), both
    scored at F."""
    ref = NumpyBackend(codes, y, w, k, n_bins=n_bins, missing_code=255)
    fast = CpuBackend(codes, y, w, k, n_bins=n_bins, missing_code=255)
    ref.set_scores(F)
    fast.set_scores(F)
    return ref, fast

@pytest.mark.parametrize("case", CASES)
def test_stages_agree(case):
    (ref, fast), F, losses, codes, missing_code = pair_of_backends(*case)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-13)
    np.testing.assert_array_equal(ref.p, fast.p)
    np.testing.assert_array_equal(ref.pc, fast.pc)
    np.testing.assert_array_equal(ref.class_losses(), fast.class_losses())  # (CpuBackend's own, without pc)
    n = codes.shape[0]
    segments = np.array([[0, n], [0, n // 2], [n // 2, n], [0, 0]])
    for rule in ("eq33", "eq32"):
        np.testing.assert_array_equal(ref.select_pairs(segments, rule), fast.select_pairs(segments, rule))
    pairs = ref.select_pairs(segments, "eq33")
    np.testing.assert_allclose(ref.node_sums(segments, pairs), fast.node_sums(segments, pairs), rtol=1e-12, atol=1e-300)
    hists_ref, hists_fast = ref.histograms(segments, pairs), fast.histograms(segments, pairs)
    np.testing.assert_allclose(hists_ref, hists_fast, rtol=1e-12, atol=1e-300)
    for msl in (1, 3):
        a, b = ref.find_splits(hists_ref, msl), fast.find_splits(hists_ref, msl)
        np.testing.assert_array_equal(a.gain, b.gain)
        valid = np.isfinite(a.gain)
        for name in ("feature", "bin", "missing_left"):
            np.testing.assert_array_equal(getattr(a, name)[valid], getattr(b, name)[valid])
        np.testing.assert_array_equal(a.sums, b.sums)
    if n > 1:
        f, bin_ = 0, 0
        assert ref.partition((0, n), f, bin_, True) == fast.partition((0, n), f, bin_, True)
        np.testing.assert_array_equal(ref.rows, fast.rows)
        deltas = np.arange(2 * F.shape[1], dtype=float).reshape(2, -1)
        Fa, Fb = F.copy(), F.copy()
        ref.update_scores(Fa, np.array([[0, n // 3], [n // 3, n]]), deltas)
        fast.update_scores(Fb, np.array([[0, n // 3], [n // 3, n]]), deltas)
        np.testing.assert_array_equal(Fa, Fb)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("params", [
    GrowerParams(),
    GrowerParams(max_leaves=5, min_samples_leaf=4, pair_rule="eq32"),
    GrowerParams(fixed_pair=(1, 0), first_order=True),  # ABC-MART's tree for class 1, base 0
    GrowerParams(fixed_pair=(0, -1), value_scale=0.5, leaf_clip=50.0),  # robust LogitBoost's tree
    GrowerParams(fixed_pair=(1, -1), first_order=True, max_leaves=7),  # MART's tree
    GrowerParams(fixed_pair=(1, -2), value_scale=0.75),  # original LogitBoost's tree
    GrowerParams(min_child_weight=0.5),  # AOSO with a least Hessian per child
    GrowerParams(fixed_pair=(1, -1), first_order=True, min_child_weight=3.0),  # MART: a least weight per child
])
def test_whole_tree_matches_the_python_grower(case, params):
    (ref, fast), F, _, codes, missing_code = pair_of_backends(*case)
    edge = bins_as_thresholds
    a, seg_a, leaves_a = TreeGrower(ref, params, edge, codes.shape[0]).grow()
    b, seg_b, leaves_b = fast.grow_tree(params, edge)
    for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_allclose(a.gain, b.gain, rtol=1e-12)
    np.testing.assert_array_equal(a.threshold, b.threshold)
    assert b.vector is None
    for name in ("feature", "bin", "threshold", "missing_left", "left", "right", "pair", "value", "n_samples", "gain"):
        # the kernel's arrays as make_tree gives them: Tree's dtypes, read-only
        assert getattr(b, name).dtype == getattr(a, name).dtype and not getattr(b, name).flags.writeable, name
    np.testing.assert_array_equal(seg_a, seg_b)
    np.testing.assert_array_equal(leaves_a, leaves_b)
    np.testing.assert_array_equal(ref.rows, fast.rows)
    # prediction of the grown tree: compiled and NumPy walks agree, and match the partition
    np.testing.assert_array_equal(CpuBackend.tree_leaves(b, codes, missing_code), b.apply(codes, missing_code))
    leaf_of_row = b.apply(codes, missing_code)
    for (start, stop), leaf in zip(seg_b, leaves_b):
        assert np.all(leaf_of_row[fast.rows[start:stop]] == leaf)


def test_converged_probabilities_keep_their_digits():
    # rows at the papers' stopping regime: 1 - p_y ~ 1e-25
    codes = np.zeros((4, 1), np.uint8)
    y = np.array([0, 1, 2, 0])
    F = np.full((4, 3), -30.0)
    F[np.arange(4), y] = 30.0
    ref = NumpyBackend(codes, y, None, 3, n_bins=1, missing_code=255)
    fast = CpuBackend(codes, y, None, 3, n_bins=1, missing_code=255)
    assert ref.set_scores(F) == pytest.approx(fast.set_scores(F), rel=1e-14)
    assert 0 < fast.set_scores(F) < 1e-20
    np.testing.assert_array_equal(ref.pc, fast.pc)
    assert np.all(fast.pc[np.arange(4), y] > 0)


def test_parallel_sums_are_the_sequential_ones():
    # large enough for the staged histogram's feature-parallel path (rows x features >=
    # PARALLEL_CELLS), and pairs of a large node
    from gpuboost.backends._numba_cpu import PARALLEL_CELLS

    rng = np.random.default_rng(11)
    n, d, k = 140000, 8, 8
    assert n * d >= PARALLEL_CELLS
    codes = rng.integers(0, 64, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < 0.05] = 255
    y = rng.integers(0, k, size=n)
    F = rng.normal(size=(n, k))
    ref = NumpyBackend(codes, y, None, k, n_bins=64, missing_code=255)
    fast = CpuBackend(codes, y, None, k, n_bins=64, missing_code=255, n_threads=2)
    ref.set_scores(F)
    fast.set_scores(F)
    segments, pairs = np.array([[0, n]]), np.array([[1, 3]])
    np.testing.assert_array_equal(ref.histograms(segments, pairs), fast.histograms(segments, pairs))
    for rule in ("eq33", "eq32"):
        np.testing.assert_array_equal(ref.select_pairs(segments, rule), fast.select_pairs(segments, rule))
    # the class sums behind the pair (left in the scratch array): row order, per class
    np.testing.assert_array_equal(fast._G, np.where(np.arange(k) == y[:, None], -fast.pc, fast.p).sum(axis=0))
    # the cross sums C_rk of a node of HALVES_ROWS rows or more: its halves', as the reference's
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.numpy import halved_column_sums

    for lo, hi in ((0, n), (5, kernels.HALVES_ROWS + 5), (7, kernels.HALVES_ROWS + 6)):
        C = np.empty(k)
        kernels.node_cross_sums(fast.rows, lo, hi, fast.p, fast.weight, False, False, 2, C)
        np.testing.assert_array_equal(C, halved_column_sums(fast.p[lo:hi, 2, None] * fast.p[lo:hi]))


@pytest.mark.parametrize("n_codes", [2, 3, 9, 17, 102, 257])
def test_best_split_is_the_references_on_hard_histograms(n_codes):
    # The compiled best split scans prefix and suffix sums and computes VW candidates' gains at
    # once: ties (duplicate features, equal bins), empty bins, features with and without
    # missing values, zero Hessian sums and minimum leaf sizes up to "no split" must give the
    # reference's choice, bit for bit.
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.numpy import best_splits

    rng = np.random.default_rng(n_codes)
    for trial in range(40):
        d = int(rng.integers(1, 6))
        counts = rng.integers(0, 4, size=(d, n_codes)).astype(float)
        counts[:, rng.random(n_codes) < 0.3] = 0.0  # empty bins
        if trial % 3 == 0:
            counts[:, -1] = 0.0  # no missing values
        g = np.where(counts > 0, rng.normal(size=(d, n_codes)), 0.0)
        h = np.where(counts > 0, rng.uniform(0.0, 1.0, size=(d, n_codes)), 0.0)
        if trial % 4 == 1:
            h[:, : n_codes // 2] = 0.0  # Hessian sums that are exactly 0 (guarded as 1)
        if trial % 5 == 2:
            g = np.round(g * 2) / 2  # many equal gains
        if trial % 6 == 3:
            counts[:, -1] = 2.0
            g[:, -1] = h[:, -1] = 0.0  # missing rows that change no sum: either side, the same gain
        hist = np.stack([g, h, counts], axis=-1)
        # every feature holds the same rows: its bins must add up to the node's totals
        for f in range(1, d):
            hist[f] = hist[0] if trial % 2 else rng.permutation(hist[0])  # equal features, or other bins
        msl = [1, 2, 5, 1000][trial % 4]
        # min_child_weight: none, or about a fifth of the node's Hessian (some sides fall below)
        mcw = [0.0, 0.2 * h[0].sum(), 1e-9][trial % 3]
        # whole, and as two halves (the halved histogram of a node: best_split adds them)
        first = np.round(hist * rng.uniform(0.0, 1.0, size=hist.shape), 3)
        # colsample_bytree's feature mask: every feature, or a random part of them (feature 0,
        # whose bins give the totals, among the left-out ones too)
        allowed = np.ones(d, bool) if trial % 3 == 0 else rng.random(d) < 0.5
        for parts in ((hist,), (first, hist - first)):
            total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
            want = best_splits(total[None], total[None, 0].sum(axis=1), msl, min_child_weight=mcw, features=allowed)
            for lanes in (3, kernels.LANES):  # grow_tree's layout: a fourth channel, 0
                h = [np.zeros(hist.shape[:2] + (lanes,)) for _ in parts]
                for a, part in zip(h, parts):
                    a[..., :3] = part
                sums = np.empty(3)
                scratch = (np.empty((n_codes, 3)), np.empty((n_codes, 3)), np.empty(2 * d * n_codes))
                gain, f, b, missing_left = kernels.best_split(h[0], h[-1], len(parts) == 2, msl, mcw, allowed,
                                                              sums, *scratch)
                assert gain == want.gain[0] or (np.isinf(gain) and np.isinf(want.gain[0]))
                np.testing.assert_array_equal(sums, want.sums[0])
                if np.isfinite(want.gain[0]):
                    assert (f, b, missing_left) == (want.feature[0], want.bin[0], want.missing_left[0])


def _other_cpu_tests(params, folder):
    """The command of test_vector_kernels_on_cpus_without_avx512 (started with the session:
    ``start_early``), or None where it skips."""
    from gpuboost.backends import _numba_cpu as kernels

    if not sys.platform.startswith("linux") or os.uname().machine != "x86_64":
        return None
    if params["cpu"] == "haswell" and not kernels._has_avx512():
        return None
    from pathlib import Path

    import gpuboost

    # (the gpuboost these tests import, installed or not: the process runs in its own folder)
    env = dict(os.environ, NUMBA_CPU_NAME=params["cpu"], NUMBA_CPU_FEATURES=params["features"],
               NUMBA_CACHE_DIR=str(folder), PYTHONPATH=str(Path(gpuboost.__file__).resolve().parents[1]))
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
            "vectorised_class_and_cross_sums or hard_histograms"], env


@pytest.mark.parametrize("cpu, features", [("haswell", "+avx,+avx2,+fma,+sse4.2,+popcnt,+bmi,+bmi2,+f16c,+cx16"),
                                            ("x86-64", "+sse2")])
@start_early(_other_cpu_tests)
def test_vector_kernels_on_cpus_without_avx512(cpu, features, early_process):
    # The vector kernels are compiled for the machine they run on: an 8-wide vector and its
    # masked loads and stores are one AVX-512 instruction here, two AVX2 ones (vmaskmovpd) or
    # a lane at a time elsewhere. The same tests, compiled for those CPUs (a new process with
    # numba's target CPU set, and an empty cache), must give the same sums.
    from gpuboost.backends import _numba_cpu as kernels

    if not sys.platform.startswith("linux") or os.uname().machine != "x86_64":
        pytest.skip("x86-64 targets")
    if cpu == "haswell" and not kernels._has_avx512():
        # (35 s of compiling in CI, whose hosts are of this kind)
        pytest.skip("this host compiles for AVX2 without AVX-512 itself: the rest of the suite runs that case")
    returncode, stdout, stderr = early_process(timeout=600)
    assert returncode == 0, stdout[-3000:] + stderr[-2000:]
    assert " passed" in stdout and "failed" not in stdout


def _scalar_class_and_cross_sums(rows, p, pc, top, y, w, r, k_lo, k_hi):
    """The class and cross sums as the plain loops they replace: a row at a time, class by class."""
    K = p.shape[1]
    G, Hd, A, C = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    for i in rows:
        wi = 1.0 if w is None else w[i]
        for k in range(k_lo, k_hi):
            a = p[i, k]
            b = pc[i, k] if k == top[i] else 1.0 - a
            g = -b if k == y[i] else a
            G[k] += g if w is None else wi * g
            Hd[k] += a * b if w is None else wi * (a * b)
            pr = p[i, r] if w is None else wi * p[i, r]
            C[k] += pr * a
        if k_lo <= y[i] < k_hi:
            by = pc[i, y[i]]
            A[y[i]] += by if w is None else wi * by
    return G, Hd, A, C


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("k", [1, 3, 8, 10, 26, 32, 33, 70])
def test_vectorised_class_and_cross_sums_are_the_scalar_loops(k, weighted):
    # The class and cross sums keep VW-class vectors in registers, VBLOCK of them a pass over the
    # rows, the last two blocks in one pass (70 classes: two passes at VW 8, four at 4; 26 and 32
    # end in a two-block pass at VW 4, 33 and 70 at either width) and a masked last vector: every sum must
    # be the scalar loop's, bit for bit, and nothing outside the asked classes may be written.
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(k)
    n = 97
    y = rng.integers(0, k, size=n)
    F = rng.normal(scale=3.0, size=(n, k))
    F[np.arange(n), y] += rng.choice([0.0, 8.0, 40.0], size=n)  # some rows near convergence
    fast = CpuBackend(np.zeros((n, 1), np.uint8), y, rng.uniform(0.1, 2.0, size=n) if weighted else None, k,
                      n_bins=1, missing_code=255)
    fast.set_scores(F)
    p, pc, top, w = fast.p, fast.pc, fast.top, fast.weight
    rows = np.sort(rng.choice(n, 60, replace=False)).astype(np.int64)
    r = k // 2
    for k_lo, k_hi in ((0, k), (min(3, k), max(min(3, k), k - 2))):
        want = _scalar_class_and_cross_sums(rows, p, pc, top, y, w if weighted else None, r, k_lo, k_hi)
        sentinel = np.full((4, k + 2), 7.0)  # one class of room either side
        G, Hd, A, C = (sentinel[q, 1:k + 1] for q in range(4))
        G[:] = Hd[:] = A[:] = C[:] = 0.0
        kernels._class_sums(rows, 0, len(rows), p, fast.pct, top, y, w, weighted, G, Hd, A, k_lo, k_hi)
        kernels._cross_sums(rows, 0, len(rows), p, w, weighted, r, C, k_lo, k_hi)
        for got, expected in zip((G, Hd, A, C), want):
            np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(sentinel[:, [0, k + 1]], 7.0)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("params", [GrowerParams(), GrowerParams(fixed_pair=(2, -1), first_order=True)])
def test_larger_data_grows_the_python_growers_tree(params, n_threads, weighted):
    # large enough for every two-thread path: the children of a split on one thread each
    # (SIBLING_CELLS), the root's histogram by feature blocks (HISTOGRAM_CELLS) and the scores
    # by row blocks (PARALLEL_SCORES); several trees, so that the scores are updated in place.
    # The first tree starts from F = 0, where classes of equal counts tie exactly: the larger
    # child's derived class sums (and two threads' sums by halves) must not break those ties
    # another way than the rows' own sums (they fall back to them)
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(13)
    n, d, k, n_bins = 12000, 12, 6, 32
    assert n * d >= kernels.HISTOGRAM_CELLS and n * k >= kernels.PARALLEL_SCORES
    assert n * (k + d) // 4 >= kernels.SIBLING_CELLS  # siblings of a quarter of the rows or more: in parallel
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    # binary and one-hot-like features: 8 is dense (wide), 9-11 sparse with default 0, and
    # (the last columns) sparse with default 1 and with the missing code as default
    codes[:, 8:] = rng.random((n, 4)) < [[0.5, 0.1, 0.03, 0.0]]
    codes = np.concatenate([codes, (rng.random((n, 2)) < [[0.9, 0.0]]).astype(np.uint8)], axis=1)
    codes[rng.random((n, d + 2)) < 0.05] = 255
    codes[rng.random(n) < 0.6, d + 1] = 255
    y = (codes[:, 0] // 6 + (codes[:, 1] > 16) + 2 * codes[:, 8] + 3 * (codes[:, 9] == 1) + codes[:, 12]) % k
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    ref = NumpyBackend(codes, y, w, k, n_bins=n_bins, missing_code=255)
    fast = CpuBackend(codes, y, w, k, n_bins=n_bins, missing_code=255, n_threads=n_threads)
    if fast.n_threads < n_threads:
        pytest.skip("numba has one thread here")
    expected_sparse = [(9, 0), (10, 0), (11, 0), (12, 1), (13, n_bins)]
    assert [tuple(f) for f in fast.sparse] == [tuple(f) for f in ref.sparse] == expected_sparse
    assert list(fast.wide) == list(range(9))
    edge = bins_as_thresholds
    F = np.zeros((n, k))
    for _ in range(4):
        np.testing.assert_allclose(ref.set_scores(F), fast.set_scores(F), rtol=1e-13)
        np.testing.assert_array_equal(ref.p, fast.p)
        a, seg_a, leaves_a = TreeGrower(ref, params, edge, n).grow()
        b, seg_b, leaves_b = fast.grow_tree(params, edge)
        assert a.n_nodes == 2 * params.max_leaves - 1
        for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_array_equal(a.value, b.value)
        np.testing.assert_array_equal(seg_a, seg_b)
        np.testing.assert_array_equal(ref.rows, fast.rows)
        fast.update_scores(F, seg_b, 0.1 * b.node_vectors(k)[leaves_b])


@pytest.mark.parametrize("n_threads", [1, 2])
def test_pairs_the_bounds_decide_grow_the_python_growers_trees(n_threads):
    # trees whose nodes' s is often decided by the class sums' bounds alone (s_without_cross:
    # in _choose_pair, and in _pairs_r for the large nodes of the stage CROSS), grown in turn
    # from updated scores: the reference's trees, bit for bit. The bounds are replayed on each
    # node's own sums to show that they decided some large (>= HALVES_ROWS) and small nodes
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(17)
    n, d, k, n_bins = 10000, 5, 7, 16
    assert n >= 2 * kernels.HALVES_ROWS
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    y = (codes[:, 0] // 3 + (codes[:, 1] > 8) + codes[:, 2] % 2 + (rng.random(n) < 0.2)) % k
    ref = NumpyBackend(codes, y, None, k, n_bins=n_bins, missing_code=255)
    fast = CpuBackend(codes, y, None, k, n_bins=n_bins, missing_code=255, n_threads=n_threads)
    if fast.n_threads < n_threads:
        pytest.skip("numba has one thread here")
    params = GrowerParams(max_leaves=12)
    F = np.zeros((n, k))
    decided = {True: 0, False: 0}  # by whether the node has HALVES_ROWS rows or more
    for _ in range(12):
        np.testing.assert_allclose(ref.set_scores(F), fast.set_scores(F), rtol=1e-13)
        a, seg_a, leaves_a = TreeGrower(ref, params, bins_as_thresholds, n).grow()
        b, seg_b, leaves_b = fast.grow_tree(params, bins_as_thresholds)
        for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_array_equal(a.value, b.value)
        np.testing.assert_array_equal(seg_a, seg_b)
        member = {0: np.arange(n, dtype=np.int64)}
        for node in range(b.n_nodes):
            rows = member[node]
            if b.left[node] >= 0:
                left = codes[rows, b.feature[node]] <= b.bin[node]
                member[b.left[node]], member[b.right[node]] = rows[left], rows[~left]
            own = _class_sums_direct(rows, fast.p, fast.pct, fast.top, fast.y, np.ones(n))
            r = kernels.pick_r(own[kernels.STAT_G])
            if kernels.s_without_cross(own, len(rows), r) >= 0:
                assert [r, kernels.s_without_cross(own, len(rows), r)] == list(b.pair[node])
                decided[len(rows) >= kernels.HALVES_ROWS] += 1
        fast.update_scores(F, seg_b, 0.5 * b.node_vectors(k)[leaves_b])
    assert decided[True] > 0 and decided[False] > 0, decided


def test_partition_by_halves_is_the_one_thread_partition():
    # partition_halves (two threads, each half's left and right rows, then moved into place)
    # leaves the rows as the one-thread pass does: stable, missing values by missing_left
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(41)
    n = 2 * kernels.PARTITION_HALVES_ROWS + 3
    column = rng.integers(0, 9, size=n).astype(np.uint8)
    column[rng.random(n) < 0.1] = 8  # the missing code
    order = rng.permutation(n).astype(np.int64)
    for start, stop, bin_, missing_left in ((0, n, 3, True), (5, n - 7, 0, False), (100, 101, 4, True),
                                            (0, n, 7, False), (17, 17 + kernels.PARTITION_HALVES_ROWS, 9, True)):
        want = order.copy()
        n_want = kernels._partition_column(want, start, stop, column, bin_, missing_left, 8, np.empty(n, np.int64))
        got = order.copy()
        n_got = kernels.partition_halves(got, start, stop, column, bin_, missing_left, 8, np.empty(n, np.int64),
                                         np.empty(n, np.int64), np.zeros(2, np.int64))
        assert n_got == n_want
        np.testing.assert_array_equal(got, want)


def test_large_nodes_partitioned_by_halves_grow_the_python_growers_tree():
    # nodes of PARTITION_HALVES_ROWS rows or more are partitioned by two threads: the same tree
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(42)
    n, d, k = 2 * kernels.PARTITION_HALVES_ROWS + 1000, 4, 3
    codes = rng.integers(0, 16, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < 0.05] = 255
    y = (codes[:, 0] // 4 + (codes[:, 1] > 9)) % k
    ref = NumpyBackend(codes, y, None, k, n_bins=16, missing_code=255)
    fast = CpuBackend(codes, y, None, k, n_bins=16, missing_code=255, n_threads=2)
    if fast.n_threads < 2:
        pytest.skip("numba has one thread here")
    F = rng.normal(size=(n, k))
    ref.set_scores(F)
    fast.set_scores(F)
    params = GrowerParams(max_leaves=6)
    a, seg_a, _ = TreeGrower(ref, params, bins_as_thresholds, n).grow()
    b, seg_b, _ = fast.grow_tree(params, bins_as_thresholds)
    large = [j for j in range(a.n_nodes) if a.n_samples[j] >= kernels.PARTITION_HALVES_ROWS and a.feature[j] >= 0]
    assert len(large) >= 2  # the root and a child of it were partitioned by halves
    for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples", "value"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(seg_a, seg_b)
    np.testing.assert_array_equal(ref.rows, fast.rows)

@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_features_histograms_are_the_references(weighted):
    # the whole-tree histogram (_histogram_block, and by feature blocks _histogram_parallel)
    # adding only the sparse features' codes other than their defaults, the default bins
    # folded: the reference's bins (fold_default_bins), exactly; and the staged node_histogram
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.numpy import build_histogram, fold_default_bins, halved_histogram

    rng = np.random.default_rng(31)
    n, d, k, n_bins = 3000, 8, 4, 16
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[:, 3:] = rng.random((n, 5)) < [[0.5, 0.8, 0.02, 0.0, 0.1]]
    codes[rng.random((n, d)) < 0.05] = 255
    codes[rng.random(n) < 0.6, 7] = 255  # mostly missing: the missing code is the default
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    ref, fast = scored_backends(codes, y, w, k, n_bins, rng.normal(size=(n, k)))
    assert [tuple(f) for f in fast.sparse] == [(4, 1), (5, 0), (6, 0), (7, n_bins)]
    assert list(fast.wide) == [0, 1, 2, 3]  # 3: binary, but no code holds half of the rows
    # rows in an order where the first ones have no row of feature 4's default code (its
    # default bin then holds no row: 0 in every channel, not the subtraction's residue)
    other = np.flatnonzero(fast.codes[:, 4] != 1)
    fast.rows[:] = ref.rows[:] = np.concatenate([other, np.flatnonzero(fast.codes[:, 4] == 1)])
    segments = np.array([[0, n], [n // 3, n - 100], [5, 5], [3, len(other)]])
    sparse, wide, cells = fast.sparse, fast.wide, fast.cells
    for pair, first_order in (((1, 3), False), ((2, -1), True), ((0, -2), False)):
        expected = []
        for lo, hi in segments:  # one pass over the rows (the kernels below), not histograms()' halves
            values = ref._channels(ref.rows[lo:hi], pair, first_order)
            dense = build_histogram(ref.codes[ref.rows[lo:hi]], values, ref.n_codes)
            expected.append(fold_default_bins(dense.copy(), values, ref.sparse))
            np.testing.assert_allclose(expected[-1], dense, rtol=1e-12, atol=1e-9)  # the direct sums, to rounding
        for j, (lo, hi) in enumerate(segments):
            hist = np.full((d, fast.n_codes, kernels.LANES), np.nan)  # channels, and a fourth, 0
            kernels._histogram_block(fast.rows, lo, hi, pair[0], pair[1], fast.codes, wide, sparse, cells, fast.p,
                                     fast.pct, fast.top, fast.y, fast.weight, weighted, first_order, hist,
                                     0, len(wide), kernels.WITH_SPARSE)
            np.testing.assert_array_equal(hist[..., :3], expected[j])
            np.testing.assert_array_equal(hist[..., 3:], 0.0)
            for n_blocks in (3, 4):  # the sparse features with the first block
                hist[:] = np.nan
                kernels._histogram_parallel(fast.rows, lo, hi, pair[0], pair[1], fast.codes, wide, sparse, cells,
                                            fast.p, fast.pct, fast.top, fast.y, fast.weight, weighted, first_order,
                                            hist, n_blocks)
                np.testing.assert_array_equal(hist[..., :3], expected[j])
                np.testing.assert_array_equal(hist[..., 3:], 0.0)
            staged = np.full((d, fast.n_codes, 3), np.nan)
            kernels.node_histogram(fast.rows, lo, hi, pair[0], pair[1], fast.codes, sparse, fast.p, fast.pct,
                                   fast.top, fast.y, fast.weight, weighted, first_order, staged, np.empty((n, 2)), 1)
            values = ref._channels(ref.rows[lo:hi], pair, first_order)  # histograms(): by halves, each folded
            np.testing.assert_array_equal(staged, halved_histogram(ref.codes[ref.rows[lo:hi]], values, ref.n_codes,
                                                                   ref.sparse))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_features", [16, 15, 17])
def test_dense_histograms_are_the_references_at_and_around_the_feature_block(n_features, weighted):
    # a pass over exactly FEATURE_BLOCK wide features has its row's additions unrolled (another
    # loop than any other count's): the reference's bins, exactly, for every kind of pair
    # statistic, first-order and weighted ones too, whole and from an offset feature range; 15
    # and 17 take the general loops
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.numpy import build_histogram

    assert kernels.FEATURE_BLOCK == 16
    rng = np.random.default_rng(11)
    n, k, n_bins = 2500, 5, 12
    codes = rng.integers(0, n_bins, size=(n, n_features)).astype(np.uint8)
    codes[rng.random((n, n_features)) < 0.03] = 255
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    ref, fast = scored_backends(codes, y, w, k, n_bins, rng.normal(size=(n, k)))
    assert len(fast.sparse) == 0 and len(fast.wide) == n_features
    fast.rows[:] = ref.rows[:] = rng.permutation(n)
    for pair, first_order in (((1, 3), False), ((4, 0), True), ((2, -1), False), ((2, -1), True), ((0, -2), False)):
        for lo, hi in ((0, n), (7, n // 2), (3, 3)):
            values = ref._channels(ref.rows[lo:hi], pair, first_order)
            expected = build_histogram(ref.codes[ref.rows[lo:hi]], values, ref.n_codes)
            hist = np.full((n_features, fast.n_codes, kernels.LANES), np.nan)
            kernels._histogram_block(fast.rows, lo, hi, pair[0], pair[1], fast.codes, fast.wide, fast.sparse,
                                     fast.cells, fast.p, fast.pct, fast.top, fast.y, fast.weight, weighted,
                                     first_order, hist, 0, n_features, kernels.WITH_SPARSE)
            np.testing.assert_array_equal(hist[..., :3], expected)
            np.testing.assert_array_equal(hist[..., 3:], 0.0)
            if n_features == 17:  # features 1:17, a block of 16 from an offset
                hist[:] = np.nan
                kernels._histogram_block(fast.rows, lo, hi, pair[0], pair[1], fast.codes, fast.wide, fast.sparse,
                                         fast.cells, fast.p, fast.pct, fast.top, fast.y, fast.weight, weighted,
                                         first_order, hist, 1, n_features, kernels.WITH_SPARSE)
                np.testing.assert_array_equal(hist[1:, :, :3], expected[1:])
                assert np.isnan(hist[0]).all()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("with_sparse", [False, True])
def test_histograms_of_many_features_by_passes_are_the_references(with_sparse, weighted):
    # more features than _features_per_pass (32 of 256 codes): a pass over the rows for each
    # block of them (the bins of one pass stay in the core's cache), then the sparse cells: the
    # reference's bins exactly, as one pass gives them; from an offset range, on threads by
    # feature blocks, and in a whole tree grown as the Python grower grows it
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.numpy import build_histogram, fold_default_bins

    rng = np.random.default_rng(7)
    n, d, k, n_bins = 900, 80, 4, 255
    assert kernels._features_per_pass(n_bins + 1) == 32
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < 0.02] = 255
    if with_sparse:
        codes[:, ::9] = np.where(rng.random((n, len(range(0, d, 9)))) < 0.9, 0, codes[:, ::9])
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    ref, fast = scored_backends(codes, y, w, k, n_bins, rng.normal(size=(n, k)))
    assert (len(fast.sparse) > 0) == with_sparse and len(fast.wide) > kernels._features_per_pass(fast.n_codes)
    fast.rows[:] = ref.rows[:] = rng.permutation(n)
    wide, sparse, cells = fast.wide, fast.sparse, fast.cells
    for pair, first_order in (((1, 3), False), ((2, -1), True), ((0, -2), False)):
        for lo, hi in ((0, n), (11, n // 2), (4, 4)):
            values = ref._channels(ref.rows[lo:hi], pair, first_order)
            expected = fold_default_bins(build_histogram(ref.codes[ref.rows[lo:hi]], values, ref.n_codes), values,
                                         ref.sparse)
            hist = np.full((d, fast.n_codes, kernels.LANES), np.nan)
            kernels._histogram_block(fast.rows, lo, hi, pair[0], pair[1], fast.codes, wide, sparse, cells, fast.p,
                                     fast.pct, fast.top, fast.y, fast.weight, weighted, first_order, hist,
                                     0, len(wide), kernels.WITH_SPARSE)
            np.testing.assert_array_equal(hist[..., :3], expected)
            np.testing.assert_array_equal(hist[..., 3:], 0.0)
            hist[:] = np.nan  # the wide features from the second on, no sparse ones: those bins alone
            kernels._histogram_block(fast.rows, lo, hi, pair[0], pair[1], fast.codes, wide, sparse, cells, fast.p,
                                     fast.pct, fast.top, fast.y, fast.weight, weighted, first_order, hist,
                                     1, len(wide), not kernels.WITH_SPARSE)
            np.testing.assert_array_equal(hist[wide[1:], :, :3], expected[wide[1:]])
            assert np.isnan(np.delete(hist, wide[1:], axis=0)).all()
            hist[:] = np.nan
            kernels._histogram_parallel(fast.rows, lo, hi, pair[0], pair[1], fast.codes, wide, sparse, cells, fast.p,
                                        fast.pct, fast.top, fast.y, fast.weight, weighted, first_order, hist, 2)
            np.testing.assert_array_equal(hist[..., :3], expected)
    ref.reset_partition()
    fast.reset_partition()
    params = GrowerParams(max_leaves=8)
    a, seg_a, _ = TreeGrower(ref, params, bins_as_thresholds, n).grow()
    b, seg_b, _ = fast.grow_tree(params, bins_as_thresholds)
    for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_allclose(a.gain, b.gain, rtol=1e-12)
    np.testing.assert_array_equal(seg_a, seg_b)


def test_sparse_features_default_bins_are_folded_not_summed():
    # a deliberate break: the sparse features' default bins summed from their rows, as the dense
    # histogram has them, differ from the fold in the last digits, and the fold is what the
    # reference and the kernels agree on (a kernel that summed them would fail the test above)
    from gpuboost.backends.numpy import build_histogram, fold_default_bins

    rng = np.random.default_rng(5)
    n = 2000
    codes = (rng.random((n, 2)) < 0.2).astype(np.uint8)
    values = rng.normal(size=(n, 2)) * rng.uniform(1e-3, 1e3, size=(n, 1))
    dense = build_histogram(codes, values, 3)
    folded = fold_default_bins(dense.copy(), values, np.array([[0, 0], [1, 0]]))
    np.testing.assert_array_equal(folded[:, 1:], dense[:, 1:])  # the other bins: untouched
    np.testing.assert_array_equal(folded[:, 0, 2], dense[:, 0, 2])  # counts: exact
    np.testing.assert_allclose(folded[:, 0, :2], dense[:, 0, :2], rtol=1e-10)
    assert not np.array_equal(folded[:, 0, :2], dense[:, 0, :2])  # (else the test shows nothing)


def test_sparse_features_do_not_depend_on_the_column_copy(monkeypatch):
    # the feature-major copy is only a faster path for the partition: past its size limit the
    # partition reads the row-major codes, the sparse features stay, and the tree is the same
    from gpuboost.backends import cpu

    rng = np.random.default_rng(32)
    codes = rng.integers(0, 9, size=(500, 4)).astype(np.uint8)
    codes[:, 2:] = rng.random((500, 2)) < 0.3
    y = (codes[:, 0] + codes[:, 2]) % 3
    F = rng.normal(size=(500, 3))
    trees = []
    for limit in (cpu.COLUMNS_COPY_BYTES, 1999):
        monkeypatch.setattr(cpu, "COLUMNS_COPY_BYTES", limit)
        fast = CpuBackend(codes, y, None, 3, n_bins=9, missing_code=255)
        assert [tuple(f) for f in fast.sparse] == [(2, 0), (3, 0)]
        assert fast.columns.shape == ((4, 500) if limit > 2000 else (0, 500))  # the partition reads codes
        fast.set_scores(F)
        trees.append(fast.grow_tree(GrowerParams(), bins_as_thresholds)[0])
    for name in ("feature", "bin", "missing_left", "pair", "n_samples", "value", "gain"):
        np.testing.assert_array_equal(getattr(trees[0], name), getattr(trees[1], name), err_msg=name)


def _class_sums_direct(rows, p, pct, top, y, w):
    from gpuboost.backends import _numba_cpu as kernels

    K = p.shape[1]
    G, Hd, A = np.empty(K), np.empty(K), np.empty(K)
    kernels.node_class_sums(rows, 0, len(rows), p, pct, top, y, w, True, G, Hd, A)
    stats = np.empty((kernels.N_STATS, K))
    kernels.summed_stats(G, Hd, A, len(rows), stats)
    return stats


def _checked_pick(stats, own, rows, p, w, rule_eq32):
    """Class sums that must be checked (derived, or summed by row blocks: stats) against the
    node's own (own, summed from its rows in order): each within its bounds of the own sums, and
    the pair they may pick (certain_r, certain_s) the one the own sums pick. Returns whether
    they picked one, and whether picking from them unchecked would have given another pair."""
    from gpuboost.backends import _numba_cpu as kernels

    u = np.finfo(float).eps / 2
    n, K = len(rows), p.shape[1]
    for stat, err, mag in ((kernels.STAT_G, kernels.STAT_EG, kernels.STAT_SG),
                           (kernels.STAT_HD, kernels.STAT_EH, kernels.STAT_SH)):
        assert np.all(np.abs(stats[stat] - own[stat]) <= stats[err] + 2 * n * u * stats[mag])
    r_own = kernels.pick_r(own[kernels.STAT_G])
    C = np.empty(K)
    kernels.node_cross_sums(rows, 0, n, p, w, True, rule_eq32, r_own, C)
    s_own = kernels.pick_s(own[kernels.STAT_G], own[kernels.STAT_HD], C.copy(), r_own, rule_eq32)
    naive_differs = (kernels.pick_r(stats[kernels.STAT_G]) != r_own
                     or kernels.pick_s(stats[kernels.STAT_G], stats[kernels.STAT_HD], C.copy(), r_own,
                                       rule_eq32) != s_own)
    r = kernels.certain_r(stats, n)
    if r < 0:
        return False, naive_differs
    assert r == r_own
    s = kernels.certain_s(stats, n, C, r, rule_eq32)
    if s < 0:
        return False, naive_differs
    assert s == s_own
    return True, naive_differs


@pytest.mark.parametrize("scale", [None, 0.0, 1.0, 8.0, 40.0])  # None: every class ties; 40: converged rows
@pytest.mark.parametrize("rule_eq32", [False, True])
def test_a_derived_pair_is_the_summed_one_or_none(scale, rule_eq32):
    # The larger child's class sums as parent minus sibling: their bounds hold, and the pair
    # they are allowed to pick (certain_r, certain_s) is the one its own sums pick. With
    # scale None (F = 0, every class as many rows in both children) all classes tie but for
    # rounding, and the derived sums would often pick another class than the child's own
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(21)
    certain = misled = 0
    for trial in range(40):
        K = int(rng.integers(2, 9))
        if scale is None:
            n_small, n_large = K * int(rng.integers(5, 30)), K * int(rng.integers(30, 60))
            n = n_small + n_large
            F = np.zeros((n, K))
            y = np.concatenate([np.arange(n_small) % K, np.arange(n_large) % K])
            rows = np.concatenate([rng.permutation(n_small), n_small + rng.permutation(n_large)]).astype(np.int64)
            cut = n_small
        else:
            n = int(rng.integers(20, 400))
            F = scale * rng.normal(size=(n, K))
            y = rng.integers(0, K, size=n) if trial % 2 else np.argmax(F + rng.normal(size=(n, K)), axis=1)
            rows = rng.permutation(n).astype(np.int64)
            cut = int(rng.integers(1, n))
        backend = CpuBackend(np.zeros((n, 1), np.uint8), y, None, K, n_bins=2, missing_code=255)
        backend.set_scores(F)
        p, pc, top = backend.p, backend.pct, backend.top
        w = rng.uniform(0.5, 2.0, size=n) if trial % 4 == 1 and scale is not None else np.ones(n)
        small, large = (rows[:cut], rows[cut:]) if cut <= n - cut else (rows[cut:], rows[:cut])
        parent = _class_sums_direct(np.concatenate([small, large]) if trial % 3 else rows, p, pc, top, y, w)
        s_stats = _class_sums_direct(small, p, pc, top, y, w)
        derived = np.empty_like(parent)
        kernels.derived_stats(parent, s_stats, derived)
        own = _class_sums_direct(large, p, pc, top, y, w)
        picked, naive_differs = _checked_pick(derived, own, large, p, w, rule_eq32)
        certain += picked
        misled += naive_differs
    if scale is None:
        assert misled > 0 and certain == 0  # the danger is real, and every pick was left to the rows
    else:
        assert certain >= 30  # elsewhere the derived sums decide, nearly always


@pytest.mark.parametrize("case", ["ties", "scale1", "scale8", "converged", "two_classes"])
def test_s_without_cross_sums_is_the_pick_of_the_cross_sums_or_none(case):
    # s_without_cross decides s from the class sums alone, with C_rk anywhere in [0, min(Hd_r,
    # Hd_k)] (padded for rounding): where it returns a class, it is the one pick_s picks from the
    # node's own cross sums; from summed and from derived sums (checked by certain_r first).
    # "two_classes": every row's mass on two classes, where C_rk = Hd_r = Hd_k, the bound itself
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(33)
    decided = undecided = decided_ties = 0
    for trial in range(60):
        K = int(rng.integers(3, 12))
        n = int(rng.integers(30, 600))
        if case == "ties":  # every class as many rows: the node's scores all 0 but for rounding
            n = K * (n // K)
            F = np.zeros((n, K))
            y = np.arange(n) % K
        else:
            scale = {"scale1": 1.0, "scale8": 8.0, "converged": 40.0, "two_classes": 2.0}[case]
            F = scale * rng.normal(size=(n, K))
            if case == "two_classes":  # two classes a row (the others' exponentials underflow to 0)
                keep = np.zeros((n, K), bool)
                keep[np.arange(n), rng.integers(0, 2, n)] = True
                keep[np.arange(n), 2 + rng.integers(0, K - 2, n) * (trial % 2)] = True
                F[~keep] = -800.0
            y = rng.integers(0, K, size=n) if trial % 2 else np.argmax(F + rng.normal(size=(n, K)), axis=1)
        rows = rng.permutation(n).astype(np.int64)
        backend = CpuBackend(np.zeros((n, 1), np.uint8), y, None, K, n_bins=2, missing_code=255)
        backend.set_scores(F)
        p, pc, top, w = backend.p, backend.pct, backend.top, np.ones(n)
        cut = int(rng.integers(1, n))
        small, large = (rows[:cut], rows[cut:]) if cut <= n - cut else (rows[cut:], rows[:cut])
        parent = _class_sums_direct(rows, p, pc, top, y, w)
        derived = np.empty_like(parent)
        kernels.derived_stats(parent, _class_sums_direct(small, p, pc, top, y, w), derived)
        for stats, node, own in ((parent, rows, parent), (derived, large, _class_sums_direct(large, p, pc, top, y, w))):
            r_own = kernels.pick_r(own[kernels.STAT_G])
            C = np.empty(K)
            kernels.node_cross_sums(node, 0, len(node), p, w, False, False, r_own, C)
            s_own = kernels.pick_s(own[kernels.STAT_G], own[kernels.STAT_HD], C, r_own, False)
            r = kernels.pick_r(stats[kernels.STAT_G]) if stats is own else kernels.certain_r(stats, len(node))
            if r < 0:
                continue
            assert r == r_own
            s = kernels.s_without_cross(stats, len(node), r)
            if s < 0:
                undecided += 1
            else:
                assert s == s_own, (trial, r, s, s_own)
                decided += 1
                decided_ties += stats is own
    if case == "ties":
        assert decided_ties == 0  # nothing to decide without the rows
    elif case in ("scale1", "scale8", "two_classes"):
        assert decided >= 10 and undecided >= 10  # the test sees both outcomes
    stats = parent.copy()  # (the last trial's) with a NaN sum: left to the rows
    stats[kernels.STAT_G, (r_own + 1) % K] = np.nan
    assert kernels.s_without_cross(stats, n, r_own) == -1


def test_thread_count_does_not_change_the_model(tmp_path):
    from gpuboost import BoostClassifier

    from gpuboost.backends._numba_cpu import PARALLEL_CELLS

    rng = np.random.default_rng(12)
    X = rng.normal(size=(140000, 8))
    assert X.size >= PARALLEL_CELLS  # the root's histogram takes the feature-parallel path
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=140000), [-1, 0, 1])
    files = []
    for n_jobs in (1, 2):
        path = tmp_path / f"model{n_jobs}.json"
        BoostClassifier(n_estimators=6, max_leaves=8, n_jobs=n_jobs).fit(X, y).save_model(path)
        content = json.loads(path.read_text())
        assert content["params"].pop("n_jobs") == n_jobs
        del content["checksum"]  # it covers the parameters too
        files.append(json.dumps(content))
    assert files[0] == files[1]  # the same model, but for the parameter itself


@pytest.fixture(params=["numpy", "libm"])
def exp_source(request, monkeypatch):
    """The scoring's exp and log1p: NumPy's (the kernels scatter its exponentials), or the C
    library's, called inside the kernels (where they are NumPy's bit for bit; elsewhere, as on
    CPUs with AVX-512, NumPy has its own and the backend keeps it, so the case is skipped)."""
    from gpuboost.backends import cpu

    libm = request.param == "libm"
    if libm and not cpu.libm_matches_numpy():
        pytest.skip("NumPy's float64 exp or log1p is not the C library's here: the backend keeps NumPy's")
    monkeypatch.setattr(cpu, "libm_matches_numpy", lambda: libm)
    return libm


def test_incremental_scores_are_the_full_ones(exp_source):
    # set_scores recomputes only the exponentials whose argument changed: after sparse updates
    # (a leaf changes 2 classes), an update that moves a row's maximum, and an edit of F made
    # outside update_scores, p, pc and the loss are still the reference's, bit for bit
    rng = np.random.default_rng(21)
    n, k = 500, 7
    codes = rng.integers(0, 8, size=(n, 3)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    ref = NumpyBackend(codes, y, w, k, n_bins=8, missing_code=255)
    fast = CpuBackend(codes, y, w, k, n_bins=8, missing_code=255)
    F = np.zeros((n, k))
    assert ref.set_scores(F) == fast.set_scores(F)
    segments = np.array([[0, 200], [200, 420], [420, n]])
    for step in range(6):
        deltas = np.zeros((3, k))
        for j in range(3):
            r, s = rng.choice(k, size=2, replace=False)
            deltas[j, r], deltas[j, s] = rng.normal(scale=3.0), -rng.normal(scale=3.0)
        Fa, Fb = F.copy(), F
        ref.update_scores(Fa, segments, deltas)
        fast.update_scores(Fb, segments, deltas)
        np.testing.assert_array_equal(Fa, Fb)
        if step == 3:
            Fb[7] = rng.normal(size=k)  # outside update_scores
        assert ref.set_scores(Fb) == fast.set_scores(Fb)
        np.testing.assert_array_equal(ref.p, fast.p)
        np.testing.assert_array_equal(ref.pc, fast.pc)
        np.testing.assert_array_equal(fast.top, np.argmax(Fb, axis=1))


@pytest.mark.parametrize("weighted", [False, True])
def test_update_and_score_is_update_then_set_scores(weighted, exp_source):
    # the fused update (its changed scores known from the leaves) against the reference's
    # update_scores and set_scores, bit for bit: steps that move a row's maximum, steps too
    # small to change a score, segments that leave rows out, an F that is not the one scored
    # last (the two calls instead), and leaves that change one, three or all classes (the
    # general loop; AOSO's two have their own)
    rng = np.random.default_rng(23)
    n, k = 600, 6
    codes = rng.integers(0, 8, size=(n, 3)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    ref = NumpyBackend(codes, y, w, k, n_bins=8, missing_code=255)
    fast = CpuBackend(codes, y, w, k, n_bins=8, missing_code=255, n_threads=2)
    fast.rows[:] = rng.permutation(n)  # leaves hold rows in partition order, not row order
    F_ref, F = np.zeros((n, k)), np.zeros((n, k))
    assert ref.set_scores(F_ref) == fast.set_scores(F)
    for step in range(8):
        segments = np.array([[0, 150], [150, 400], [400, n - (30 if step % 2 else 0)]])
        deltas = np.zeros((3, k))
        for j in range(3):
            r, s = rng.choice(k, size=2, replace=False)
            scale = 1e-300 if step == 5 else 3.0  # step 5 changes no score
            deltas[j, r], deltas[j, s] = rng.normal(scale=scale), -rng.normal(scale=scale)
            if step in (3, 7):  # one, three and all classes
                deltas[j] = 0.0
                changed = rng.choice(k, size=(1, 3, k)[j], replace=False)
                deltas[j, changed] = rng.normal(scale=3.0, size=len(changed))
        F_ref = F.copy()  # the leaves' rows are fast.rows[lo:hi]
        for j, (lo, hi) in enumerate(segments):
            F_ref[fast.rows[lo:hi]] += deltas[j]
        if step == 6:
            F = F.copy()  # not the array scored last: update_scores and set_scores
        loss = fast.update_and_score(F, segments, deltas)
        np.testing.assert_array_equal(F, F_ref)
        assert loss == ref.set_scores(F_ref)
        np.testing.assert_array_equal(fast.p, ref.p)
        np.testing.assert_array_equal(fast.pc, ref.pc)
        np.testing.assert_array_equal(fast.top, np.argmax(F_ref, axis=1))
    assert fast._exp_counts.sum() < n * k  # the last step recomputed only some exponentials


@pytest.mark.parametrize("fused", [False, True])
def test_scores_across_shift_boundaries_are_the_references(fused, exp_source):
    # E = exp(F - c) is kept between trees, c a row's largest score rounded down to a multiple
    # of losses.SHIFT_STEP: steps that move a row's maximum within its shift (two exponentials
    # recomputed), across a multiple upwards, downwards (the top class lowered below one), and
    # onto one exactly, against the reference bit for bit, by update_and_score and by
    # update_scores then set_scores
    from gpuboost import losses
    from gpuboost.backends import _numba_cpu as kernels

    assert kernels.SHIFT_STEP == losses.SHIFT_STEP
    step = losses.SHIFT_STEP
    n, k = 8, 4
    codes = np.zeros((n, 1), dtype=np.uint8)
    y = np.arange(n) % k
    ref = NumpyBackend(codes, y, None, k, n_bins=2, missing_code=255)
    fast = CpuBackend(codes, y, None, k, n_bins=2, missing_code=255)
    F = np.tile(np.array([0.0, -1.0, -2.0, -3.0]), (n, 1))
    F[:, 0] = [step - 0.25, step - 0.25, 0.5, 2 * step + 0.5, -0.5, step - 1.0, 3.0, 3.0]
    assert ref.set_scores(F.copy()) == fast.set_scores(F)
    segments = np.array([[q, q + 1] for q in range(n)])
    deltas = np.zeros((n, k))
    deltas[0, 0], deltas[0, 1] = 0.5, -0.5  # row 0's top crosses a multiple upwards
    deltas[1, 0], deltas[1, 2] = 0.125, 0.25  # stays below it: only classes 0 and 2 rescored
    deltas[2, 0], deltas[2, 3] = -1.0, 0.25  # top lowered below 0: a new top, a lower shift
    deltas[3, 0], deltas[3, 1] = -1.0, 2.0  # lowered below 2 step, another class on top
    deltas[4, 1], deltas[4, 2] = 1.5, 0.25  # class 1 becomes top, above 0
    deltas[5, 0], deltas[5, 1] = 1.0, 0.5  # onto the multiple exactly
    deltas[6, 2], deltas[6, 3] = 0.5, 0.25  # the top untouched
    deltas[7, 2], deltas[7, 3] = 0.25, 6.0  # class 3 ties the top exactly: the first of equals stays
    F_ref = F + deltas  # a leaf a row, rows in order
    if fused:
        loss = fast.update_and_score(F, segments, deltas)
    else:
        fast.update_scores(F, segments, deltas)
        loss = fast.set_scores(F)
    np.testing.assert_array_equal(F, F_ref)
    assert losses.exponent_shift(F_ref.max(axis=1)).tolist() == [step, 0.0, -step, step, 0.0, step, 0.0, 0.0]
    assert loss == ref.set_scores(F_ref)
    np.testing.assert_array_equal(fast.p, ref.p)
    np.testing.assert_array_equal(fast.pc, ref.pc)
    np.testing.assert_array_equal(fast.top, np.argmax(F_ref, axis=1))
    # rows 1, 6 and 7 (two scores, the same shift) keep the rest of their exponentials
    assert F_ref[7, 3] == F_ref[7, 0] and fast.top[7] == 0
    assert fast._exp_counts.sum() == 5 * k + 2 + 2 + 2


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_grow_and_score_is_grow_tree_leaf_steps_and_update_and_score(n_threads, weighted, exp_source, monkeypatch):
    # a boosting iteration of one tree in one compiled call (libm) against its three calls on a
    # twin backend, bit for bit, tree after tree: the tree, F, p, pct, top, the loss, and the
    # next tree's root class sums (softmax_from_exponentials'). A MART-like tree (its leaves
    # have no second class) and an F that is not the one scored last take the three calls;
    # NumPy's exp (exp_source "numpy") always does
    from gpuboost.backends import _numba_cpu as kernels

    fused_calls = []
    fused = kernels.grow_rounds

    def counted(*args):
        fused_calls.append(1)
        return fused(*args)

    monkeypatch.setattr(kernels, "grow_rounds", counted)  # (grow_and_score's kernel: one round)
    rng = np.random.default_rng(31)
    n, d, k, n_bins = 10000, 5, 7, 16
    assert n * k >= kernels.PARALLEL_SCORES  # scored by row blocks on two threads
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < 0.05] = 255
    y = (codes[:, 0] // 3 + (codes[:, 1] > 8) + rng.integers(0, 2, size=n)) % k
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    one, three = (CpuBackend(codes, y, w, k, n_bins=n_bins, missing_code=255, n_threads=n_threads)
                  for _ in range(2))
    if one.n_threads < n_threads:
        pytest.skip("numba has one thread here")
    F_one, F_three = np.zeros((n, k)), np.zeros((n, k))
    assert one.set_scores(F_one) == three.set_scores(F_three)
    aoso, mart = GrowerParams(max_leaves=12), GrowerParams(max_leaves=12, fixed_pair=(2, -1), first_order=True)
    plan = [aoso, aoso, "copy", aoso, mart, aoso, aoso]
    for params in plan:
        if params == "copy":  # arrays other than the ones scored last, some rows' scores set back to
            # the first scoring's: the three calls, which must not take the exponentials of those
            # rows' first scores as still kept (the fused call left E up to date, not F_last)
            F_one, F_three, params = F_one.copy(), F_three.copy(), aoso
            F_one[:100], F_three[:100] = 0.0, 0.0
        a, loss_a = one.grow_and_score(F_one, params, bins_as_thresholds, 0.1)
        b, segments, leaves = three.grow_tree(params, bins_as_thresholds)
        loss_b = three.update_and_score(F_three, segments, three.leaf_steps(b, leaves, 0.1))
        for name in ("feature", "bin", "threshold", "missing_left", "left", "right", "pair", "value", "n_samples",
                     "gain"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert loss_a == loss_b
        for name in ("p", "pct", "top", "rows", "_root_sums"):
            np.testing.assert_array_equal(getattr(one, name), getattr(three, name), err_msg=name)
        np.testing.assert_array_equal(F_one, F_three)
        assert one._root_blocks == three._root_blocks
    # every tree ran the kernel but the copy's (libm), and the MART tree's scores were the calls'
    assert len(fused_calls) == (len(plan) - 1 if exp_source else 0)
    assert np.isfinite(loss_a) and loss_a < np.log(k) * (w.sum() if weighted else n)


@pytest.mark.parametrize("weighted", [False, True])
def test_grow_rounds_is_grow_and_score_tree_after_tree(weighted, exp_source, monkeypatch):
    # several boosting iterations in one compiled call against grow_and_score called for each,
    # on a twin backend, bit for bit: the trees (thresholds included), losses, F, p and the root
    # sums; each tree's own feature mask; a tol reached mid-way (the call stops after that
    # tree); a MART-like tree (no pair: the kernel stops and the backend finishes it); the
    # rounds capped by ROUND_CELLS; an F not scored last (grow_and_score's calls)
    from gpuboost.backends import _numba_cpu as kernels

    calls = []  # the F of each kernel call (the twin's grow_and_score calls it too)
    rounds = kernels.grow_rounds

    def counted(*args):
        calls.append(args[31])
        return rounds(*args)

    monkeypatch.setattr(kernels, "grow_rounds", counted)
    monkeypatch.setattr(CpuBackend, "rounds_at_once", lambda self: 64)
    rng = np.random.default_rng(37)
    n, d, k, n_bins = 3000, 6, 5, 12
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < 0.05] = 255
    y = (codes[:, 0] // 3 + (codes[:, 1] > 5) + rng.integers(0, 2, size=n)) % k
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    many, one = (CpuBackend(codes, y, w, k, n_bins=n_bins, missing_code=255, n_threads=2) for _ in range(2))
    F_many, F_one = np.zeros((n, k)), np.zeros((n, k))
    assert many.set_scores(F_many) == one.set_scores(F_one)

    def edge(features, bins):  # a threshold for each (feature, bin): a mix-up of trees would show
        return np.asarray(features, float) * 100.0 + np.asarray(bins, float)

    aoso, mart = GrowerParams(max_leaves=9), GrowerParams(max_leaves=9, fixed_pair=(2, -1), first_order=True)
    masks = rng.random((5, d)) < 0.7
    masks[:, 0] = True
    trees, losses = many.grow_rounds(F_many, aoso, edge, 0.1, 5, -np.inf, masks)
    assert len(trees) == 5 and sum(f is F_many for f in calls) == (1 if exp_source else 0)
    want = [one.grow_and_score(F_one, replace(aoso, features=masks[t]), edge, 0.1) for t in range(5)]
    more, more_losses = many.grow_rounds(F_many, aoso, edge, 0.1, 6, -np.inf)
    want += [one.grow_and_score(F_one, aoso, edge, 0.1) for _ in range(6)]
    trees, losses = trees + more, losses + more_losses
    # a tol that the third of the next trees reaches: the call stops after it
    probe = CpuBackend(codes, y, w, k, n_bins=n_bins, missing_code=255, n_threads=2)
    F_probe = F_one.copy()
    probe.set_scores(F_probe)
    probe_losses = [probe.grow_and_score(F_probe, aoso, edge, 0.1)[1] for _ in range(3)]
    tol = probe_losses[2]
    assert probe_losses[0] > probe_losses[1] > tol
    stopped, stopped_losses = many.grow_rounds(F_many, aoso, edge, 0.1, 6, tol)
    assert len(stopped) == 3 and stopped_losses[-1] <= tol
    want += [one.grow_and_score(F_one, aoso, edge, 0.1) for _ in range(3)]
    trees, losses = trees + stopped, losses + stopped_losses
    # a tree without pairs ends the kernel's call, and the backend finishes it (grow_and_score's
    # calls, with NumPy's exp, go on)
    mixed, mixed_losses = many.grow_rounds(F_many, mart, edge, 0.1, 4, -np.inf)
    assert len(mixed) == (1 if exp_source else 4)
    want += [one.grow_and_score(F_one, mart, edge, 0.1) for _ in mixed]
    trees, losses = trees + mixed, losses + mixed_losses
    monkeypatch.setattr(CpuBackend, "rounds_at_once", lambda self: 2)  # two trees a call
    capped, capped_losses = many.grow_rounds(F_many, aoso, edge, 0.1, 5, -np.inf)
    assert len(capped) == 2
    want += [one.grow_and_score(F_one, aoso, edge, 0.1) for _ in range(2)]
    trees, losses = trees + capped, losses + capped_losses
    F_first = F_many
    F_many, F_one = F_many.copy(), F_one.copy()  # not the arrays scored last: grow_and_score's calls
    copied, copied_losses = many.grow_rounds(F_many, aoso, edge, 0.1, 2, -np.inf)
    want += [one.grow_and_score(F_one, aoso, edge, 0.1) for _ in range(2)]
    trees, losses = trees + copied, losses + copied_losses
    assert len(trees) == len(want) == (19 if exp_source else 22)
    for a, (b, loss) in zip(trees, want):
        for name in ("feature", "bin", "threshold", "missing_left", "left", "right", "pair", "value", "n_samples",
                     "gain"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
            assert getattr(a, name).dtype == getattr(b, name).dtype and not getattr(a, name).flags.writeable
    assert losses == [loss for _, loss in want]
    for name in ("p", "pct", "top", "_root_sums"):
        np.testing.assert_array_equal(getattr(many, name), getattr(one, name), err_msg=name)
    np.testing.assert_array_equal(F_many, F_one)
    # the kernel ran once a call (libm), and for the copy's second tree (its first took the
    # three calls: F was not the array scored last)
    assert sum(f is F_first for f in calls) == (5 if exp_source else 0)
    assert sum(f is F_many for f in calls) == (1 if exp_source else 0)


@pytest.mark.parametrize("case", ["plain", "colsample", "tol", "continued", "weighted", "mart", "robustlogit"])
def test_fits_of_iterations_grown_several_a_call_are_the_per_iteration_fits(case, monkeypatch):
    # boost grows AOSO's iterations several at a time on the compiled backend (grow_rounds)
    # where no callback runs between them; with a callback that does nothing, one at a time
    # (grow_and_score): the same trees, losses and eval measures. A constant column (the
    # backend holds the others: boost's columns), colsample_bytree's masks of each tree, a tol
    # reached in the middle of a call, a model continued, sample weights, and the two-class
    # algorithms whose iterations have one tree, with the pair (0, 1)
    from gpuboost import BoostClassifier
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends import cpu
    from gpuboost.callback import Callback

    class Nothing(Callback):
        pass

    calls = []
    rounds = kernels.grow_rounds
    monkeypatch.setattr(kernels, "grow_rounds", lambda *args: calls.append(1) or rounds(*args))
    monkeypatch.setattr(cpu, "MAX_ROUNDS", 4)  # calls of up to four trees
    rng = np.random.default_rng(41)
    X = rng.normal(size=(900, 6))
    X[:, 2] = 1.5  # constant: not split on, not in the backend
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] + X[:, 3] > 0.4) + 2 * (X[:, 4] > 1.0)
    X_val, y_val = X[:200] + rng.normal(scale=0.3, size=(200, 6)), y[:200]
    params = dict(n_estimators=11, max_leaves=6, n_jobs=2)
    fit_args = dict(eval_set=[(X_val, y_val)])
    if case == "colsample":
        params.update(colsample_bytree=0.6, random_state=3)
    if case == "weighted":
        fit_args["sample_weight"] = rng.uniform(0.5, 2.0, size=len(y))
    if case == "tol":
        losses = BoostClassifier(**params, callbacks=[Nothing()]).fit(X, y).train_loss_
        params["tol"] = float(losses[6])  # reached at the seventh iteration, in the second call
    if case == "continued":
        fit_args["init_model"] = BoostClassifier(**dict(params, n_estimators=3)).fit(X, y, **fit_args)
    if case in ("mart", "robustlogit"):
        params["algorithm"] = case
        y, y_val = y % 2, y_val % 2
        fit_args["eval_set"] = [(X_val, y_val)]
    calls.clear()
    several = BoostClassifier(**params).fit(X, y, **fit_args)
    if cpu.libm_matches_numpy():  # (else grow_and_score's three calls, a tree at a time)
        assert len(calls) >= 3  # one tree, then four at a time
    one = BoostClassifier(**params, callbacks=[Nothing()]).fit(X, y, **fit_args)
    assert several.n_estimators_ == one.n_estimators_ == (7 if case == "tol" else 11)
    assert several.trees_[0].n_nodes > 1 and all(2 not in tree.feature for tree in several.trees_)
    for a, b in zip(several.trees_, one.trees_, strict=True):
        for name in ("feature", "bin", "threshold", "missing_left", "left", "right", "pair", "value", "n_samples",
                     "gain"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("train_loss_", "eval_loss_", "eval_error_"):
        np.testing.assert_array_equal(getattr(several, name), getattr(one, name), err_msg=name)
    np.testing.assert_array_equal(several.predict_proba(X_val), one.predict_proba(X_val))


@pytest.mark.parametrize("libm", [False, True])
def test_kernels_compiled_asks_for_grow_rounds_where_the_backend_calls_it(libm, monkeypatch):
    # grow_rounds runs only where the kernels call the C library's exp (libm): elsewhere (CPUs
    # with AVX-512) it is never compiled, and a verbose fit must not say "compiling" for ever
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends import cpu

    monkeypatch.setattr(cpu, "libm_matches_numpy", lambda: libm)
    monkeypatch.setattr(cpu, "machine_code_cached", lambda k: k is not kernels.grow_rounds)
    assert cpu.kernels_compiled() is (not libm)
    assert cpu.kernels_compiled(vector=True) is True
    monkeypatch.setattr(cpu, "machine_code_cached", lambda k: None if k is kernels.grow_tree else True)
    assert cpu.kernels_compiled() is None


def test_rounds_at_once_take_about_round_seconds():
    # grow_rounds' trees a call: one before any call has been timed, then as many as take about
    # ROUND_SECONDS at the last call's time a tree, between 1 and MAX_ROUNDS
    from gpuboost.backends import cpu

    backend = CpuBackend(np.zeros((4, 1), np.uint8), np.arange(4) % 2, None, 2, n_bins=2, missing_code=255)
    assert backend.rounds_at_once() == 1
    backend._tree_seconds = cpu.ROUND_SECONDS / 10.5
    assert backend.rounds_at_once() == 10
    backend._tree_seconds = 0.0
    assert backend.rounds_at_once() == cpu.MAX_ROUNDS
    backend._tree_seconds = 10 * cpu.ROUND_SECONDS
    assert backend.rounds_at_once() == 1


def test_a_fit_diverging_in_a_call_of_several_iterations_raises_as_one_at_a_time():
    # scores that overflow stop the call after that tree's loss, and boost raises for that
    # iteration, as it does with the iterations one at a time (a callback between them)
    from gpuboost import BoostClassifier
    from gpuboost.callback import Callback

    rng = np.random.default_rng(43)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    messages = []
    for callbacks in (None, [Callback()]):
        with pytest.raises(FloatingPointError, match="training diverged at iteration") as raised:
            BoostClassifier(n_estimators=30, learning_rate=3e304, leaf_clip=1e300, max_leaves=4,
                            callbacks=callbacks).fit(X, y)
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and "at iteration 3:" in messages[0]  # the second call's second tree


def test_the_kernels_exp_and_log1p_are_the_c_librarys():
    # libm_exp_log1p calls what softmax_from_exponentials calls (numba's math.exp and
    # math.log1p); Python's math module calls the C library's: the same values, bit for bit.
    # Where NumPy's are the same too, the backend scores with them (libm_matches_numpy)
    import math

    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends import cpu

    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-746.0, 8.0, 3000), rng.normal(size=3000), [0.0, -745.2, 7.99]])
    z = np.concatenate([rng.uniform(0.0, 30.0, 3000), np.geomspace(1e-310, 1e2, 3000), [0.0]])
    e, lp = np.empty_like(x), np.empty_like(z)
    kernels.libm_exp_log1p(x, e, z, lp)
    assert e.tolist() == [math.exp(v) for v in x]
    assert lp.tolist() == [math.log1p(v) for v in z]
    same = np.array_equal(e, np.exp(x)) and np.array_equal(lp, np.log1p(z))
    assert cpu.libm_matches_numpy() or not same  # the probe's arguments include these ranges and more


@pytest.mark.parametrize("weighted", [False, True])
def test_scores_with_the_c_librarys_exp_are_the_references_to_rounding(weighted, monkeypatch):
    # the kernels' own exp and log1p, forced on whatever NumPy has: p, pct and the loss stay
    # the reference's to rounding (bit for bit where libm_matches_numpy), over updates that
    # rescore two exponentials a row and a shift that rescores rows whole
    from gpuboost.backends import cpu

    same = cpu.libm_matches_numpy()  # NumPy's are the C library's here
    monkeypatch.setattr(cpu, "libm_matches_numpy", lambda: True)
    rng = np.random.default_rng(31)
    n, k = 5000, 14  # n k >= PARALLEL_SCORES: two row blocks
    codes = rng.integers(0, 8, size=(n, 2)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    ref = NumpyBackend(codes, y, w, k, n_bins=8, missing_code=255)
    fast = CpuBackend(codes, y, w, k, n_bins=8, missing_code=255, n_threads=2)
    assert fast.libm
    F = rng.normal(scale=4.0, size=(n, k))
    segments = np.array([[0, 2000], [2000, n]])
    for step in range(4):
        deltas = np.zeros((2, k))
        for j in range(2):
            r, s = rng.choice(k, size=2, replace=False)
            deltas[j, r], deltas[j, s] = rng.normal(scale=3.0 + 10 * (step == 2)), -rng.normal(scale=3.0)
        loss = fast.update_and_score(F, segments, deltas) if step else fast.set_scores(F)
        F_ref = F.copy()
        want = ref.set_scores(F_ref)
        assert loss == pytest.approx(want, rel=1e-13)
        np.testing.assert_allclose(fast.p, ref.p, rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(fast.pc, ref.pc, rtol=1e-14, atol=1e-300)
        if same:
            assert loss == want
            np.testing.assert_array_equal(fast.p, ref.p)
            np.testing.assert_array_equal(fast.pc, ref.pc)


@pytest.mark.parametrize("algorithm", ["aoso", "mart", "logitboost"])
def test_ensemble_prediction_matches_tree_by_tree(algorithm):
    # CpuBackend.add_trees walks the whole ensemble in one compiled call, with sparse steps;
    # the reference adds each tree's dense vectors in Python: the same scores, bit for bit
    from gpuboost import BoostClassifier
    from gpuboost.backends.base import Backend

    rng = np.random.default_rng(22)
    X = rng.normal(size=(300, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.digitize(X[:, 0] + X[:, 1], [-1, 0, 1])
    model = BoostClassifier(n_estimators=18, max_leaves=6, algorithm=algorithm).fit(X, y)
    codes = model._bin_mapper.transform(X)
    missing = model._bin_mapper.missing_bin
    F_ref, F_fast = np.zeros((300, 4)), np.zeros((300, 4))
    Backend.add_trees.__func__(NumpyBackend, F_ref, model.trees_, codes, missing, 0.1)
    CpuBackend.add_trees(F_fast, model.trees_, codes, missing, 0.1)
    np.testing.assert_array_equal(F_ref, F_fast)
    # fewer rows than four walk four trees at a time, then the trees left one by one (a
    # prediction of one row); four rows and more, four rows at a time and then the last ones;
    # MART's and LogitBoost's 72 trees cross a block of trees (TREE_BLOCK)
    from gpuboost.backends import _numba_cpu as kernels

    if algorithm != "aoso":
        assert len(model.trees_) > kernels.TREE_BLOCK
    for n_rows in (1, 2, 3, 5, 7):
        for n_trees in sorted({1, 3, 4, 5, 9, len(model.trees_)}):
            F_ref, F_fast = np.zeros((n_rows, 4)), np.zeros((n_rows, 4))
            Backend.add_trees.__func__(NumpyBackend, F_ref, model.trees_[:n_trees], codes[:n_rows], missing, 0.1)
            CpuBackend.add_trees(F_fast, model.trees_[:n_trees], codes[:n_rows], missing, 0.1)
            np.testing.assert_array_equal(F_ref, F_fast, err_msg=f"{n_rows} rows, {n_trees} trees")


def _depth(tree, node=0):
    if tree.feature[node] < 0:
        return 0
    return 1 + max(_depth(tree, int(tree.left[node])), _depth(tree, int(tree.right[node])))


@pytest.mark.parametrize("threads, walks", [(1, 0), (2, 0), (2, None)])
def test_ensemble_walk_of_fixed_length_is_the_references(threads, walks, monkeypatch):
    # add_trees walks every row depth[t] steps down tree t, four rows at a time, a leaf leading
    # to itself: trees of many depths, a tree that is a single leaf, rows that are not a
    # multiple of four (nor of the blocks), missing values; the same scores as the reference,
    # on the parallel walk (PARALLEL_WALKS 0) and on the serial one (None: fewer walks than it)
    import numba

    from gpuboost.backends import cpu

    from gpuboost import BoostClassifier
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.base import Backend
    from gpuboost.tree import Tree

    rng = np.random.default_rng(23)
    X = rng.normal(size=(303, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-1, 0, 1])
    trees = []
    for leaves in (2, 3, 7, 20):
        model = BoostClassifier(n_estimators=6, max_leaves=leaves).fit(X, y)
        trees += model.trees_
    leaf = Tree(feature=np.array([-1], np.int32), bin=np.array([-1], np.int32), threshold=np.array([np.nan]),
                missing_left=np.array([False]), left=np.array([-1], np.int32), right=np.array([-1], np.int32),
                pair=np.array([[1, 2]], np.int32), value=np.array([0.25]), n_samples=np.array([303]),
                gain=np.array([0.0]))
    trees.insert(5, leaf)
    # a split whose bin reaches past the missing code: every value goes left, missing ones right
    wide = Tree(feature=np.array([1, -1, -1], np.int32), bin=np.array([300, -1, -1], np.int32),
                threshold=np.array([np.inf, np.nan, np.nan]), missing_left=np.array([False, False, False]),
                left=np.array([1, -1, -1], np.int32), right=np.array([2, -1, -1], np.int32),
                pair=np.array([[0, 1], [2, 3], [3, 0]], np.int32), value=np.array([0.0, 0.5, -0.75]),
                n_samples=np.array([303, 270, 33]), gain=np.array([1.0, 0.0, 0.0]))
    trees.insert(9, wide)
    # a chain: each split sends the rows below its bin to a leaf, the others one level deeper
    n = 25
    feature = np.full(n, -1, np.int32)
    bins = np.full(n, -1, np.int32)
    left = np.full(n, -1, np.int32)
    right = np.full(n, -1, np.int32)
    for k in range(12):
        feature[2 * k], bins[2 * k], left[2 * k], right[2 * k] = 2, 15 * k, 2 * k + 1, 2 * k + 2
    trees.insert(2, Tree(feature=feature, bin=bins, threshold=np.zeros(n), missing_left=np.arange(n) % 4 == 0,
                         left=left, right=right, pair=np.stack([np.arange(n) % 4, (np.arange(n) + 1) % 4], 1),
                         value=rng.normal(size=n), n_samples=np.ones(n, np.int64), gain=np.zeros(n)))
    codes = model._bin_mapper.transform(X)
    missing = model._bin_mapper.missing_bin
    node_offset = np.concatenate([[0], np.cumsum([t.n_nodes for t in trees])]).astype(np.int64)
    joined = {name: np.concatenate([getattr(t, name) for t in trees]).astype(np.int64)
              for name in ("feature", "left", "right")}
    depth = kernels._walks(joined["feature"], joined["left"], joined["right"], node_offset)[2]
    assert depth.tolist() == [_depth(t) for t in trees]
    assert depth.min() == 0 and depth.max() == 12
    F_ref, F_fast = np.zeros((303, 4)), np.zeros((303, 4))
    Backend.add_trees.__func__(NumpyBackend, F_ref, trees, codes, missing, 0.1)
    if walks is not None:
        monkeypatch.setattr(cpu, "PARALLEL_WALKS", walks)
    else:
        assert 303 * len(trees) < cpu.PARALLEL_WALKS
    recording = _RecordingKernels()
    monkeypatch.setattr(cpu, "kernels", recording)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        CpuBackend.add_trees(F_fast, trees, codes, missing, 0.1)
    finally:
        numba.set_num_threads(previous)
    assert recording.seen == [(threads, "serial" if walks is None or threads == 1 else threads)]
    np.testing.assert_array_equal(F_ref, F_fast)


def test_halves_rule_is_the_references():
    # the kernels' copies of base.HALVES_ROWS and hist_halves_rows (numba freezes module constants)
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.base import HALVES_ROWS, hist_halves_rows

    assert kernels.HALVES_ROWS == HALVES_ROWS
    for n_codes in (1, 2, 3, 8, 9, 17, 102, 256, 65536):
        assert kernels._hist_halves_rows(np.int64(n_codes)) == hist_halves_rows(n_codes)


def test_cross_sums_by_halves_on_two_threads_are_the_references():
    # the stage CROSS of a split's pair choice: each thread's share (_sibling_cross), added as
    # _pairs_s adds them, is the reference's cross sums (a large node's: its halves')
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.numpy import halved_column_sums

    rng = np.random.default_rng(41)
    n, k = 3 * kernels.HALVES_ROWS, 5
    p = rng.dirichlet(np.ones(k), size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    rows = rng.permutation(n).astype(np.int64)
    start = np.array([0, kernels.HALVES_ROWS + 9], dtype=np.int64)  # a small node, then a large one
    stop = np.array([kernels.HALVES_ROWS - 1, n], dtype=np.int64)
    batch = np.array([0, 1], dtype=np.int64)
    for weighted in (False, True):
        pair_r = np.array([3, 1], dtype=np.int64)
        cross = np.full((2, 2, k), np.nan)
        for thread in (0, 1):
            kernels._sibling_cross(thread, 2, batch, pair_r, rows, start, stop, p, w, weighted, cross)
        for slot in (0, 1):
            idx = rows[start[slot]:stop[slot]]
            terms = (w[idx, None] * p[idx, pair_r[slot], None] if weighted else p[idx, pair_r[slot], None]) * p[idx]
            C = np.empty(k)
            kernels._combined_cross(cross, slot, stop[slot] - start[slot], C)
            np.testing.assert_array_equal(C, halved_column_sums(terms))


def test_pair_first_class_before_the_cross_sums_is_choose_pairs():
    # _pairs_r picks r as _choose_pair does: from summed class sums the largest -G_k, from
    # derived ones only where certain (a tie between two classes is not: -1, the rows decide)
    from gpuboost.backends import _numba_cpu as kernels

    k = 3
    stats = np.zeros((2, kernels.N_STATS, k))
    stats[:, kernels.STAT_G] = [-1.0, -1.0, 0.5]
    stats[:, kernels.STAT_SG] = 2.0
    start, stop = np.array([0, 0], dtype=np.int64), np.array([100, 100], dtype=np.int64)
    batch = np.array([0, 1], dtype=np.int64)
    pair_r = np.full(2, -5, dtype=np.int64)
    pair = np.full((2, 2), -7, dtype=np.int64)
    state = np.array([kernels.SUMMED, kernels.DERIVED])
    kernels._pairs_r(2, batch, state, start, stop, stats, pair_r, pair, False)
    assert list(pair_r) == [0, -1]  # (Hd all 0: no bound decides s)
    assert list(state) == [kernels.SUMMED, kernels.DERIVED] and (pair == -7).all()
    kernels._pairs_r(1, batch, np.array([kernels.TO_SUM, kernels.SUMMED]), start, stop, stats, pair_r, pair, False)
    assert pair_r[0] == -1
    # where the class sums' bounds decide s (s_without_cross), the node is PAIRED here, with no
    # r left for the cross sums; not for weighted rows
    stats[:, kernels.STAT_HD] = stats[:, kernels.STAT_SH] = [1.0, 1.0, 1.0]
    stats[1, kernels.STAT_G] = [-1.0, -0.5, 0.5]  # s = 2 by far, whatever C_0k in [0, 1]
    for weighted in (False, True):
        state = np.array([kernels.DERIVED, kernels.SUMMED])
        pair[:] = -7
        kernels._pairs_r(2, batch, state, start, stop, stats, pair_r, pair, weighted)
        assert list(pair_r) == [-1, 0 if weighted else -1]
        assert state[1] == (kernels.SUMMED if weighted else kernels.PAIRED)
        assert list(pair[1]) == ([-7, -7] if weighted else [0, 2]) and list(pair[0]) == [-7, -7]


@pytest.mark.parametrize("large", [False, True])
def test_uncertain_derived_pair_falls_back_to_the_rows(large):
    # _pairs_s takes s from derived class sums only where certain_s says so; with sums far
    # from the rows' (and wide bounds) it must choose the pair from the rows, as
    # _choose_pair does from scratch
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(43)
    n, k = (kernels.HALVES_ROWS + 100 if large else 500), 5
    codes = rng.integers(0, 8, size=(n, 2)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    fast = CpuBackend(codes, y, None, k, n_bins=8, missing_code=255)
    fast.set_scores(rng.normal(size=(n, k)))
    start, stop = np.array([0, 0], dtype=np.int64), np.array([n, n], dtype=np.int64)
    batch = np.array([0, 0], dtype=np.int64)
    args = (fast.rows, start, stop, fast.p, fast.pct, fast.top, fast.y, fast.weight, False, False)
    truth = np.zeros((1, 2), dtype=np.int64)
    node_stats = np.zeros((1, kernels.N_STATS, k))
    kernels._choose_pair(0, kernels.TO_SUM, *args, -1, -1, truth, node_stats)
    r, s = truth[0]
    # derived sums whose r is certain, whose s would be another class than the rows' (pick_s),
    # and whose Hessian sums are too uncertain to tell (certain_s: -1)
    node_stats[0, kernels.STAT_G] = 0.0
    node_stats[0, kernels.STAT_G, r] = -1e6
    node_stats[0, kernels.STAT_EG] = 0.0
    node_stats[0, kernels.STAT_EH] = 1e9
    C = np.empty(k)
    kernels.node_cross_sums(fast.rows, 0, n, fast.p, fast.weight, False, False, r, C)
    assert kernels.pick_s(node_stats[0, kernels.STAT_G], node_stats[0, kernels.STAT_HD], C, r, False) != s
    pair_r = np.empty(2, dtype=np.int64)
    state = np.array([kernels.DERIVED, kernels.DERIVED])
    kernels._pairs_r(1, batch, state, start, stop, node_stats, pair_r, np.full((1, 2), -7, dtype=np.int64), False)
    assert pair_r[0] == r and state[0] == kernels.DERIVED  # (no bound decides s: Hd is too uncertain)
    cross = np.zeros((2, 2, k))
    for thread in (0, 1):
        kernels._sibling_cross(thread, 1, batch, pair_r, fast.rows, start, stop, fast.p, fast.weight, False, cross)
    pair = np.full((1, 2), -7, dtype=np.int64)
    kernels._pairs_s(1, batch, state, *args, node_stats, pair, pair_r, cross)
    assert list(pair[0]) == [r, s] and state[0] == kernels.PAIRED


@pytest.mark.parametrize("missing_left", [False, True])
def test_partition_is_the_stable_partition(missing_left):
    # the kernel writes each row to both sides and moves one count (no branch on the side):
    # the result is the stable partition all the same, rows outside [start, stop) untouched
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(5)
    n, missing_code = 500, 9
    codes = rng.integers(0, 9, size=(n, 3)).astype(np.uint8)
    codes[rng.random((n, 3)) < 0.2] = missing_code
    rows = rng.permutation(n).astype(np.int64)
    for start, stop, feature, bin_ in ((0, n, 0, 4), (37, 411, 1, 0), (5, 6, 2, 8), (100, 100, 0, 3), (3, 300, 2, -1)):
        before = rows.copy()
        seg = before[start:stop]
        c = codes[seg, feature]
        goes_left = np.where(c == missing_code, missing_left, c <= bin_)
        # from the feature-major copy, and from the row-major codes where there is none
        columns = np.ascontiguousarray(codes.T) if feature != 1 else np.zeros((0, n), codes.dtype)
        n_left = kernels.partition(rows, start, stop, codes, columns, feature, bin_, missing_left, missing_code,
                                   np.empty(n, np.int64))
        assert n_left == np.count_nonzero(goes_left)
        np.testing.assert_array_equal(rows[start:stop], np.concatenate([seg[goes_left], seg[~goes_left]]))
        np.testing.assert_array_equal(rows[:start], before[:start])
        np.testing.assert_array_equal(rows[stop:], before[stop:])


def test_the_stage_profiler_still_finds_grow_trees_stages():
    # benchmarks/profile_cpu.py times grow_tree's stages by inserting lines around known
    # statements of the kernel source: it must find each one, once, and give valid Python
    import importlib.util

    from conftest import REPO

    spec = importlib.util.spec_from_file_location("profile_cpu", REPO / "benchmarks" / "profile_cpu.py")
    profile_cpu = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(profile_cpu)
    source = (REPO / "gpuboost" / "backends" / "_numba_cpu.py").read_text()
    profiled, names = profile_cpu.instrumented_source(source)
    compile(profiled, "_profiled_kernels.py", "exec")
    assert "cache=True" not in profiled
    for k in range(len(names) - 2):  # every stage is timed (the last two are computed)
        assert f"prof[{k}] += _profile_tsc() - _t0" in profiled
    with pytest.raises(SystemExit, match="update STAGES"):
        profile_cpu.instrumented_source(source.replace("n_left = partition(rows, start[best]", "n_left = cut("))


def _other_width_command(params, folder):
    """The command of test_the_other_vector_width_compiles_once_and_is_the_same (started with
    the session: ``start_early``): tests/_other_width.py with the gpuboost these tests import,
    installed or not."""
    from pathlib import Path

    import gpuboost

    env = dict(os.environ, PYTHONPATH=str(Path(gpuboost.__file__).resolve().parents[1]))
    return [sys.executable, str(Path(__file__).with_name("_other_width.py")), str(folder)], env


@start_early(_other_width_command)
def test_the_other_vector_width_compiles_once_and_is_the_same(early_process):
    """The kernels' vector width VW is the host's (8 lanes with AVX-512, else 4). A copy of the
    kernels compiled with the other width, without numba's cache, must give the same
    probabilities, loss, trees and models, bit for bit, so that both widths stay tested on any
    host; and it must compile each kernel once per argument types (see tests/_other_width.py).
    A new process: every kernel that its fits call is compiled there, whatever other tests
    called (about 100-140 s in CI, started with the session, beside the rest of the suite)."""
    returncode, stdout, stderr = early_process(timeout=900)
    assert returncode == 0 and "OK" in stdout, stdout[-2000:] + stderr[-3000:]


@pytest.mark.parametrize("link, multilabel, weighted, k", [("exp", False, False, 4), ("exp", True, True, 4),
                                                            ("exp", False, True, 19), ("exp", True, False, 12),
                                                            ("exp", False, False, 130),
                                                            ("klogit", False, True, 4), ("klogit", False, False, 9),
                                                            ("logistic", True, True, 4), ("logistic", True, False, 9)])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_vector_backend_stages_are_the_references(link, multilabel, weighted, k, n_threads):
    # CpuVectorBackend (K-LogitBoost, AdaBoost.MH, multi-label) compiles the NumPy backend's
    # vector histograms, their best splits, the partition and F's update: the reference's
    # results, bit for bit (AdaBoost.MH's gains sum over classes as NumPy does: k from 8 up,
    # halved above 128)
    from gpuboost.backends.cpu import CpuVectorBackend

    rng = np.random.default_rng(11)
    n, d, n_bins = 700, 7, 12
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[:, 5:] = rng.random((n, 2)) < [[0.1, 0.8]]  # sparse features: defaults 0 and 1
    codes[rng.random((n, d)) < 0.1] = 255
    y = rng.integers(0, k, size=n)
    labels = (rng.random((n, k)) < 0.4) if multilabel else None
    w = rng.uniform(0.2, 3.0, size=n) if weighted else None
    kwargs = dict(n_bins=n_bins, missing_code=255, link=link, labels=labels)
    ref = NumpyBackend(codes, y, w, k, **kwargs)
    fast = CpuVectorBackend(codes, y, w, k, n_threads=n_threads, **kwargs)
    assert [tuple(f) for f in fast.sparse] == [(5, 0), (6, 1)]
    for F in (np.zeros((n, k)), 30.0 * rng.normal(size=(n, k)), rng.normal(size=(n, k))):
        assert ref.set_scores(F) == fast.set_scores(F)
        if link == "exp":  # AdaBoost.MH's weights and Hamming loss, compiled
            np.testing.assert_array_equal(ref.W, fast.W)
            assert ref.hamming_loss == fast.hamming_loss
    for feature, bin_, missing_left in ((0, 5, True), (3, 2, False)):
        assert ref.partition((0, n), feature, bin_, missing_left) == fast.partition((0, n), feature, bin_, missing_left)
        np.testing.assert_array_equal(ref.rows, fast.rows)
    segments = np.array([[0, n], [0, 233], [233, n], [10, 10], [400, 401]])
    a, b = ref.vector_histograms(segments), fast.vector_histograms(segments)
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[:, 0].sum(axis=1)[:, -1], segments[:, 1] - segments[:, 0])  # counts
    for factorized in ((False, True) if link == "exp" else (False,)):
        # colsample_bytree's feature masks: all features, a few (feature 0 left out), one
        for features in (None, np.array([0, 1, 0, 1, 1, 0, 1], bool), np.eye(d, dtype=bool)[6]):
            for min_samples_leaf in (1, 40):
                want = ref.find_vector_splits(a, min_samples_leaf, factorized, features=features)
                got = fast.find_vector_splits(b, min_samples_leaf, factorized, features=features)
                np.testing.assert_array_equal(want.gain, got.gain)
                np.testing.assert_array_equal(want.sums, got.sums)
                found = np.isfinite(want.gain)
                if features is not None:
                    assert np.all(features[want.feature[found]])
                else:
                    assert found[:3].all() and not found[3:].any()
                for name in ("feature", "bin", "missing_left"):
                    np.testing.assert_array_equal(getattr(want, name)[found], getattr(got, name)[found])
    leaves = np.array([[0, 233], [233, 600], [600, n]])
    deltas = rng.normal(size=(3, k))
    deltas[1, 0] = 0.0
    deltas[2, :] = -0.0
    F_ref, F_fast = F.copy(), F.copy()
    ref.update_scores(F_ref, leaves, deltas)
    fast.update_scores(F_fast, leaves, deltas)
    np.testing.assert_array_equal(F_ref, F_fast)
    assert not np.array_equal(F_ref, F)


@pytest.mark.parametrize("link, weighted, k", [("klogit", False, 3), ("klogit", True, 5), ("exp", False, 4)])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_vector_histograms_of_many_features_by_passes_are_the_references(link, weighted, k, n_threads):
    # more features a thread than fill HIST_PASS_BYTES of bins: a pass over the rows for each
    # few of them, the sparse cells in the last: the reference's histograms bit for bit
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.cpu import CpuVectorBackend

    rng = np.random.default_rng(17)
    n, d, n_bins = 500, 110, 255
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[:, [4, 30]] = rng.random((n, 2)) < [[0.1, 0.8]]  # sparse features: defaults 0 and 1
    codes[rng.random((n, d)) < 0.05] = 255
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.2, 3.0, size=n) if weighted else None
    kwargs = dict(n_bins=n_bins, missing_code=255, link=link)
    ref = NumpyBackend(codes, y, w, k, **kwargs)
    fast = CpuVectorBackend(codes, y, w, k, n_threads=n_threads, **kwargs)
    assert [tuple(f) for f in fast.sparse] == [(4, 0), (30, 1)]
    channels = (k if link == "exp" else 2 * k) + 1
    per_pass = kernels.HIST_PASS_BYTES // ((n_bins + 1) * channels * 8)
    assert len(fast.wide) / n_threads > 2 * per_pass  # (three passes or more a thread)
    F = rng.normal(size=(n, k))
    assert ref.set_scores(F) == fast.set_scores(F)
    fast.rows[:] = ref.rows[:] = rng.permutation(n)
    segments = np.array([[0, n], [17, 260], [9, 9]])
    np.testing.assert_array_equal(ref.vector_histograms(segments), fast.vector_histograms(segments))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_vector_histogram_kernel_zeroes_what_it_fills(n_threads):
    # vector_histograms hands the kernel an uninitialised array; each thread zeroes its features
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(14)
    n, d, k, n_bins = 300, 7, 3, 6
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    labels = rng.random((n, k)) < 0.5
    ref = NumpyBackend(codes, labels.argmax(axis=1), None, k, n_bins=n_bins, missing_code=255, link="logistic",
                       labels=labels)
    ref.set_scores(rng.normal(size=(n, k)))
    hist = np.full((d, n_bins + 1, 2 * k + 1), np.nan)
    idx = np.arange(40, 260, dtype=np.int64)
    wide, sparse, cells = np.arange(d), np.zeros((0, 2), np.int64), np.zeros(n + 1, np.int64)
    kernels.vector_histogram_rows(ref.codes, idx, ref.g, ref.h, np.ones(1), False, False, wide, sparse, cells, hist,
                                  n_threads)
    np.testing.assert_array_equal(hist, ref.vector_histograms(np.array([[40, 260]]))[0])


def _multilabel_backends(rng, n, d, k, n_bins, weighted, label_rate, missing_rate):
    """The NumPy reference and CpuVectorBackend (two threads) on the same random multi-label
    data: every row has a label; weights in [0.2, 3] where weighted."""
    from gpuboost.backends.cpu import CpuVectorBackend

    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[:, -1] = rng.random(n) < 0.2  # a sparse feature
    codes[rng.random((n, d)) < missing_rate] = 255
    labels = rng.random((n, k)) < label_rate
    labels[~labels.any(axis=1), 0] = True
    w = rng.uniform(0.2, 3.0, size=n) if weighted else None
    kwargs = dict(n_bins=n_bins, missing_code=255, link="softmax", labels=labels)
    return (NumpyBackend(codes, labels.argmax(axis=1), w, k, **kwargs),
            CpuVectorBackend(codes, labels.argmax(axis=1), w, k, n_threads=2, **kwargs))


@pytest.mark.parametrize("weighted, k", [(False, 3), (True, 11), (False, 40)])
def test_vector_backend_multilabel_scores_are_the_references(weighted, k, exp_source):
    # multi-label softmax and paper 004's loss, compiled: the reference's p, pc and loss, bit for
    # bit (the per-row sums over classes as NumPy's pairwise sum rounds them from 8 classes up)
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(13)
    n = 3000
    ref, fast = _multilabel_backends(rng, n, 3, k, 10, weighted, label_rate=0.3, missing_rate=0.0)
    assert n * k >= kernels.PARALLEL_SCORES or k < 40  # the largest case runs on two threads
    for F in (np.zeros((n, k)), rng.normal(size=(n, k)), 40.0 * rng.normal(size=(n, k))):
        F[5, :2] = F[5].max() + 1.0  # a tie for the top class: the first wins
        assert ref.set_scores(F) == fast.set_scores(F)
        np.testing.assert_array_equal(ref.p, fast.p)
        np.testing.assert_array_equal(ref.pc, fast.pc)


@pytest.mark.parametrize("weighted", [False, True])
def test_adaboost_weights_are_the_references_with_either_exp(weighted, exp_source):
    # AdaBoost.MH's weights, loss and Hamming loss with NumPy's exp or the C library's on the
    # threads (where they are the same function): the reference's, bit for bit, on one row
    # block and on two (n K >= PARALLEL_SCORES)
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.cpu import CpuVectorBackend

    rng = np.random.default_rng(17)
    for n, k in ((300, 5), (3000, 30)):
        codes = rng.integers(0, 8, size=(n, 2)).astype(np.uint8)
        y = rng.integers(0, k, size=n)
        w = rng.uniform(0.2, 3.0, size=n) if weighted else None
        kwargs = dict(n_bins=8, missing_code=255, link="exp", labels=None)
        ref = NumpyBackend(codes, y, w, k, **kwargs)
        fast = CpuVectorBackend(codes, y, w, k, n_threads=2, **kwargs)
        assert fast.libm == exp_source
        for F in (np.zeros((n, k)), rng.normal(size=(n, k)), 30.0 * rng.normal(size=(n, k))):
            assert ref.set_scores(F) == fast.set_scores(F)
            np.testing.assert_array_equal(ref.W, fast.W)
            assert ref.hamming_loss == fast.hamming_loss
    assert n * k >= kernels.PARALLEL_SCORES


@pytest.mark.parametrize("link", ["exp", "klogit"])
def test_vector_splits_of_equal_features_go_to_the_first(link):
    # the compiled vector splits scan feature blocks on threads of their own: where features
    # tie (here all are the same column), the first feature's candidate wins, as in the reference
    from gpuboost.backends.cpu import CpuVectorBackend

    rng = np.random.default_rng(5)
    n, d, k, n_bins = 500, 6, 5, 9
    codes = np.repeat(rng.integers(0, n_bins, size=(n, 1)), d, axis=1).astype(np.uint8)
    y = (codes[:, 0] * k // n_bins).astype(np.int64)
    kwargs = dict(n_bins=n_bins, missing_code=255, link=link)
    ref = NumpyBackend(codes, y, None, k, **kwargs)
    fast = CpuVectorBackend(codes, y, None, k, n_threads=2, **kwargs)
    F = rng.normal(size=(n, k))
    ref.set_scores(F)
    fast.set_scores(F)
    hists = ref.vector_histograms(np.array([[0, n]]))
    want, got = ref.find_vector_splits(hists, 1), fast.find_vector_splits(hists, 1)
    assert want.gain[0] > 0 and want.feature[0] == 0
    for name in ("gain", "feature", "bin", "missing_left"):
        np.testing.assert_array_equal(getattr(want, name), getattr(got, name))


def test_numpy_sum_is_numpys():
    # the compiled vector stages sum as NumPy's sum does (pairwise) where the reference calls it:
    # AdaBoost.MH's edges over classes and its weights' total, the multi-label loss
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(3)
    for K in list(range(1, 41)) + [127, 128, 129, 300, 1000]:
        x = np.abs(rng.normal(size=(20, K)) * np.exp(5 * rng.normal(size=(20, K))))
        want = np.abs(x).sum(axis=-1)
        got = np.array([kernels._numpy_sum(row, 0, K) for row in x])
        np.testing.assert_array_equal(want, got)
    assert any(kernels._numpy_sum(x[j], 0, 300) != sum(x[j]) for j in range(20))  # not a plain loop's
    # and a whole 1-D array's sum (grow_and_score's loss, the sum of the rows' loss terms), signs
    # mixed as a weighted loss's are not, lengths of the data sets and around the block sizes
    for n in [1, 7, 8, 9, 255, 256, 257, 1000, 7494, 16000, 16001, 58101]:
        v = rng.normal(size=n) * np.exp(4 * rng.normal(size=n))
        assert kernels._numpy_sum(v, 0, n) == v.sum(), n


@pytest.mark.parametrize("algorithm, multilabel", [("adaboostmh", False), ("adaboostmh", True),
                                                    ("klogitboost", False), ("aoso", True), ("mart", True),
                                                    ("klogitboost", True)])
def test_vector_algorithms_train_the_references_models(algorithm, multilabel, monkeypatch):
    # device="cpu" trains these with CpuVectorBackend: the same model as the NumPy reference
    from gpuboost import BoostClassifier

    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 5))
    X[:, 4] = X[:, 4] > 0.8  # a sparse feature (0 in most rows)
    X[rng.random(X.shape) < 0.05] = np.nan
    if multilabel:
        y = np.stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0.5, X[:, 3] < -0.3], axis=1).astype(int)
        y[:, 0] |= ~y.any(axis=1)  # every row has a label (the LogitBoost family warns of the others)
    else:
        y = (X[:, 0] > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 0.5) * 2
    models = {}
    for choice in ("numba", "numpy"):
        monkeypatch.setenv("GPUBOOST_CPU_BACKEND", choice)
        models[choice] = BoostClassifier(algorithm=algorithm, n_estimators=15, max_leaves=6, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(models["numba"].decision_function(X), models["numpy"].decision_function(X))
    np.testing.assert_array_equal(models["numba"].train_loss_, models["numpy"].train_loss_)



def test_backends_train_on_uint8_codes_wherever_the_bins_fit_them():
    # max_bins above 255 bins in uint16 (its missing code is max_bins), but the backends move the
    # missing values to n_bins: 255 value bins and the missing one fit uint8, 256 do not
    from gpuboost.backends.base import training_codes

    for n_bins, dtype in ((255, np.uint8), (256, np.uint16), (17, np.uint8)):
        codes = np.array([[0, n_bins - 1], [1000, 3]], dtype=np.uint16)
        for backend in (NumpyBackend, CpuBackend):
            made = backend(codes, np.array([0, 1]), None, 2, n_bins=n_bins, missing_code=1000).codes
            assert made.dtype == dtype and made.flags.c_contiguous, (backend, n_bins)
            np.testing.assert_array_equal(made, [[0, n_bins - 1], [n_bins, 3]])
    uint8 = np.array([[255, 4]], dtype=np.uint8)
    assert training_codes(uint8, 5, 255).dtype == np.uint8 and training_codes(uint8, 5, 255).tolist() == [[5, 4]]


@pytest.mark.slow
def test_uint16_codes_train_the_references_model(monkeypatch):
    # more than 255 bins: the compiled tree on uint16 codes (its histograms and partitions by
    # halves too: from 40 rows a code, 2 x 4096 rows) builds the reference's model, and
    # max_bins=1000 on data of 17 distinct values a feature builds max_bins=255's, on uint8 codes
    from gpuboost import BoostClassifier
    from gpuboost.backends.base import hist_halves_rows

    rng = np.random.default_rng(16)
    n = 30_000
    X = np.round(rng.normal(size=(n, 4)) * 40) / 40  # about 260-300 distinct values a feature
    X[rng.random(X.shape) < 0.03] = np.nan
    y = (np.nan_to_num(X[:, 0]) > 0).astype(int) + (np.nan_to_num(X[:, 1] * X[:, 2]) > 0.2) * 2
    models = {}
    for choice in ("numba", "numpy"):
        monkeypatch.setenv("GPUBOOST_CPU_BACKEND", choice)
        models[choice] = BoostClassifier(n_estimators=6, max_leaves=12, max_bins=400, n_jobs=2).fit(X, y)
    n_bins = int(models["numba"]._bin_mapper.n_bins_.max())
    assert n_bins > 255  # (uint16 codes in the backends)
    root = models["numba"].trees_[0]  # (both children of the root histogrammed by halves)
    assert min(root.n_samples[root.left[0]], root.n_samples[root.right[0]]) >= hist_halves_rows(n_bins + 1)
    for a, b in zip(models["numpy"].trees_, models["numba"].trees_, strict=True):
        for field in ("feature", "bin", "pair", "missing_left", "left", "right", "n_samples", "value"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(models["numba"].decision_function(X), models["numpy"].decision_function(X))
    monkeypatch.setenv("GPUBOOST_CPU_BACKEND", "numba")
    digits = np.floor(np.abs(X[:3000]) * 4) % 17  # (NaN stays NaN: missing values)
    few = [BoostClassifier(n_estimators=4, max_leaves=8, max_bins=b).fit(
        digits[:2000], y[:2000], eval_set=[(digits[2000:], y[2000:3000])]) for b in (255, 1000)]
    np.testing.assert_array_equal(few[0].decision_function(digits), few[1].decision_function(digits))
    np.testing.assert_array_equal(few[0].eval_loss_[0], few[1].eval_loss_[0])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_sparse_only_data_trains_the_references_model(n_jobs, monkeypatch):
    # every feature sparse (no wide one): binary columns, a constant one (its one code is the
    # default, no other code) and a mostly missing one (the missing code is the default)
    from gpuboost import BoostClassifier

    rng = np.random.default_rng(43)
    n = 300
    X = (rng.random((n, 5)) < 0.2).astype(float)
    X[:, 2] = 1.0
    X[rng.random(n) < 0.7, 3] = np.nan
    y = (X[:, 0] + 2 * X[:, 1] + rng.integers(0, 2, n)) % 3
    w = rng.uniform(0.5, 2.0, size=n)
    models = {}
    for choice in ("numba", "numpy"):
        monkeypatch.setenv("GPUBOOST_CPU_BACKEND", choice)
        models[choice] = BoostClassifier(n_estimators=8, max_leaves=5, n_jobs=n_jobs).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(models["numba"].decision_function(X), models["numpy"].decision_function(X))
    np.testing.assert_array_equal(models["numba"].train_loss_, models["numpy"].train_loss_)

@pytest.mark.parametrize("weighted", [False, True])
def test_vector_backend_pair_histograms_are_the_references(weighted):
    # multi-label AOSO / MART / robust LogitBoost: their pairs (eq 33 with the cross sums by
    # halves, eq 32), pair histograms (by halves from HALVES_ROWS rows, as halved_histogram sums
    # them), best splits and node sums, compiled, are the reference's
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(12)
    n, k = kernels.HALVES_ROWS + 900, 3
    ref, fast = _multilabel_backends(rng, n, 4, k, 20, weighted, label_rate=0.5, missing_rate=0.05)
    F = rng.normal(size=(n, k))
    assert ref.set_scores(F) == fast.set_scores(F)
    segments = np.array([[0, n], [0, 1000], [1000, n], [5, 5]])  # the first and third of HALVES_ROWS rows or more
    np.testing.assert_array_equal(ref.select_pairs(segments, "eq32"), fast.select_pairs(segments, "eq32"))
    pairs = ref.select_pairs(segments, "eq33")
    np.testing.assert_array_equal(pairs, fast.select_pairs(segments, "eq33"))
    for first_order in (False, True):
        hists = ref.histograms(segments, pairs, first_order)
        np.testing.assert_array_equal(hists, fast.histograms(segments, pairs, first_order))
        for min_samples_leaf in (1, 50):
            want, got = ref.find_splits(hists, min_samples_leaf), fast.find_splits(hists, min_samples_leaf)
            found = np.isfinite(want.gain)
            assert found[:3].all()
            for name in ("gain", "sums"):
                np.testing.assert_array_equal(getattr(want, name), getattr(got, name))
            for name in ("feature", "bin", "missing_left"):
                np.testing.assert_array_equal(getattr(want, name)[found], getattr(got, name)[found])
    np.testing.assert_array_equal(ref.node_sums(segments, pairs), fast.node_sums(segments, pairs))
    pairs[:, 1] = -1  # MART's and robust LogitBoost's single class
    np.testing.assert_array_equal(ref.histograms(segments, pairs), fast.histograms(segments, pairs))
    np.testing.assert_array_equal(ref.node_sums(segments, pairs), fast.node_sums(segments, pairs))


def test_the_ab_script_replaces_and_refuses_as_it_says(tmp_path, monkeypatch):
    # benchmarks/ab_grow_tree.py compiles the kernels' source twice, B with replacements: a
    # replacement whose text is not in the source stops it with a message, before any fit
    import importlib.util
    import sys

    from conftest import REPO

    spec = importlib.util.spec_from_file_location("ab_grow_tree", REPO / "benchmarks" / "ab_grow_tree.py")
    ab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ab)
    monkeypatch.setattr(sys, "argv", ["ab_grow_tree.py", "pendigits", "NOT IN THE SOURCE=>x"])
    with pytest.raises(SystemExit, match="is not in the kernels' source"):
        ab.main()


def test_leaf_steps_are_the_rate_times_node_vectors():
    # the compiled steps of a tree whose leaves all have a pair (kernels.pair_steps) are the
    # reference's learning_rate x node_vectors bit for bit, signs of zeros included; trees with
    # scalar (s = -1) or centred (s = -2) leaves, and K-LogitBoost's vectors, take node_vectors
    from conftest import leaf_tree

    from gpuboost.backends.base import Backend

    rng = np.random.default_rng(5)
    n, k = 11, 6
    (_, fast), *_ = pair_of_backends(0, 50, 3, k, 10, False, 0.0, np.uint8)
    pair = np.array([rng.choice(k, 2, replace=False) for _ in range(n)], dtype=np.int32)
    value = rng.normal(size=n)
    value[3], value[7] = -0.0, 0.0
    leaves = np.array([0, 3, 4, 7, 10])
    for lr in (0.1, 1.0, 0.37):
        tree = leaf_tree(pair, value)
        got = fast.leaf_steps(tree, leaves, lr)
        want = lr * tree.node_vectors(k, leaves)
        assert np.array_equal(got.view(np.int64), want.view(np.int64))
        assert np.array_equal(got.view(np.int64), Backend.leaf_steps(fast, tree, leaves, lr).view(np.int64))
    for s in (-1, -2):
        mixed = pair.copy()
        mixed[4, 1] = s
        tree = leaf_tree(mixed, value)
        want = 0.1 * tree.node_vectors(k, leaves)
        assert np.array_equal(fast.leaf_steps(tree, leaves, 0.1).view(np.int64), want.view(np.int64))
    tree = leaf_tree(pair, value, vector=rng.normal(size=(n, k)))
    np.testing.assert_array_equal(fast.leaf_steps(tree, leaves, 0.1), 0.1 * tree.vector[leaves])


def test_kernel_node_values_are_losses_node_value_bit_for_bit():
    # grow_tree computes the nodes' values itself (_node_value): the reference's NumPy
    # operations and np.clip's rules, signs of zeros, an H of 0 and NaN included
    from gpuboost import losses
    from gpuboost.backends import _numba_cpu as kernels

    G = np.array([1.5, -2.0, 0.0, -0.0, 3.0, np.nan, 1e300, -7.0, 2.0, 0.3, -0.1])
    H = np.array([0.5, 0.0, 1.0, 2.0, 0.0, 1.0, 1e-300, 3.0, np.inf, 0.1, 0.1])
    for clip, scale in ((np.inf, 1.0), (0.5, 0.75), (2.0, 1.0), (50.0, 24 / 25), (3.0, 1.0)):
        with np.errstate(over="ignore"):  # 1e300 / 1e-300: inf, clipped
            want = losses.node_value(G, H, clip, scale)
        got = np.array([kernels._node_value(g, h, clip, scale) for g, h in zip(G, H)])
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        assert np.array_equal(got[~nan].view(np.int64), want[~nan].view(np.int64)), (clip, scale)


@pytest.mark.parametrize("k", [3, 10, 16, 17, 26, 32, 33])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_softmax_root_sums_are_the_row_blocks_class_sums(k, weighted, n_threads, exp_source):
    # scoring sums the next root's class sums with p, per row block (K <= ROOT_SUMS_CLASSES,
    # 16 classes at 4 lanes, 32 at 8): each block's G, Hd and A are node_class_sums' over its
    # rows, bit for bit, so that one block is the root's own sums (grow_tree takes them as
    # summed); p is the reference's either way
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(k)
    n = 3000  # n k >= PARALLEL_SCORES from 26 classes: two row blocks on two threads
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.2, 3.0, size=n) if weighted else None
    fast = CpuBackend(np.zeros((n, 1), np.uint8), y, w, k, n_bins=2, missing_code=255, n_threads=n_threads)
    ref = NumpyBackend(np.zeros((n, 1), np.uint8), y, w, k, n_bins=2, missing_code=255)
    F = 3.0 * rng.normal(size=(n, k))
    F[:5] = 60.0 * np.eye(k)[y[:5]]  # converged rows: pct is not 1 - p there
    for rescore in range(2):
        fast.set_scores(F)
        ref.set_scores(F)
        np.testing.assert_array_equal(fast.p, ref.p)
        if k > kernels.ROOT_SUMS_CLASSES:
            assert fast._root_blocks == 0
            continue
        blocks = fast._root_blocks
        assert blocks == (2 if n_threads == 2 and n * k >= kernels.PARALLEL_SCORES else 1)
        for b in range(blocks):
            lo, hi = b * n // blocks, (b + 1) * n // blocks
            G, Hd, A = np.empty(k), np.empty(k), np.empty(k)
            kernels.node_class_sums(np.arange(lo, hi), 0, hi - lo, fast.p, fast.pct, fast.top, fast.y, fast.weight,
                                    weighted, G, Hd, A)
            for got, want in zip(fast._root_sums[b], (G, Hd, A)):
                assert np.array_equal(got.view(np.int64), want.view(np.int64))
        F = F + 0.5 * rng.normal(size=(n, k))


@pytest.mark.parametrize("scale", [None, 1.0, 8.0])  # None: every class ties
def test_root_block_sums_pick_the_rows_pair_or_none(scale):
    # the root's class sums as the sum of its row blocks' (block_stats): their bounds hold, and
    # the pair they may pick (certain_r, certain_s) is the one its own row-order sums pick
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(8)
    certain = 0
    for trial in range(30):
        K = int(rng.integers(2, 9))
        m = int(rng.integers(2, 5))
        if scale is None:  # F = 0 and every class as many rows in each block: ties but for rounding
            n = m * K * int(rng.integers(5, 40))
            F = np.zeros((n, K))
            y = np.arange(n) % K
        else:
            n = int(rng.integers(m, 500))
            F = scale * rng.normal(size=(n, K))
            y = rng.integers(0, K, size=n)
        backend = CpuBackend(np.zeros((n, 1), np.uint8), y, None, K, n_bins=2, missing_code=255)
        backend.set_scores(F)
        p, pct, top = backend.p, backend.pct, backend.top
        w = rng.uniform(0.5, 2.0, size=n) if trial % 3 == 1 and scale is not None else np.ones(n)
        rows = np.arange(n)
        blocks = np.empty((m, 3, K))
        for b in range(m):
            part = rows[b * n // m:(b + 1) * n // m]
            kernels.node_class_sums(part, 0, len(part), p, pct, top, y, w, True, *blocks[b])
        stats = np.empty((kernels.N_STATS, K))
        kernels.block_stats(blocks, m, n, stats)
        own = _class_sums_direct(rows, p, pct, top, y, w)
        certain += _checked_pick(stats, own, rows, p, w, False)[0]
    if scale is None:
        assert certain == 0  # every pick among tied classes is left to the rows
    else:
        assert certain >= 20


def _two_threads_or_skip():
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here")


@contextlib.contextmanager
def _two_concurrent_threads():
    """numba's parallel regions on two threads that run at once (kernels._barrier may wait),
    else the test is skipped."""
    import numba

    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.cpu import _threads

    _two_threads_or_skip()
    with _threads(2):
        if not kernels._concurrent() or numba.threading_layer() not in ("omp", "workqueue"):
            pytest.skip("two threads do not run a region at once here")
        yield


def test_regions_are_concurrent_only_on_two_threads():
    # grow_tree lets a region's two threads wait for each other only where _concurrent says
    # they run at once: not on one thread (a wait there would never end)
    import numba

    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.cpu import _threads

    _two_threads_or_skip()
    with _threads(1):
        assert not kernels._concurrent()
    with _threads(2):
        assert kernels._concurrent() == (numba.threading_layer() in ("omp", "workqueue"))


def test_barrier_makes_each_threads_writes_visible_to_the_other():
    # kernels._barrier between two phases: after it, each thread reads what the other wrote
    # before it, in every one of many rounds (and both get through every barrier)
    from numba import njit, prange

    from gpuboost.backends import _numba_cpu as kernels

    @njit(parallel=True)
    def rounds(bar, seen, n):
        for thread in prange(2):
            t = np.int64(thread)
            for k in range(n):
                seen[t, k] = -1
                kernels._barrier(bar)
                seen[t, k] = k  # written after the other thread's -1 ...
                kernels._barrier(bar)
                seen[t, n + k] = seen[1 - t, k]  # ... and read after its k
                kernels._barrier(bar)

    with _two_concurrent_threads():
        n = 2000
        bar = np.zeros(kernels.BARRIER_SIZE, np.int64)
        seen = np.zeros((2, 2 * n), np.int64)
        rounds(bar, seen, n)
    np.testing.assert_array_equal(seen[:, n:], np.tile(np.arange(n), (2, 1)))
    assert bar[0] == 0 and bar[kernels.BARRIER_GENERATION] == 3 * n


def test_a_long_wait_at_the_barrier_ends():
    # a thread that waits milliseconds (millions of spin hints) for the other: the wait ends
    # when the other thread arrives, with its writes visible, whichever thread is late
    from numba import njit, prange

    from gpuboost.backends import _numba_cpu as kernels

    @njit(parallel=True)
    def late(bar, out, work):
        for thread in prange(2):
            t = np.int64(thread)
            for late_one in range(2):
                if t == late_one:  # milliseconds of work while the other thread spins
                    acc = 0.0
                    for i in range(work):
                        acc += math.sqrt(i + t)
                    out[t, late_one] = acc
                kernels._barrier(bar)
                out[t, 2 + late_one] = out[late_one, late_one]  # the late thread's result, seen after

    with _two_concurrent_threads():
        bar = np.zeros(kernels.BARRIER_SIZE, np.int64)
        out = np.zeros((2, 4))
        late(bar, out, 3_000_000)
    assert out[0, 0] > 0 and out[1, 1] > 0
    np.testing.assert_array_equal(out[:, 2:], [[out[0, 0], out[1, 1]], [out[0, 0], out[1, 1]]])
    assert bar[0] == 0 and bar[kernels.BARRIER_GENERATION] == 2


@pytest.mark.parametrize("weighted", [False, True])
def test_large_batches_in_one_region_grow_the_same_trees(weighted):
    # a large batch's pairs, histograms and splits in one region whose threads wait for each
    # other (stage LARGE), or in three regions: the same trees, bit for bit
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(17)
    n, d, k, n_bins = 12000, 8, 6, 32
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    y = (codes[:, 0] // 6 + (codes[:, 1] > 16) + codes[:, 2] // 11) % k
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    fast = CpuBackend(codes, y, w, k, n_bins=n_bins, missing_code=255, n_threads=2)
    if fast.n_threads < 2 or not fast._may_wait:
        pytest.skip("two threads do not run a region at once here")
    assert n // 4 >= kernels._hist_halves_rows(n_bins + 1)  # batches of LARGE
    F = np.zeros((n, k))
    for _ in range(4):
        fast.set_scores(F)
        grown = []
        for may_wait in (True, False):
            fast._may_wait = may_wait
            tree, seg, leaves = fast.grow_tree(GrowerParams(), bins_as_thresholds)
            grown.append((tree, seg, leaves, fast.rows.copy()))
        fast._may_wait = True
        (a, seg_a, leaves_a, rows_a), (b, seg_b, leaves_b, rows_b) = grown
        for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples", "value", "gain"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_array_equal(seg_a, seg_b)
        np.testing.assert_array_equal(rows_a, rows_b)
        fast.update_scores(F, seg_b, 0.1 * b.node_vectors(k)[leaves_b])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_process_forked_after_openmp_started_uses_the_reference(small_multiclass):
    """numba terminates a forked child at its first parallel kernel when the parent had started
    GNU OpenMP's threads (a 'fork' pool hung). Such a child trains and predicts with the NumPy
    reference backend instead, with a RuntimeWarning: the same model as the parent's compiled fit."""
    import multiprocessing

    from gpuboost import BoostClassifier

    X, y = small_multiclass
    model = BoostClassifier(n_estimators=4, max_leaves=6).fit(X, y)  # the parent's OpenMP threads start
    with multiprocessing.get_context("fork").Pool(1) as pool:
        # (a child that numba terminates never answers: the timeout makes that a failure, not a hang)
        proba, refit, contributions, warned = pool.apply_async(_in_forked_child, (model, X, y)).get(timeout=300)
    np.testing.assert_array_equal(contributions, model.predict_contributions(X))  # (serial TreeSHAP there)
    np.testing.assert_allclose(proba, model.predict_proba(X), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(refit, model.predict_proba(X), rtol=1e-12, atol=1e-15)
    assert warned == ["RuntimeWarning"] or numba.threading_layer() != "omp"


def _in_forked_child(model, X, y):
    import warnings

    from gpuboost import BoostClassifier

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proba = model.predict_proba(X)
        refit = BoostClassifier(n_estimators=4, max_leaves=6).fit(X, y).predict_proba(X)
        contributions = model.predict_contributions(X)
    return proba, refit, contributions, [type(w.message).__name__ for w in caught if "forked" in str(w.message)]


def test_a_node_whose_sums_broke_down_is_not_split():
    """Where every valid candidate's gain is +inf (the node's Hessian sum below 0, as weights of
    1e+-150 can leave it after a sparse feature's default bin is folded), there is no split, in
    the reference and the compiled kernel alike (the kernel split at candidate 0, which held no
    row on one side: empty children, found by a differential fuzz of the two backends)."""
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends.numpy import best_splits

    n_codes = 4
    hist = np.zeros((2, n_codes, 3))
    hist[0, 0] = [1e160, -1.0, 10.0]  # feature 0: every row in bin 0; the totals' H < 0
    hist[1, 0] = [0.1, 1.0, 5.0]  # feature 1: two bins of 5 rows
    hist[1, 1] = [0.2, 1.0, 5.0]
    with np.errstate(all="ignore"):
        reference = best_splits(hist[None], hist[None, 0].sum(axis=1), 1)
    lanes = np.zeros((2, n_codes, kernels.LANES))
    lanes[..., :3] = hist
    with np.errstate(all="ignore"):
        gain = kernels.best_split(lanes, lanes, False, 1, 0.0, np.ones(2, bool), np.empty(3), np.empty((n_codes, 3)),
                                  np.empty((n_codes, 3)), np.empty(2 * 2 * n_codes))[0]
    assert reference.gain[0] == gain == -np.inf


def _fit_with(backend, X, y, w, n_jobs=1, **params):
    """A fit on the compiled backend ("numba") or the NumPy reference ("numpy")."""
    import warnings

    from gpuboost import BoostClassifier
    from gpuboost.backends import REFERENCE_ENV

    saved = os.environ.get(REFERENCE_ENV)
    os.environ[REFERENCE_ENV] = backend
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # (multi-label rows without labels warn, alike on both)
            return BoostClassifier(device="cpu", n_jobs=n_jobs, **params).fit(X, y, sample_weight=w)
    finally:
        if saved is None:
            del os.environ[REFERENCE_ENV]
        else:
            os.environ[REFERENCE_ENV] = saved


def _same_trees(a, b):
    assert len(a.trees_) == len(b.trees_)
    for i, (s, t) in enumerate(zip(a.trees_, b.trees_)):
        for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples"):
            np.testing.assert_array_equal(getattr(s, name), getattr(t, name), err_msg=f"tree {i}: {name}")
        np.testing.assert_allclose(s.value, t.value, rtol=1e-9, atol=1e-12, err_msg=f"tree {i}: value")


def test_extreme_weights_give_the_references_trees(monkeypatch):
    """The fuzz case that found the +inf gain (multi-label robust LogitBoost, weights 1e-150 to
    1e150, constant and two-valued columns): the compiled trees are the reference's, and no
    node is empty (the compiled backend grew three empty nodes in tree 20). fit refuses weights
    above MAX_WEIGHT now; the backends must agree on them all the same (the check lifted)."""
    from conftest import REPO

    from gpuboost import _validation

    monkeypatch.setattr(_validation, "MAX_WEIGHT", np.inf)
    data = np.load(REPO / "tests" / "fixtures" / "extreme_weights_multilabel.npz")
    params = dict(algorithm="robustlogit", n_estimators=3, max_leaves=12, learning_rate=0.1)
    compiled = _fit_with("numba", data["X"], data["Y"], data["w"], **params)
    _same_trees(compiled, _fit_with("numpy", data["X"], data["Y"], data["w"], **params))
    assert all((tree.n_samples > 0).all() for tree in compiled.trees_)


def _edge_case(seed):
    """Small data of the kinds a differential fuzz of the backends covered (constant, two-valued,
    tied, mostly missing, infinite and one-hot columns, duplicated rows, zero and extreme
    weights), an algorithm and settings, all drawn from the seed."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(30, 200)), int(rng.integers(1, 8))
    columns = []
    for _ in range(d):
        kind = rng.integers(6)
        if kind == 0:
            c = rng.normal(size=n)
        elif kind == 1:
            c = np.full(n, rng.choice([0.0, -3.5, 1e300]))
        elif kind == 2:
            c = rng.choice(rng.normal(size=2), size=n)
        elif kind == 3:
            c = rng.normal(size=n)
            c[rng.random(n) < 0.8] = np.nan
            c[rng.random(n) < 0.1] = np.inf
        elif kind == 4:
            c = (rng.random(n) < 0.1).astype(float)  # a sparse (one-hot) feature
        else:
            c = rng.integers(0, 5, size=n).astype(float)
        columns.append(c)
    X = np.stack(columns, axis=1)
    if rng.random() < 0.3:
        X[rng.random(n) < 0.5] = X[0]  # many identical rows
    algorithm = ["aoso", "mart", "robustlogit", "logitboost", "abcmart", "klogitboost", "adaboostmh"][seed % 7]
    K = int(rng.choice([2, 3, 7, 20]))
    if algorithm in ("aoso", "mart", "klogitboost", "adaboostmh") and rng.random() < 0.3:
        y = (rng.random((n, min(K, 5))) < 0.4).astype(int)  # multi-label, some rows empty
        y[:, 0] = 1 - y[:, 1]  # (two labels that are not constant)
    else:
        y = rng.integers(0, K, size=n)
        y[:2] = [0, 1]
    w = None
    if rng.random() < 0.5:
        w = rng.choice([0.0, 1e-8, 0.5, 1.0, 3.0, 1e8], size=n)
        w[:2] = 1.0
    params = dict(algorithm=algorithm, n_estimators=4, max_leaves=int(rng.integers(2, 13)),
                  max_bins=int(rng.choice([2, 3, 16, 255])), min_samples_leaf=int(rng.choice([1, 1, 5, n // 3])),
                  pair_rule=str(rng.choice(["eq33", "eq32"])), learning_rate=float(rng.choice([0.1, 1.0])))
    return X, y, w, params


@pytest.mark.parametrize("seed", range(14))
def test_edge_cases_give_the_references_trees_on_any_thread_count(seed):
    """Edge-case data of every kind (_edge_case): the compiled backend grows the reference's
    trees (a differential fuzz of 858 such cases found one difference, the +inf gain), and the
    same model on one thread and two, bit for bit."""
    X, y, w, params = _edge_case(seed)
    one = _fit_with("numba", X, y, w, n_jobs=1, **params)
    two = _fit_with("numba", X, y, w, n_jobs=2, **params)
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))
    _same_trees(one, _fit_with("numpy", X, y, w, **params))


def test_vector_load_and_store_touch_their_lanes_only():
    """_vload and _vstore (the kernels' vectors of VW doubles, masked loads and stores): n lanes
    read and written, 0 to VW; nothing past the n-th element is read into the vector or written,
    at the array's end included (a full vector there would read or write outside the array)."""
    from numba import njit

    from gpuboost.backends._numba_cpu import VW, _vadd, _vload, _vmax_lane, _vsplat, _vstore

    @njit
    def load_add_store(src, dst, i, k0, n):
        _vstore(dst, i, k0, _vadd(_vload(src, i, k0, n), _vsplat(0.5)), n)

    @njit
    def largest_lane(src, i, k0, n):
        return _vmax_lane(_vload(src, i, k0, n))

    rows, cols = 3, 2 * VW + 3
    src = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) + 1.0
    for i in range(rows):
        for k0 in (0, VW, cols - VW, cols - 3):
            for n in range(min(VW, cols - k0) + 1):
                dst = np.full((rows, cols), -7.0)
                load_add_store(src, dst, i, k0, n)
                want = np.full((rows, cols), -7.0)
                want[i, k0:k0 + n] = src[i, k0:k0 + n] + 0.5
                np.testing.assert_array_equal(dst, want, err_msg=f"row {i}, lanes {k0}:{k0 + n}")
                # the lanes past n are 0.0 (src < 0: the largest lane is 0.0 unless all are read)
                top = largest_lane(-src, i, k0, n)
                assert top == (np.max(-src[i, k0:k0 + n]) if n == VW else 0.0)
    flat = np.arange(5.0)
    out = np.zeros(5)
    load_add_store(flat, out, 0, 1, 4)  # 1-d: the last four, to the array's end
    np.testing.assert_array_equal(out, [0.0, 1.5, 2.5, 3.5, 4.5])


def test_the_vector_width_follows_the_features_numba_compiles_for(monkeypatch):
    """VW is 8 where numba's CPU features (NUMBA_CPU_FEATURES, else the host's) include
    AVX-512F, else 4: read from the features string, a disabled "-avx512f" included."""
    import numba

    from gpuboost.backends import _numba_cpu as kernels

    for features, avx512 in (("+avx2,+avx512f,+fma", True), ("+avx2,-avx512f,+fma", False), ("+avx2", False),
                             ("+avx512fp16,+avx2", False)):
        monkeypatch.setattr(numba.config, "CPU_FEATURES", features)
        assert kernels._has_avx512() is avx512, features
    monkeypatch.setattr(numba.config, "CPU_FEATURES", None)  # the host's, as numba reads them
    host = kernels._has_avx512()
    assert kernels.VW == (8 if host else 4)
    if numba.config.ENABLE_AVX:  # a numba without its reading of the host: LLVM's, the same here
        import numba.core.codegen

        monkeypatch.delattr(numba.core.codegen, "get_host_cpu_features")
        assert kernels._has_avx512() is host


_FORKED_WITHOUT_GPUBOOST = r'''
import multiprocessing, warnings
import numba
import numpy as np

@numba.njit(parallel=True)
def total(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i]
    return s

def child(_):
    from gpuboost import BoostClassifier
    from gpuboost.backends import backend_class
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proba = BoostClassifier(n_estimators=2, max_leaves=4).fit(X, y).predict_proba(X)
    forked = sum("forked" in str(w.message) for w in caught)
    return backend_class("cpu").__name__, bool(np.isfinite(proba).all()), forked

if __name__ == "__main__":
    total(np.ones(1000))  # this process's GNU OpenMP threads start; gpuboost is not imported
    print("layer", numba.threading_layer())
    with multiprocessing.get_context("fork").Pool(1) as pool:
        print("child", *pool.apply_async(child, (0,)).get(timeout=240))
'''


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.isdir("/proc/self/task"), reason="needs fork and /proc")
def test_a_child_forked_from_openmp_before_gpuboost_was_imported_uses_the_reference(tmp_path):
    """The fork hook above exists only where the parent imported gpuboost: a parent that ran its
    own numba parallel code and then forked left a child that numba terminated at gpuboost's
    first kernel (a pool that never answered). The child tells from numba's state (the layer
    started) and its single thread that its OpenMP was inherited."""
    script = tmp_path / "fork_child.py"
    script.write_text(_FORKED_WITHOUT_GPUBOOST)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "NUMBA_NUM_THREADS": "2"})
    assert result.returncode == 0, result.stderr[-2000:]
    if "layer omp" not in result.stdout:
        pytest.skip(f"numba's threading layer here is not GNU OpenMP ({result.stdout.strip()})")
    assert "child NumpyBackend True 1" in result.stdout, result.stdout + result.stderr[-2000:]



_NO_CACHE_LOCATOR = r"""
import os, warnings
from numba.core import caching

impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
impl._locator_classes = [caching.UserProvidedCacheLocator]  # (numba's folders unwritable: only NUMBA_CACHE_DIR's)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from gpuboost.backends import _numba_cpu as kernels
import numba

print("warned", sum("numba cannot cache gpuboost's compiled kernels" in str(w.message) for w in caught))
print("folder", numba.config.CACHE_DIR, os.environ["NUMBA_CACHE_DIR"] == numba.config.CACHE_DIR)
print("kernel", kernels._hist_halves_rows(17))
print("cached", any(name.endswith(".nbi") for _, _, names in os.walk(numba.config.CACHE_DIR) for name in names))
"""


def test_kernels_are_cached_in_a_temporary_folder_where_numba_has_none(tmp_path):
    """Where neither the package's folder nor the user's cache folder is writable (a read-only
    install run by a user without a home), numba refused to define a cached kernel at all, and
    nothing could be fitted: the kernels are then cached in a folder of the temporary
    directory, with a warning that names NUMBA_CACHE_DIR."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    result = subprocess.run([sys.executable, "-c", _NO_CACHE_LOCATOR], capture_output=True, text=True, timeout=600,
                            env={**env, "TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["warned"] == "1"
    assert lines["folder"] == f"{tmp_path / ('gpuboost-numba-cache-' + str(os.getuid()))} True"
    assert lines["kernel"] == str(kernels_hist_halves_rows_17()) and lines["cached"] == "True"


def kernels_hist_halves_rows_17():
    from gpuboost.backends import _numba_cpu

    return _numba_cpu._hist_halves_rows(17)


_FITS_IN_THREADS = r"""
import threading
import numba
import numpy as np
from gpuboost import BoostClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 6))
y = (X[:, 0] > 0) + 2 * (X[:, 1] > 0.5) + (X[:, 2] > 1)
Y = np.stack([X[:, 0] > 0, X[:, 1] > 0, X[:, 0] + X[:, 2] > 0.5], axis=1).astype(int)
jobs = [("aoso", y), ("klogitboost", y), ("adaboostmh", y), ("aoso", Y), ("mart", y)]


def run(algorithm, target):
    model = BoostClassifier(n_estimators=12, max_leaves=6, algorithm=algorithm, n_jobs=2).fit(X, target)
    out = [model.predict_proba(X)]
    if algorithm == "aoso" and target.ndim == 1:
        out.append(model.predict_contributions(X[:200]))
    return out


alone = [run(*job) for job in jobs]
threaded, errors = [None] * len(jobs), []


def work(j):
    try:
        threaded[j] = run(*jobs[j])
    except Exception as error:
        errors.append(repr(error))


threads = [threading.Thread(target=work, args=(j,)) for j in range(len(jobs))]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("layer", numba.threading_layer())
print("errors", errors)
print("same", all(len(a) == len(b) and all(np.array_equal(u, v) for u, v in zip(a, b))
                  for a, b in zip(alone, threaded)))
"""


@pytest.mark.parametrize("layer", ["workqueue", "default"])
def test_models_fitted_in_python_threads_at_once(layer):
    """numba's workqueue threading layer (its fallback without OpenMP or TBB: numba from PyPI on
    macOS) is not thread-safe: numba terminated the process when two Python threads fitted at
    once. The kernels are then called one thread at a time; with any layer, models fitted in
    threads at once are those fitted one after another."""
    result = subprocess.run([sys.executable, "-c", _FITS_IN_THREADS], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "NUMBA_NUM_THREADS": "2", "NUMBA_THREADING_LAYER": layer})
    assert result.returncode == 0, result.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    if layer == "workqueue":
        assert lines["layer"] == "workqueue"
    assert lines["errors"] == "[]" and lines["same"] == "True", result.stdout + result.stderr[-2000:]


@pytest.mark.parametrize("value, backend", [("", "CpuBackend"), ("numba", "CpuBackend"), ("numpy", "NumpyBackend")])
def test_the_reference_switch_reads_an_empty_value_as_unset(value, backend, monkeypatch):
    """GPUBOOST_CPU_BACKEND= (set, empty: how a shell clears it for one command) made every fit
    a ValueError; it is the default, the compiled backend."""
    from gpuboost.backends import REFERENCE_ENV, backend_class

    monkeypatch.setenv(REFERENCE_ENV, value)
    assert backend_class("cpu").__name__ == backend
    monkeypatch.setenv(REFERENCE_ENV, "numbaa")
    with pytest.raises(ValueError, match="must be 'numba' or 'numpy'"):
        backend_class("cpu")


class _RecordingKernels:
    """The compiled kernels, with each add_trees call recorded: (numba's thread count, the
    row blocks) for the parallel walk, (thread count, "serial") for the serial one."""

    def __init__(self):
        from gpuboost.backends import cpu

        self._module = cpu._numba_cpu
        self.seen = []

    def __getattr__(self, name):
        return getattr(self._module, name)

    def add_trees(self, *args):
        self.seen.append((numba.get_num_threads(), args[-1]))
        return self._module.add_trees(*args)

    def add_trees_serial(self, *args):
        self.seen.append((numba.get_num_threads(), "serial"))
        return self._module.add_trees_serial(*args)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread")
def test_prediction_runs_on_n_jobs_threads(small_multiclass, monkeypatch):
    """predict and the staged methods run the compiled walk on n_jobs's threads, as fit does
    (a search's workers each scoring on every core oversubscribed the machine), and leave the
    caller's numba thread count as it was; on one thread without a parallel region, and on
    one thread where the rows times the trees are fewer than PARALLEL_WALKS."""
    from gpuboost import BoostClassifier
    from gpuboost.backends import cpu

    X, y = small_multiclass
    one = BoostClassifier(n_estimators=3, max_leaves=4, n_jobs=1).fit(X, y)
    two = BoostClassifier(n_estimators=3, max_leaves=4, n_jobs=2).fit(X, y)
    recording = _RecordingKernels()
    monkeypatch.setattr(cpu, "kernels", recording)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        results = {}
        for walks in (0, cpu.PARALLEL_WALKS):
            monkeypatch.setattr(cpu, "PARALLEL_WALKS", walks)
            for model in (one, two):
                recording.seen.clear()
                expected = model.predict_proba(X)
                staged = list(model.staged_predict_proba(X))
                assert numba.get_num_threads() == 2
                results[walks, model.n_jobs] = recording.seen[:]
                np.testing.assert_array_equal(staged[-1], expected)
    finally:
        numba.set_num_threads(before)
    assert len(X) * 3 < cpu.PARALLEL_WALKS  # (small: the serial walk below, at the default)
    assert results[0, 1] and all(call == (1, "serial") for call in results[0, 1]), results[0, 1]
    assert results[0, 2] and all(call == (2, 2) for call in results[0, 2]), results[0, 2]
    for n_jobs in (1, 2):
        calls = results[cpu.PARALLEL_WALKS, n_jobs]
        assert calls and all(call == (n_jobs, "serial") for call in calls), calls


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread")
def test_eval_sets_and_init_trees_are_scored_on_the_fits_threads(small_multiclass, monkeypatch):
    """The eval sets' scores after each iteration, and the training scores of a continued
    model's trees, are walked on the fit's n_jobs threads, not on the caller's numba count."""
    from gpuboost import BoostClassifier
    from gpuboost.backends import cpu

    X, y = small_multiclass
    recording = _RecordingKernels()
    monkeypatch.setattr(cpu, "kernels", recording)
    monkeypatch.setattr(cpu, "PARALLEL_WALKS", 0)
    before = numba.get_num_threads()
    try:
        for n_jobs, caller in ((1, 2), (2, 1)):
            numba.set_num_threads(caller)
            recording.seen.clear()
            model = BoostClassifier(n_estimators=2, max_leaves=4, n_jobs=n_jobs).fit(X, y, eval_set=[(X, y)])
            model.set_params(n_estimators=4).fit(X, y, eval_set=[(X, y)], init_model=model)
            assert numba.get_num_threads() == caller
            want = (1, "serial") if n_jobs == 1 else (2, 2)
            assert len(recording.seen) >= 6 and all(call == want for call in recording.seen), recording.seen
    finally:
        numba.set_num_threads(before)


def test_eval_measures_in_one_compiled_pass_are_numpys():
    """An eval set's loss and misclassified rows, measured after every iteration, in one
    compiled pass (kernels.eval_measures) where the kernels' exp and log1p are NumPy's: the
    values of losses.multiclass_loss and losses.predicted_class, bit for bit (ties within
    PREDICTION_TIE, scores far apart, many classes, weights); a score that is not finite
    leaves them to NumPy."""
    from gpuboost import losses
    from gpuboost.backends import _numba_cpu as kernels
    from gpuboost.backends import cpu
    from gpuboost.boosting import EvalSet

    assert kernels.PREDICTION_TIE == losses.PREDICTION_TIE
    rng = np.random.default_rng(31)
    cases = []
    for n, K, scale in ((1, 2, 1.0), (500, 3, 0.01), (700, 26, 30.0), (300, 130, 700.0), (50, 1000, 1e6)):
        F = rng.normal(scale=scale, size=(n, K))
        F[::3] = np.round(F[::3])  # (exact ties)
        F[1::4, 1] = F[1::4, 0] * (1 - 1e-13)  # (ties within PREDICTION_TIE)
        cases.append((F, rng.integers(0, K, n), rng.uniform(0.0, 2.0, n)))
    for F, y, w in cases:
        numpy_measures = [(losses.multiclass_loss(F, y, weight), int(np.count_nonzero(losses.predicted_class(F) != y)))
                          for weight in (None, w)]
        per_sample = np.empty(len(y))
        errors = kernels.eval_measures(F, y.astype(np.int64), per_sample)
        assert errors == numpy_measures[0][1]
        np.testing.assert_allclose(per_sample.sum(), numpy_measures[0][0], rtol=1e-12)
        if cpu.libm_matches_numpy():
            assert cpu.compiled_measures_usable()
            assert [EvalSet(None, y, weight).measures(F) for weight in (None, w)] == numpy_measures
    F, y, _ = cases[2]
    F = F.copy()
    F[5, 3] = np.nan
    assert kernels.eval_measures(F, y.astype(np.int64), np.empty(len(y))) == -1
    loss, errors = EvalSet(None, y).measures(F)
    assert np.isnan(loss) and errors == int(np.count_nonzero(losses.predicted_class(F) != y))
