"""max_depth: best-first trees that never split a node at the given depth."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from gpuboost import BoostClassifier
from gpuboost.backends.cpu import CpuBackend
from gpuboost.backends.numpy import NumpyBackend
from gpuboost.grower import GrowerParams, TreeGrower

from conftest import bins_as_thresholds, node_depths

TREE_ARRAYS = ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples")


def scored_pair(seed, n=600, d=5, k=4, n_bins=16):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < 0.05] = 255
    y = rng.integers(0, k, size=n)
    F = rng.normal(scale=1.5, size=(n, k))
    backends = [cls(codes, y, None, k, n_bins=n_bins, missing_code=255) for cls in (NumpyBackend, CpuBackend)]
    for b in backends:
        b.set_scores(F)
    return backends, n


@pytest.mark.parametrize("params", [
    GrowerParams(max_leaves=30),  # AOSO
    GrowerParams(max_leaves=30, fixed_pair=(1, -1), first_order=True),  # MART's tree
    GrowerParams(max_leaves=30, fixed_pair=(2, 0)),  # ABC-LogitBoost's tree
])
@pytest.mark.parametrize("max_depth", [1, 2, 3])
def test_depth_limited_trees_agree_and_stay_within_the_depth(params, max_depth):
    from dataclasses import replace

    (ref, fast), n = scored_pair(max_depth)
    p = replace(params, max_depth=max_depth)
    a, seg_a, _ = TreeGrower(ref, p, bins_as_thresholds, n).grow()
    b, seg_b, _ = fast.grow_tree(p, bins_as_thresholds)
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_array_equal(seg_a, seg_b)
    depth = node_depths(a)
    assert depth.max() == max_depth  # reached (the data split freely) and not passed
    assert np.all(a.feature[depth == max_depth] < 0)
    n_leaves = int(np.count_nonzero(a.feature < 0))
    assert n_leaves <= 2 ** max_depth
    if max_depth == 1:  # a stump: the tree of two leaves
        two, _, _ = TreeGrower(ref, replace(params, max_leaves=2), bins_as_thresholds, n).grow()
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(a, name), getattr(two, name), err_msg=name)
    # a limit deeper than the tree grows changes nothing
    deep = replace(params, max_depth=64)
    free, _, _ = TreeGrower(ref, params, bins_as_thresholds, n).grow()
    c, _, _ = fast.grow_tree(deep, bins_as_thresholds)
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(free, name), getattr(c, name), err_msg=name)


def test_with_room_for_every_leaf_the_depth_alone_bounds_the_tree():
    """With max_leaves >= 2**max_depth, best-first growth stops at the depth only: more leaves
    allowed grow the same tree (a node's split depends on its own rows, not on the order)."""
    from dataclasses import replace

    (ref, fast), n = scored_pair(7, n=2000)
    p = GrowerParams(max_leaves=8, max_depth=3)
    tree, _, _ = TreeGrower(ref, p, bins_as_thresholds, n).grow()
    for more in (replace(p, max_leaves=9), replace(p, max_leaves=200)):
        other, _, _ = TreeGrower(ref, more, bins_as_thresholds, n).grow()
        compiled, _, _ = fast.grow_tree(more, bins_as_thresholds)
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(tree, name), getattr(other, name), err_msg=name)
            np.testing.assert_array_equal(getattr(tree, name), getattr(compiled, name), err_msg=name)


def data():
    X, y = make_classification(700, 8, n_informative=5, n_classes=3, random_state=0)
    return X, y


@pytest.mark.parametrize("algorithm", ["aoso", "mart", "abcrobustlogit", "klogitboost", "adaboostmh"])
def test_every_tree_of_a_model_keeps_the_depth(algorithm):
    X, y = data()
    model = BoostClassifier(algorithm=algorithm, n_estimators=5, max_depth=2, max_leaves=20, device="cpu").fit(X, y)
    for tree in model.trees_:
        assert node_depths(tree).max() <= 2 and np.count_nonzero(tree.feature < 0) <= 4
    unlimited = BoostClassifier(algorithm=algorithm, n_estimators=5, max_leaves=20, device="cpu").fit(X, y)
    assert max(node_depths(t).max() for t in unlimited.trees_) > 2  # the limit did something


def test_max_depth_is_checked_and_saved(tmp_path):
    import pickle

    X, y = data()
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(ValueError, match="max_depth must be an integer >= 1"):
            BoostClassifier(max_depth=bad, n_estimators=2).fit(X, y)
    model = BoostClassifier(max_depth=3, n_estimators=3, device="cpu").fit(X, y)
    model.save_model(tmp_path / "m.json")
    assert BoostClassifier().load_model(tmp_path / "m.json").max_depth == 3
    state = model.__getstate__()
    del state["max_depth"]
    old = pickle.loads(pickle.dumps(model))
    old.__setstate__(state)
    assert old.max_depth is None
