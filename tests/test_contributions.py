"""Feature contributions (TreeSHAP, gpuboost/contributions.py) against the Shapley formula itself
(brute force over every subset of the features), and their additivity on larger models."""

from __future__ import annotations

import numpy as np
import pytest

from gpuboost import ALGORITHMS, BoostClassifier, load_model
from gpuboost.contributions import _depth, brute_force, contributions
from gpuboost.tree import Tree


def small(seed=0, n=400, d=5, missing=0.1):
    """Three classes from an interaction of the first features; NaN in a tenth of the cells."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (X[:, d - 1] > 0.5)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


def compiled_and_brute(model, X):
    codes = model._bin_mapper.transform(X)
    args = (model.trees_, codes, model._bin_mapper.missing_bin, len(model.classes_), model.learning_rate)
    return contributions(*args), brute_force(*args)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_treeshap_is_the_shapley_value_of_every_algorithm(algorithm):
    X, y = small()
    model = BoostClassifier(algorithm=algorithm, n_estimators=4, max_leaves=7, learning_rate=0.3).fit(X, y)
    phi, exact = compiled_and_brute(model, X[:25])
    assert np.abs(exact[:, :, :-1]).max() > 1e-3  # the features matter: the check can fail
    np.testing.assert_allclose(phi, exact, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("algorithm", ["aoso", "adaboostmh", "klogitboost"])
def test_multilabel_and_two_class_models_too(algorithm):
    X, y = small(1)
    Y = np.stack([y == 0, y != 0, np.nan_to_num(X[:, 4]) > 0], axis=1).astype(int)
    for target in (Y, (y > 0).astype(int)):
        model = BoostClassifier(algorithm=algorithm, n_estimators=3, max_leaves=6).fit(X, target)
        phi, exact = compiled_and_brute(model, X[:15])
        assert np.abs(exact[:, :, :-1]).max() > 1e-3
        np.testing.assert_allclose(phi, exact, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(model.predict_contributions(X[:15]), phi)
        assert phi.shape == (15, target.shape[1] if target.ndim == 2 else 2, 6)


def test_deep_trees_and_repeated_features():
    # a feature met twice on a path (the unwind step): few features, many leaves
    X, y = small(2, n=1500, d=3, missing=0.05)
    model = BoostClassifier(n_estimators=3, max_leaves=40, learning_rate=0.5).fit(X, y)
    assert any(len(set(tree.feature[tree.feature >= 0])) < (tree.feature >= 0).sum() for tree in model.trees_)
    assert max(_depth(tree) for tree in model.trees_) > 4  # paths longer than the features (3) + the root's
    phi, exact = compiled_and_brute(model, X[:30])
    np.testing.assert_allclose(phi, exact, rtol=1e-9, atol=1e-12)


def test_they_add_up_to_the_scores():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    model = BoostClassifier(n_estimators=60, max_leaves=20, n_jobs=2).fit(X[:1200], y[:1200])
    phi = model.predict_contributions(X[1200:])
    assert phi.shape == (len(X) - 1200, 10, 65)
    F = model._scores(X[1200:])
    np.testing.assert_allclose(phi.sum(axis=2), F, atol=1e-10)
    # the bias is the same for every row; pixels no tree split on contribute nothing
    np.testing.assert_array_equal(phi[:, :, -1], np.broadcast_to(phi[0, :, -1], phi[:, :, -1].shape))
    used = np.zeros(64, bool)
    for tree in model.trees_:
        used[tree.feature[tree.feature >= 0]] = True
    assert not used.all()
    assert np.all(phi[:, :, :-1][:, :, ~used] == 0.0)
    # each row's class contributions sum to 0, as AOSO's scores do (eq 29: +t at r, -t at s)
    np.testing.assert_allclose(phi.sum(axis=1), 0.0, atol=1e-10)


def test_two_classes_explain_the_decision_function():
    X, y = small(3)
    model = BoostClassifier(n_estimators=20).fit(X, (y > 0).astype(int))
    phi = model.predict_contributions(X[:50])
    np.testing.assert_allclose((phi[:, 1] - phi[:, 0]).sum(axis=1), model.decision_function(X[:50]), atol=1e-10)


def test_threads_and_model_files_change_nothing(tmp_path):
    import numba

    X, y = small(4, n=3000)
    model = BoostClassifier(n_estimators=30, subsample=0.7, random_state=0, n_jobs=1).fit(X, y)
    one = model.predict_contributions(X[:500])
    if numba.config.NUMBA_NUM_THREADS >= 2:
        np.testing.assert_array_equal(model.set_params(n_jobs=2).predict_contributions(X[:500]), one)
    model.save_model(tmp_path / "model.json")
    np.testing.assert_array_equal(load_model(tmp_path / "model.json").predict_contributions(X[:500]), one)
    # subsample's trees count the rows of their iteration's sample: still a consistent weighting
    np.testing.assert_allclose(one.sum(axis=2), model._scores(X[:500]), atol=1e-10)


def test_bad_inputs():
    from sklearn.exceptions import NotFittedError

    X, y = small(5)
    with pytest.raises(NotFittedError):
        BoostClassifier().predict_contributions(X)
    model = BoostClassifier(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict_contributions(X[:, :3])
    with pytest.raises(ValueError, match="0 sample"):  # as predict
        model.predict_contributions(X[:0])
    tree = model.trees_[0]
    codes = model._bin_mapper.transform(X)
    for counts in (np.ones_like(tree.n_samples), _emptied_leaf(tree)):  # not adding up; a leaf of no rows
        broken = Tree(**{name: getattr(tree, name) for name in ("feature", "bin", "threshold", "missing_left", "left",
                                                                "right", "pair", "value", "gain")}, n_samples=counts)
        with pytest.raises(ValueError, match="row counts"):
            contributions([broken], codes, model._bin_mapper.missing_bin, 3, 0.1)
    looped = Tree(**{name: getattr(tree, name) for name in ("feature", "bin", "threshold", "missing_left", "right",
                                                            "pair", "value", "n_samples", "gain")},
                  left=np.where(tree.left > 0, 0, tree.left))  # every left child is the root
    with pytest.raises(ValueError, match="child links"):
        contributions([looped], codes, model._bin_mapper.missing_bin, 3, 0.1)


def _emptied_leaf(tree):
    """The tree's row counts with a leaf's rows moved to its sibling (its parent's count kept)."""
    counts = tree.n_samples.copy()
    parent = int(np.flatnonzero(tree.feature >= 0)[-1])
    left, right = tree.left[parent], tree.right[parent]
    assert tree.feature[left] < 0
    counts[right] += counts[left]
    counts[left] = 0
    return counts


def test_codes_of_too_few_features_are_refused():
    X, y = small(6)
    model = BoostClassifier(n_estimators=3).fit(X, y)
    used = max(int(tree.feature.max()) for tree in model.trees_)
    with pytest.raises(ValueError, match=f"split on feature {used}"):
        contributions(model.trees_, model._bin_mapper.transform(X)[:, :used], model._bin_mapper.missing_bin, 3, 0.1)


def test_brute_force_refuses_many_features():
    with pytest.raises(ValueError, match="at most 10"):
        brute_force([], np.zeros((1, 11), np.uint8), 255, 2, 0.1)


def test_trees_of_one_leaf_have_only_a_bias():
    X = np.ones((50, 3))
    y = np.arange(50) % 3
    model = BoostClassifier(n_estimators=3).fit(X, y)
    assert all(tree.n_nodes == 1 for tree in model.trees_)
    phi = model.predict_contributions(X[:4])
    assert np.all(phi[:, :, :-1] == 0.0)
    np.testing.assert_allclose(phi.sum(axis=2), model._scores(X[:4]), atol=1e-15)


def random_tree(rng, n_leaves, n_features, K=3, n_bins=6, chain=False):
    """A tree of random shape (a random leaf split each time: deep paths, features repeated on
    them), random splits and missing sides, AOSO node values, row counts that add up. chain:
    each split's left child split next (a row of zero codes goes down the whole chain)."""
    feature, bin_, missing_left, left, right, depth = [-1], [0], [False], [-1], [-1], [0]
    for _ in range(n_leaves - 1):
        leaves = [j for j in range(len(feature)) if feature[j] < 0]
        j = len(feature) - 2 if chain and len(feature) > 1 else leaves[rng.integers(len(leaves))]
        feature[j], bin_[j], missing_left[j] = int(rng.integers(n_features)), int(rng.integers(n_bins)), bool(
            rng.integers(2))
        left[j], right[j] = len(feature), len(feature) + 1
        for _ in range(2):
            feature.append(-1), bin_.append(0), missing_left.append(False), left.append(-1), right.append(-1)
            depth.append(depth[j] + 1)
    n = len(feature)
    counts = np.zeros(n, np.int64)
    for j in range(n - 1, -1, -1):  # children after parents: leaves first when walked backwards
        counts[j] = rng.integers(1, 50) if feature[j] < 0 else counts[left[j]] + counts[right[j]]
    pairs = np.array([rng.choice(K, 2, replace=False) for _ in range(n)], np.int32)
    return Tree(feature=np.array(feature, np.int32), bin=np.array(bin_, np.int32), threshold=np.zeros(n),
                missing_left=np.array(missing_left), left=np.array(left, np.int32), right=np.array(right, np.int32),
                pair=pairs, value=rng.normal(size=n), n_samples=counts, gain=np.zeros(n)), max(depth)


def random_codes(rng, n, n_features, n_bins=6, missing_code=255):
    codes = rng.integers(0, n_bins, size=(n, n_features)).astype(np.uint8)
    codes[rng.random(codes.shape) < 0.15] = missing_code
    return codes


def test_random_trees_of_any_shape_and_node_order():
    rng = np.random.default_rng(7)
    for n_features, n_leaves in ((1, 12), (2, 30), (3, 25), (6, 15)):
        trees = [random_tree(rng, n_leaves, n_features)[0] for _ in range(3)]
        codes = random_codes(rng, 20, n_features)
        phi = contributions(trees, codes, 255, 3, 0.7)
        np.testing.assert_allclose(phi, brute_force(trees, codes, 255, 3, 0.7), rtol=1e-9, atol=1e-12)
        # the same tree with its nodes in another order (the root first): the same contributions
        tree = trees[0]
        order = np.concatenate([[0], 1 + rng.permutation(tree.n_nodes - 1)])
        new_id = np.empty_like(order)
        new_id[order] = np.arange(tree.n_nodes)

        def relinked(links):
            return np.where(links >= 0, new_id[np.maximum(links, 0)], -1).astype(np.int32)

        shuffled = Tree(feature=tree.feature[order], bin=tree.bin[order], threshold=tree.threshold[order],
                        missing_left=tree.missing_left[order], left=relinked(tree.left[order]),
                        right=relinked(tree.right[order]), pair=tree.pair[order], value=tree.value[order],
                        n_samples=tree.n_samples[order], gain=tree.gain[order])
        assert _depth(shuffled) == _depth(tree)
        np.testing.assert_allclose(contributions([shuffled], codes, 255, 3, 0.7),
                                   contributions([tree], codes, 255, 3, 0.7), rtol=1e-12, atol=1e-14)


BOUNDS_CHECKED = """
import numpy as np
from test_contributions import random_codes, random_tree
from gpuboost.contributions import brute_force, contributions
rng = np.random.default_rng(3)
for n_features, n_leaves in ((1, 40), (2, 60), (4, 30)):
    # random shapes, and a chain that the row of zero codes walks to its end (the deepest stack)
    made = [random_tree(rng, n_leaves, n_features) for _ in range(3)] + [random_tree(rng, 30, n_features, chain=True)]
    assert max(depth for _, depth in made) > n_features + 3  # paths longer than the features
    trees = [tree for tree, _ in made]
    codes = random_codes(rng, 12, n_features)
    codes[0] = 0
    np.testing.assert_allclose(contributions(trees, codes, 255, 3, 0.5, 2), brute_force(trees, codes, 255, 3, 0.5),
                               rtol=1e-9, atol=1e-12)
print("checked")
"""


def test_the_kernel_stays_inside_its_arrays(tmp_path):
    # numba does not check bounds: a path or stack array sized one too small would write past
    # its end unseen. Run the kernel with numba's bounds checks on (compiled afresh in a cache
    # of its own: a few seconds, the training kernels are not needed)
    import os
    import subprocess
    import sys

    from conftest import REPO

    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join([str(REPO / "tests"), str(REPO)]))
    result = subprocess.run([sys.executable, "-c", BOUNDS_CHECKED], env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0 and "checked" in result.stdout, result.stderr[-3000:]
