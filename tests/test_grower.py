"""The grower on pre-binned data, independent of binning, and the boosting loop's invariants."""

import numpy as np
import pytest

from gpuboost import losses
from gpuboost.backends.numpy import NumpyBackend
from gpuboost.boosting import boost
from gpuboost.grower import GrowerParams, TreeGrower

from conftest import bins_as_thresholds


def known_tree_data(n=400, seed=0):
    """Labels from a known tree on 3 binned features (bins 0..9):

    x0 <= 4 ? (x1 <= 2 ? class 0 : class 1) : class 2
    """
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 10, size=(n, 3)).astype(np.uint8)
    y = np.where(codes[:, 0] <= 4, np.where(codes[:, 1] <= 2, 0, 1), 2)
    return codes, y


def grow_one(codes, y, n_classes, F=None, **params):
    backend = NumpyBackend(codes, y, None, n_classes, n_bins=10, missing_code=255)
    backend.set_scores(np.zeros((len(y), n_classes)) if F is None else F)
    grower = TreeGrower(backend, GrowerParams(**params), lambda f, b: np.asarray(b, float) + 0.5, len(y))
    return grower.grow(), backend


def test_recovers_the_known_tree():
    codes, y = known_tree_data()
    (tree, segments, leaf_ids), backend = grow_one(codes, y, 3, max_leaves=3)
    assert (tree.feature[0], tree.bin[0]) == (0, 4)
    left = tree.left[0]
    assert (tree.feature[left], tree.bin[left]) == (1, 2)
    # class 2 has the most rows: the root pairs it (eq 33) against class 0 (tie with 1: lowest)
    assert tuple(tree.pair[0]) == (2, 0)
    # every leaf is pure, and its pair moves its own class up
    for (start, stop), leaf in zip(segments, leaf_ids):
        labels = np.unique(y[backend.rows[start:stop]])
        assert labels.size == 1
        r, s = tree.pair[leaf]
        assert (r == labels[0] and tree.value[leaf] > 0) or (s == labels[0] and tree.value[leaf] < 0)
    leaf_of_row = tree.apply(codes, 255)
    for (start, stop), leaf in zip(segments, leaf_ids):
        assert np.all(leaf_of_row[backend.rows[start:stop]] == leaf)


def test_each_child_picks_its_own_pair():
    codes, y = known_tree_data()
    (tree, *_), _ = grow_one(codes, y, 3, max_leaves=3)
    left, right = tree.left[0], tree.right[0]
    # the left child holds classes 0 and 1: the most under-predicted of them is r, and the
    # absent class 2, the most over-predicted, is s; the pure right child moves class 2 up
    assert tree.pair[left][0] in (0, 1) and tree.pair[left][1] == 2
    assert tree.pair[right][0] == 2
    assert tuple(tree.pair[left]) != tuple(tree.pair[0])


def test_growth_stops_at_max_leaves_and_min_samples_leaf():
    codes, y = known_tree_data()
    for max_leaves in (2, 5, 20):
        (tree, segments, _), _ = grow_one(codes, y, 3, max_leaves=max_leaves, min_samples_leaf=30)
        assert tree.n_leaves <= max_leaves
        assert np.all(np.diff(segments).ravel() >= 30)
        assert tree.n_samples[tree.is_leaf].sum() == len(y)


def test_node_statistics_add_up():
    codes, y = known_tree_data(seed=3)
    F = np.random.default_rng(3).normal(size=(len(y), 3))
    (tree, *_), _ = grow_one(codes, y, 3, F=F, max_leaves=12)
    internal = np.flatnonzero(~tree.is_leaf)
    np.testing.assert_array_equal(
        tree.n_samples[internal], tree.n_samples[tree.left[internal]] + tree.n_samples[tree.right[internal]]
    )
    assert np.all(tree.gain[internal] > 0)
    assert np.all(np.abs(tree.value) <= 5.0)


def test_node_value_is_the_newton_step_of_its_own_pair():
    codes, y = known_tree_data(seed=5)
    F = np.random.default_rng(5).normal(size=(len(y), 3))
    (tree, segments, leaf_ids), backend = grow_one(codes, y, 3, F=F, max_leaves=6, leaf_clip=np.inf)
    p, pc = losses.softmax(F)
    for (start, stop), leaf in zip(segments, leaf_ids):
        rows = backend.rows[start:stop]
        g, h = losses.pair_statistics(p[rows], pc[rows], y[rows], *tree.pair[leaf])
        np.testing.assert_allclose(tree.value[leaf], -g.sum() / h.sum(), rtol=1e-10)


def run_boost(codes, y, n_classes, n_estimators=10, **params):
    backend = NumpyBackend(codes, y, None, n_classes, n_bins=int(codes.max()) + 1, missing_code=255)
    return boost(backend, len(y), n_classes, n_estimators, 0.1, 1e-16,
                 GrowerParams(**params), bins_as_thresholds, 255)


def test_scores_sum_to_zero_and_loss_decreases():
    codes, y = known_tree_data(seed=1)
    result = run_boost(codes, y, 3, n_estimators=15, max_leaves=6)
    F = np.zeros((len(y), 3))
    for tree in result.trees:
        vectors = tree.node_vectors(3)
        np.testing.assert_array_equal(vectors.sum(axis=1), 0.0)
        F += 0.1 * vectors[tree.apply(codes, 255)]
    np.testing.assert_allclose(F.sum(axis=1), 0.0, atol=1e-12)
    assert np.all(np.diff(result.train_loss) < 0)
    assert result.train_loss[0] < result.initial_loss == pytest.approx(len(y) * np.log(3))


def test_stops_when_training_loss_reaches_tol():
    codes, y = known_tree_data(seed=2)
    result = run_boost(codes, y, 3, n_estimators=5000, max_leaves=4)
    assert len(result.trees) < 5000
    assert result.train_loss[-1] <= 1e-16 < result.train_loss[-2]


def test_shuffling_rows_changes_no_tree():
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 50, size=(300, 4)).astype(np.uint8)
    y = (codes[:, 0].astype(int) + codes[:, 1] + rng.integers(0, 30, 300)) // 40
    perm = rng.permutation(300)
    a = run_boost(codes, y, int(y.max()) + 1, n_estimators=8, max_leaves=8)
    b = run_boost(codes[perm], y[perm], int(y.max()) + 1, n_estimators=8, max_leaves=8)
    for ta, tb in zip(a.trees, b.trees, strict=True):
        np.testing.assert_array_equal(ta.feature, tb.feature)
        np.testing.assert_array_equal(ta.bin, tb.bin)
        np.testing.assert_array_equal(ta.pair, tb.pair)
        np.testing.assert_allclose(ta.value, tb.value, rtol=1e-9)


def test_make_tree_thresholds_by_one_lookup_are_the_per_split_ones():
    # make_tree looks the thresholds of a tree's splits up in one bin_edge call (arrays): the
    # BinMapper's edge of each split, NaN at leaves, +inf at a feature's last value bin
    from gpuboost.binning import BinMapper
    from gpuboost.grower import make_tree

    rng = np.random.default_rng(9)
    mapper = BinMapper(max_bins=8).fit(np.column_stack([rng.normal(size=200), rng.integers(0, 2, 200)]))
    feature = np.array([0, 1, -1, 0, -1, -1, -1])
    bin_ = np.array([3, 1, -1, 6, -1, -1, -1])  # feature 1 has two values: bin 1 is its last
    left, right = np.array([1, 3, -1, 5, -1, -1, -1]), np.array([2, 4, -1, 6, -1, -1, -1])
    args = (np.zeros(7, bool), left, right, np.zeros((7, 2), int), np.ones((7, 3)), np.zeros(7))
    tree = make_tree(feature, bin_, *args, mapper.bin_upper_edge, np.inf)
    per_split = [mapper.bin_upper_edge(int(f), int(b)) if f >= 0 else np.nan for f, b in zip(feature, bin_)]
    np.testing.assert_array_equal(tree.threshold, per_split)
    assert np.isnan(tree.threshold[feature < 0]).all() and tree.threshold[1] == np.inf


def test_node_vectors_of_paired_trees_are_the_general_sums():
    # AOSO's and ABC's trees (every node paired) take a path of their own: the same vectors, bit
    # for bit, as the general one's 0 + t at r and 0 - t at s (a value of -0.0 gives +0.0 at r);
    # scalar (s = -1) and centred (s = -2) trees keep the general path
    from conftest import leaf_tree

    rng = np.random.default_rng(12)
    n, k = 9, 5
    pair = np.array([rng.choice(k, 2, replace=False) for _ in range(n)], dtype=np.int32)
    value = rng.normal(size=n)
    value[2], value[5] = -0.0, 0.0
    tree = leaf_tree(pair, value)
    expected = np.zeros((n, k))
    expected[np.arange(n), pair[:, 0]] += value
    expected[np.arange(n), pair[:, 1]] -= value
    for nodes in (None, np.array([0, 2, 5, 8]), np.array([], dtype=np.intp)):
        got = tree.node_vectors(k, nodes)
        want = expected if nodes is None else expected[nodes]
        assert np.array_equal(got.view(np.int64), want.view(np.int64))  # bits, signs of zeros included
    mixed = pair.copy()
    mixed[1, 1], mixed[4, 1] = -1, -2  # a scalar node and a centred one: the general path
    general = leaf_tree(mixed, value).node_vectors(k)
    assert general[1, mixed[1, 0]] == value[1] and np.count_nonzero(general[1]) == 1
    np.testing.assert_allclose(general[4].sum(), value[4] - value[4], atol=1e-15)
