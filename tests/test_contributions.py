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
        np.testing.assert_allclose(phi, exact, rtol=1e-9, atol=1e-12)


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
    broken = Tree(**{name: getattr(tree, name) for name in ("feature", "bin", "threshold", "missing_left", "left",
                                                            "right", "pair", "value", "gain")},
                  n_samples=np.ones_like(tree.n_samples))
    with pytest.raises(ValueError, match="row counts"):
        contributions([broken], model._bin_mapper.transform(X), model._bin_mapper.missing_bin, 3, 0.1)


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
