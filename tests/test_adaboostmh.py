"""AdaBoost.MH with Hamming trees (paper 002): weights, edges, alpha, and the split search.

Checked against the paper's formulas written out by brute force on small data: the split
search against every (feature, threshold, missing side) candidate, Z = sqrt(1 - gamma^2) at
eq (11)'s alpha, eq (2)'s initial weights, normalised weights, and the Hamming loss.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpuboost import BoostClassifier, load_model, losses
from gpuboost.backends.numpy import NumpyBackend
from gpuboost.binning import BinMapper
from gpuboost.grower import GrowerParams, TreeGrower


def _problem(n=120, d=3, K=4, seed=0, missing=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.argmax(X @ rng.normal(size=(d, K)) + rng.normal(size=(n, K)), axis=1)
    if missing:
        X[rng.uniform(size=X.shape) < 0.1] = np.nan
    mapper = BinMapper(16).fit(X)
    codes = mapper.transform(X)
    backend = NumpyBackend(codes, y, None, K, n_bins=int(mapper.n_bins_.max()),
                           missing_code=mapper.missing_bin, link="exp")
    return X, y, K, mapper, codes, backend, rng


def test_initial_weights_are_eq_2_normalised():
    y = np.array([0, 2, 1, 2])
    W0 = losses.adaboost_initial_weights(y, 3)
    assert W0.sum() == pytest.approx(1.0)
    assert np.allclose(W0[np.arange(4), y], 1 / (2 * 4))
    off = np.ones_like(W0, bool)
    off[np.arange(4), y] = False
    assert np.allclose(W0[off], 1 / (2 * 4 * 2))
    # a row of weight 2 counts as two rows
    W0w = losses.adaboost_initial_weights(np.array([0, 1]), 2, np.array([2.0, 1.0]))
    assert np.allclose(W0w, [[1 / 3, 1 / 3], [1 / 6, 1 / 6]])


def test_weights_stay_normalised_and_losses_follow_the_definitions():
    _, y, K, _, _, backend, rng = _problem()
    F = rng.normal(scale=3.0, size=(len(y), K))
    loss = backend.set_scores(F)
    W0, Y = backend.W0, backend.Y
    assert backend.W.sum() == pytest.approx(1.0)
    assert loss == pytest.approx((W0 * np.exp(-Y * F)).sum())  # eq (3)
    assert backend.hamming_loss == pytest.approx(W0[np.sign(F) != Y].sum())  # eq (1)
    assert np.allclose(backend.W, W0 * np.exp(-Y * F) / loss)
    assert backend.set_scores(np.zeros_like(F)) == pytest.approx(1.0)
    big = backend.set_scores(1e3 * F)  # no overflow into NaN weights
    assert np.isfinite(backend.W).all() and backend.W.sum() == pytest.approx(1.0) and big > 0


@pytest.mark.parametrize("factorized", [False, True])
def test_split_search_against_every_feature_threshold_and_vote_vector(factorized):
    # K = 3: every (feature, threshold, missing side) and every vote vector -- one per side for
    # the Hamming tree's split, one shared (v and -v) for Kegl's factorized stump
    import itertools

    X, y, K, mapper, codes, backend, rng = _problem(n=80, K=3, seed=5)
    backend.set_scores(rng.normal(size=(len(y), K)))
    backend.reset_partition()
    hists = backend.vector_histograms(np.array([[0, len(y)]]))
    found = backend.find_vector_splits(hists, 1, factorized=factorized)
    WY = backend.W * backend.Y
    missing = codes == mapper.missing_bin
    votes = [np.array(v) for v in itertools.product((-1.0, 1.0), repeat=K)]
    best = -np.inf
    for f in range(codes.shape[1]):
        for b in range(int(mapper.n_bins_[f])):
            for missing_left in (False, True):
                left = np.where(missing[:, f], missing_left, codes[:, f] <= b)
                if left.all() or not left.any():
                    continue
                L, R = WY[left].sum(axis=0), WY[~left].sum(axis=0)
                if factorized:
                    edge = max(v @ L - v @ R for v in votes)
                else:
                    edge = max(vl @ L for vl in votes) + max(vr @ R for vr in votes)
                best = max(best, edge)
    parent = np.abs(WY.sum(axis=0)).sum()  # the unsplit node's edge, its best single vote
    assert found.gain[0] == pytest.approx(best - parent, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_split_search_against_brute_force(seed):
    X, y, K, mapper, codes, backend, rng = _problem(seed=seed)
    backend.set_scores(rng.normal(size=(len(y), K)))
    backend.reset_partition()
    segments = np.array([[0, len(y)]])
    hists = backend.vector_histograms(segments)
    found = backend.find_vector_splits(hists, 1)
    WY = backend.W * backend.Y
    missing = codes == mapper.missing_bin
    best = -np.inf
    for f in range(codes.shape[1]):
        for b in range(int(mapper.n_bins_[f])):
            for missing_left in (False, True):
                left = np.where(missing[:, f], missing_left, codes[:, f] <= b)
                if left.all() or not left.any():
                    continue
                gain = (np.abs(WY[left].sum(axis=0)).sum() + np.abs(WY[~left].sum(axis=0)).sum()
                        - np.abs(WY.sum(axis=0)).sum())
                best = max(best, gain)
    assert found.gain[0] == pytest.approx(best, rel=1e-12)
    f, b, ml = int(found.feature[0]), int(found.bin[0]), bool(found.missing_left[0])
    left = np.where(missing[:, f], ml, codes[:, f] <= b)
    gain = (np.abs(WY[left].sum(axis=0)).sum() + np.abs(WY[~left].sum(axis=0)).sum() - np.abs(WY.sum(axis=0)).sum())
    assert gain == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("max_leaves, factorized", [(2, False), (8, False), (2, True)])
def test_z_is_sqrt_one_minus_gamma_squared_at_the_optimal_alpha(max_leaves, factorized):
    _, y, K, mapper, _, backend, rng = _problem(n=200, seed=3, missing=False)
    F = 0.5 * rng.normal(size=(len(y), K))
    before = backend.set_scores(F)
    params = GrowerParams(max_leaves=max_leaves, vector=True, edge=True, factorized=factorized)
    grower = TreeGrower(backend, params, mapper.bin_upper_edge, len(y))
    tree, segments, leaf_ids = grower.grow()
    gamma = grower.edge
    assert 0 < gamma < 1
    vectors = tree.node_vectors(K)
    alpha = 0.5 * np.log((1 + gamma) / (1 - gamma))
    assert np.allclose(np.abs(vectors[leaf_ids]), alpha)  # every leaf votes +-alpha per class
    if factorized:
        assert np.array_equal(vectors[leaf_ids[0]], -vectors[leaf_ids[1]])  # v and -v
    backend.update_scores(F, segments, vectors[leaf_ids])  # learning rate 1
    after = backend.set_scores(F)
    assert after / before == pytest.approx(np.sqrt(1 - gamma ** 2), rel=1e-10)  # Z, paper 002


def test_fit_predict_save_load_and_losses():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    model = BoostClassifier(algorithm="adaboostmh", n_estimators=60, learning_rate=0.5).fit(X[:1200], y[:1200])
    assert len(model.trees_) == len(model.train_loss_) == len(model.train_hamming_loss_) == 60
    assert model.train_loss_[-1] < model.train_loss_[0] < 1.0
    assert model.train_hamming_loss_[-1] <= model.train_hamming_loss_[0]
    accuracy = model.score(X[1200:], y[1200:])
    assert accuracy > 0.9
    proba = model.predict_proba(X[1200:])
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(np.argmax(proba, axis=1), np.argmax(model.decision_function(X[1200:]), axis=1))


def test_saved_model_predicts_the_same(tmp_path):
    X, y, *_ = _problem(n=150, seed=4)
    model = BoostClassifier(algorithm="adaboostmh", n_estimators=15, max_leaves=6).fit(X, y)
    model.save_model(tmp_path / "m.json")
    again = load_model(tmp_path / "m.json")
    assert np.array_equal(again.decision_function(X), model.decision_function(X))


def test_two_leaves_mean_kegls_factorized_stump():
    X, y, *_ = _problem(n=150, seed=7)
    model = BoostClassifier(algorithm="adaboostmh", n_estimators=10, max_leaves=2).fit(X, y)
    for tree in model.trees_:
        if tree.n_nodes == 3:
            assert np.array_equal(tree.vector[1], -tree.vector[2])


def test_adaboostmh_trains_on_the_cpu_only():
    with pytest.raises(ValueError, match="no CUDA implementation"):
        BoostClassifier(algorithm="adaboostmh", device="cuda").fit(np.zeros((4, 1)), [0, 1, 0, 1])


def test_the_hamming_loss_follows_early_stopping_and_continuation():
    """train_hamming_loss_ has one entry per kept iteration: early stopping cut train_loss_ but
    not it (77 entries for 74 iterations), and a continued fit held only its new iterations'."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    Y = (X @ rng.normal(size=(4, 3)) > 0).astype(int)
    stopped = BoostClassifier(algorithm="adaboostmh", n_estimators=200, max_leaves=4, early_stopping_rounds=3).fit(
        X[:200], Y[:200], eval_set=[(X[200:], Y[200:])])
    assert len(stopped.train_hamming_loss_) == len(stopped.train_loss_) == stopped.n_estimators_ < 200
    for y in (Y, np.argmax(X[:, :3], axis=1)):
        whole = BoostClassifier(algorithm="adaboostmh", n_estimators=12, max_leaves=4).fit(X, y)
        part = BoostClassifier(algorithm="adaboostmh", n_estimators=5, max_leaves=4, warm_start=True).fit(X, y)
        part.set_params(n_estimators=12).fit(X, y)
        np.testing.assert_array_equal(part.train_hamming_loss_, whole.train_hamming_loss_)


def test_the_hamming_loss_is_saved(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 3))
    y = np.argmax(X, axis=1)
    model = BoostClassifier(algorithm="adaboostmh", n_estimators=6, max_leaves=4).fit(X, y)
    model.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(load_model(tmp_path / "m.json").train_hamming_loss_, model.train_hamming_loss_)
    aoso = BoostClassifier(n_estimators=2, max_leaves=4).fit(X, y)
    aoso.save_model(tmp_path / "a.json")
    assert not hasattr(load_model(tmp_path / "a.json"), "train_hamming_loss_")
