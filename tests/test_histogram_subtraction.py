"""Histogram subtraction: a split's larger child takes its histogram as its parent's minus its
sibling's (under the parent's pair), in the reference grower and in the compiled backend."""

import numpy as np
import pytest

import gpuboost.grower as grower_module
from gpuboost.backends import base
from gpuboost.backends.base import COUNT, derived_histogram, histograms_derivable
from gpuboost.backends.cpu import CpuBackend
from gpuboost.backends.numpy import NumpyBackend, halved_histogram
from gpuboost.grower import GrowerParams, TreeGrower

from conftest import bins_as_thresholds


def _data(seed=3, n=3000, d=6, k=5, n_bins=24):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < 0.05] = 255
    y = (codes[:, 0] // 5 + (codes[:, 1] > 12) + rng.integers(0, 2, size=n)) % k
    return codes, y, k, n_bins


def test_derived_histogram_is_the_direct_one_to_rounding_and_empty_bins_are_zero():
    codes, y, k, n_bins = _data()
    n = len(y)
    # feature 0 splits the rows: the first third in bins 0-7, the rest in 8-23 (or missing)
    value = codes[:, 0] != 255
    codes[: n // 3, 0] = np.where(value[: n // 3], codes[: n // 3, 0] % 8, 255)
    codes[n // 3:, 0] = np.where(value[n // 3:], 8 + codes[n // 3:, 0] % 16, 255)
    ref = NumpyBackend(codes, y, None, k, n_bins=n_bins, missing_code=255)
    ref.set_scores(np.random.default_rng(0).normal(size=(n, k)))
    segments = np.array([[0, n], [0, n // 3], [n // 3, n]])
    pairs = np.array([[1, 3]] * 3)
    parent, small, large = ref.histograms(segments, pairs)
    derived = derived_histogram(parent, small)
    np.testing.assert_array_equal(derived[..., COUNT], large[..., COUNT])  # counts are exact
    np.testing.assert_allclose(derived, large, rtol=1e-12, atol=1e-12 * np.abs(parent).max())
    empty = large[..., COUNT] == 0
    assert empty.any(), "the test needs bins that the larger child does not reach"
    assert np.all(derived[empty] == 0.0)
    # the residue the rule removes: a bin whose rows are all in the smaller child can differ
    # from 0 by rounding when the parent's sum was taken by halves
    values = np.random.default_rng(1).normal(size=(n, 3))
    values[:, 2] = 1.0
    whole = halved_histogram(ref.codes, values, ref.n_codes)
    part = halved_histogram(ref.codes[: n // 3], values[: n // 3], ref.n_codes)
    assert np.all(derived_histogram(whole, part)[(whole - part)[..., COUNT] == 0] == 0.0)


def test_derivable_rule_is_the_kernels():
    from gpuboost.backends import _numba_cpu as kernels

    assert kernels.DERIVE_MAX_BYTES == base.DERIVE_MAX_BYTES
    assert kernels.LANES * 2 == 8  # the rule's default channels: grow_tree's pair of histograms
    for leaves, d, codes in [(20, 16, 102), (255, 54, 256), (400, 54, 256), (1, 1, 2), (5000, 100, 256)]:
        assert kernels._derivable(np.int64(leaves), np.int64(d), np.int64(codes)) == histograms_derivable(
            leaves, d, codes)
    assert histograms_derivable(20, 54, 256) and not histograms_derivable(1000, 54, 256)
    assert not histograms_derivable(255, 54, 256, n_channels=15)  # covertype's K-LogitBoost


def _count_derivations(monkeypatch):
    calls = []

    def counting(parent, smaller, count=COUNT):
        calls.append(1)
        return derived_histogram(parent, smaller, count)

    monkeypatch.setattr(grower_module, "derived_histogram", counting)
    return calls


@pytest.mark.parametrize("params, every_split", [
    (GrowerParams(max_leaves=12), False),  # AOSO: where the larger child keeps its parent's pair
    (GrowerParams(max_leaves=12, fixed_pair=(1, -1), first_order=True), True),  # MART: every split
    (GrowerParams(max_leaves=12, fixed_pair=(2, 0)), True),  # ABC-LogitBoost: every split
])
def test_grower_derives_larger_children_and_the_compiled_tree_is_the_same(monkeypatch, params, every_split):
    codes, y, k, n_bins = _data()
    n = len(y)
    ref = NumpyBackend(codes, y, None, k, n_bins=n_bins, missing_code=255)
    fast = CpuBackend(codes, y, None, k, n_bins=n_bins, missing_code=255, n_threads=2)
    F = np.random.default_rng(2).normal(size=(n, k))
    edge = bins_as_thresholds
    calls = _count_derivations(monkeypatch)
    for _ in range(3):
        ref.set_scores(F)
        fast.set_scores(F)
        before = len(calls)
        a, seg_a, leaves_a = TreeGrower(ref, params, edge, n).grow()
        derived = len(calls) - before
        n_splits = int((a.feature >= 0).sum())
        if every_split:  # every larger child that grows: all but the last split's and single rows
            assert n_splits - 1 - int((a.n_samples < 2).sum()) <= derived <= n_splits
        else:
            assert 0 < derived < n_splits
        b, seg_b, leaves_b = fast.grow_tree(params, edge)
        for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_array_equal(a.value, b.value)
        np.testing.assert_array_equal(a.gain, b.gain)
        np.testing.assert_array_equal(seg_a, seg_b)
        fast.update_scores(F, seg_b, 0.1 * b.node_vectors(k)[leaves_b])


def test_subtraction_changes_trees_only_by_rounding():
    # the same F, the grower with and without subtraction: the same pairs and splits, the
    # values and gains equal to rounding (a difference would be a near-tie)
    codes, y, k, n_bins = _data(seed=5, n=4000)
    n = len(y)
    ref = NumpyBackend(codes, y, None, k, n_bins=n_bins, missing_code=255)
    direct = NumpyBackend(codes, y, None, k, n_bins=n_bins, missing_code=255)
    direct.derives_histograms = False
    F = np.zeros((n, k))
    edge = bins_as_thresholds
    params = GrowerParams(max_leaves=16)
    for _ in range(5):
        ref.set_scores(F)
        direct.set_scores(F)
        a, seg, leaves = TreeGrower(ref, params, edge, n).grow()
        b = TreeGrower(direct, params, edge, n).grow()[0]
        for name in ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(a.gain, b.gain, rtol=1e-10, atol=1e-14)
        ref.update_scores(F, seg, 0.1 * a.node_vectors(k)[leaves])


def test_compiled_backend_without_subtraction_is_the_direct_reference():
    # derives_histograms False (the switch the grower reads) turns it off in both
    codes, y, k, n_bins = _data(seed=7)
    n = len(y)
    ref = NumpyBackend(codes, y, None, k, n_bins=n_bins, missing_code=255)
    fast = CpuBackend(codes, y, None, k, n_bins=n_bins, missing_code=255, n_threads=2)
    ref.derives_histograms = fast.derives_histograms = False
    F = np.random.default_rng(4).normal(size=(n, k))
    ref.set_scores(F)
    fast.set_scores(F)
    edge = bins_as_thresholds
    a = TreeGrower(ref, GrowerParams(), edge, n).grow()[0]
    b = fast.grow_tree(GrowerParams(), edge)[0]
    for name in ("feature", "bin", "pair", "n_samples", "value", "gain"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("algorithm", ["klogitboost", "adaboostmh"])
def test_vector_trees_derive_and_change_only_by_rounding(monkeypatch, algorithm):
    # K-LogitBoost's and AdaBoost.MH's vector trees: every larger child that grows is derived
    # (count last); the model is the one grown without subtraction, to rounding
    from gpuboost import BoostClassifier

    codes, y, k, n_bins = _data(seed=9, n=2000)
    X = codes.astype(float)
    X[codes == 255] = np.nan
    calls = _count_derivations(monkeypatch)
    kw = dict(algorithm=algorithm, n_estimators=4, max_leaves=8, learning_rate=0.3, device="cpu")
    with_sub = BoostClassifier(**kw).fit(X, y)
    assert len(calls) >= 4 * 3  # at least three derived children a tree
    monkeypatch.setattr(NumpyBackend, "derives_histograms", False)
    without = BoostClassifier(**kw).fit(X, y)
    for a, b in zip(with_sub.trees_, without.trees_):
        for name in ("feature", "bin", "left", "right", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_allclose(a.node_vectors(k), b.node_vectors(k), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_many_leaves_keep_many_histograms(n_threads):
    # 300 leaves on noise: many open leaves hold their histograms at once (grow_tree's pool of
    # histogram pairs, reused as nodes are split); the trees are still the reference's
    rng = np.random.default_rng(21)
    n, d, k, n_bins = 6000, 5, 4, 16
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    ref = NumpyBackend(codes, y, None, k, n_bins=n_bins, missing_code=255)
    fast = CpuBackend(codes, y, None, k, n_bins=n_bins, missing_code=255, n_threads=n_threads)
    F = rng.normal(size=(n, k))
    edge = bins_as_thresholds
    for params in (GrowerParams(max_leaves=300), GrowerParams(max_leaves=300, fixed_pair=(1, -1), first_order=True)):
        ref.set_scores(F)
        fast.set_scores(F)
        a = TreeGrower(ref, params, edge, n).grow()[0]
        b = fast.grow_tree(params, edge)[0]
        assert a.n_leaves == 300
        for name in ("feature", "bin", "left", "right", "pair", "n_samples", "value", "gain"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("algorithm", ["klogitboost", "adaboostmh"])
def test_histograms_no_child_can_derive_from_are_not_kept(monkeypatch, algorithm):
    """Where the memory rule rules subtraction out (histograms_derivable), an open leaf keeps no
    histogram until its children have theirs (a K-LogitBoost tree of 20 leaves, 100 classes and
    100 features held 1.3 GB of them): the same trees, and no node ever holds one."""
    from gpuboost import BoostClassifier, grower

    codes, y, k, n_bins = _data(seed=9, n=2000)
    X = codes.astype(float)
    X[codes == 255] = np.nan
    kw = dict(algorithm=algorithm, n_estimators=3, max_leaves=8, learning_rate=0.3, device="cpu")
    monkeypatch.setattr(NumpyBackend, "derives_histograms", False)
    reference = BoostClassifier(**kw).fit(X, y)  # (no derivation: the trees of the rule's outcome)
    monkeypatch.undo()
    monkeypatch.setattr(grower, "histograms_derivable", lambda *args, **kwargs: False)
    held = []
    evaluate = grower.TreeGrower._evaluate

    def watched(self, node_ids, can_grow, parent=None):
        evaluate(self, node_ids, can_grow, parent)
        held.append(sum(node.hist is not None for node in self.nodes))

    monkeypatch.setattr(grower.TreeGrower, "_evaluate", watched)
    model = BoostClassifier(**kw).fit(X, y)
    assert held and max(held) == 0
    for a, b in zip(model.trees_, reference.trees_):
        for name in ("feature", "bin", "left", "right", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_array_equal(a.node_vectors(k), b.node_vectors(k))
