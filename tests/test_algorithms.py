"""The K-tree family (MART, robust LogitBoost, ABC-MART, ABC-LogitBoost) on the shared grower."""

import json

import numpy as np
import pytest

import gpuboost
from conftest import bins_as_thresholds, check_vector_stump
from gpuboost import ALGORITHMS, BoostClassifier, losses
from gpuboost.algorithms import iteration_plan, trees_per_iteration
from gpuboost.backends.numpy import NumpyBackend, best_splits
from gpuboost.boosting import _class_order
from gpuboost.grower import GrowerParams, TreeGrower


def per_sample_loss(F, y):
    return np.log(np.exp(F).sum(axis=1)) - F[np.arange(len(y)), y]


def test_single_class_statistics_are_the_derivatives_along_the_class():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(30, 4))
    y = rng.integers(0, 4, size=30)
    p, pc = losses.softmax(F)
    g, h = losses.pair_statistics(p, pc, y, 2, -1)
    eps = 1e-4
    step = np.zeros(4)
    step[2] = eps
    plus, zero, minus = (per_sample_loss(F + t * step / eps, y) for t in (eps, 0.0, -eps))
    np.testing.assert_allclose(g, (plus - minus) / (2 * eps), atol=1e-8)
    np.testing.assert_allclose(h, (plus - 2 * zero + minus) / eps**2, atol=1e-5)


def grow(algorithm, F, codes, y, K, base=None, **params):
    backend = NumpyBackend(codes, y, None, K, n_bins=int(codes.max()) + 1, missing_code=255)
    backend.set_scores(F)
    plan = iteration_plan(algorithm, K, GrowerParams(leaf_clip=np.inf, **params), base)
    grower = TreeGrower(backend, plan[0], bins_as_thresholds, len(y))
    return [grower.grow(p) + (backend.rows.copy(),) for p in plan], backend


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 12, size=(200, 3)).astype(np.uint8)
    y = (codes[:, 0] // 4 + rng.integers(0, 2, 200)) % 4
    F = rng.normal(scale=0.5, size=(200, 4))
    return codes, y, F


@pytest.mark.parametrize("algorithm", ["mart", "robustlogit", "logitboost", "abcmart", "abcrobustlogit"])
def test_leaf_values_are_the_papers(algorithm, data):
    codes, y, F = data
    K = 4
    grown, backend = grow(algorithm, F, codes, y, K, base=3, max_leaves=6)
    assert len(grown) == trees_per_iteration(algorithm, K)
    p, pc = losses.softmax(F)
    for tree, segments, leaf_ids, rows in grown:
        k, b = tree.pair[0]
        for (start, stop), leaf in zip(segments, leaf_ids):
            idx = rows[start:stop]
            r_k = (y[idx] == k).astype(float)
            if algorithm == "logitboost":
                # FHT: weighted least squares on z = (r - p) / (p (1 - p)), |z| <= 4, weights
                # p (1 - p); the update keeps (K-1)/K of it, centred over the classes
                assert b == -2
                w = p[idx, k] * (1 - p[idx, k])
                z = np.clip((r_k - p[idx, k]) / w, -4, 4)
                expected = (K - 1) / K * np.sum(w * z) / np.sum(w)
                np.testing.assert_allclose(tree.node_vectors(K)[leaf].sum(), 0.0, atol=1e-14)
            elif algorithm in ("mart", "robustlogit"):
                # Friedman's MART leaf: (K-1)/K sum (r - p) / sum p (1 - p)
                assert b == -1
                expected = (K - 1) / K * np.sum(r_k - p[idx, k]) / np.sum(p[idx, k] * (1 - p[idx, k]))
            else:
                # Li's ABC leaf (Lemma 2 of paper 001): sum -(r_b - p_b) + (r_k - p_k) over the
                # second derivative p_b (1 - p_b) + p_k (1 - p_k) + 2 p_b p_k
                assert b == 3
                r_b = (y[idx] == b).astype(float)
                response = -(r_b - p[idx, b]) + (r_k - p[idx, k])
                second = p[idx, b] * (1 - p[idx, b]) + p[idx, k] * (1 - p[idx, k]) + 2 * p[idx, b] * p[idx, k]
                expected = response.sum() / second.sum()
            np.testing.assert_allclose(tree.value[leaf], expected, rtol=1e-10)


def test_first_order_split_against_brute_force(data):
    codes, y, F = data
    backend = NumpyBackend(codes, y, None, 4, n_bins=12, missing_code=255)
    backend.set_scores(F)
    segment, pair = np.array([[0, 200]]), np.array([[1, -1]])
    hist = backend.histograms(segment, pair, first_order=True)
    found = best_splits(hist, hist[:, 0].sum(axis=1), 1)
    p, pc = losses.softmax(F)
    g = np.where(y == 1, -pc[:, 1], p[:, 1])
    best = (-np.inf, None)
    for f in range(3):
        for b in range(12):
            left = codes[:, f] <= b
            if 0 < left.sum() < 200:
                # MART's first-order gain: (sum_L)^2/n_L + (sum_R)^2/n_R - (sum)^2/n, halved
                gain = (g[left].sum() ** 2 / left.sum() + g[~left].sum() ** 2 / (~left).sum() - g.sum() ** 2 / 200) / 2
                if gain > best[0] * (1 + 1e-10):
                    best = (gain, (f, b))
    np.testing.assert_allclose(found.gain[0], best[0], rtol=1e-9)
    assert (found.feature[0], found.bin[0]) == best[1]


def test_class_losses_and_the_candidates_of_a_search(data):
    codes, y, F = data
    backend = NumpyBackend(codes, y, None, 4, n_bins=12, missing_code=255)
    backend.set_scores(F)
    expected = np.array([per_sample_loss(F, y)[y == k].sum() for k in range(4)])
    np.testing.assert_allclose(backend.class_losses(), expected, rtol=1e-12)
    assert _class_order(expected, 0) == [0, 1, 2, 3]
    assert _class_order(expected, 2) == list(np.argsort(-expected)[:2])
    assert _class_order(expected, 1) == [int(np.argmax(expected))]


def test_exhaustive_search_keeps_the_base_with_the_lowest_loss():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.4 * rng.normal(size=300), [-1, -0.3, 0.3, 1])
    K = 5
    model = BoostClassifier(algorithm="abcrobustlogit", n_estimators=1, max_leaves=6, search=0).fit(X, y)
    chosen = int(model.trees_[0].pair[0, 1])
    losses_by_base = []
    for base in range(K):
        trees = [t for t in _one_iteration(X, y, base)]
        F = np.zeros((300, K))
        for tree in trees:
            F += 0.1 * tree.node_vectors(K)[tree.apply(model._bin_mapper.transform(X), 255)]
        losses_by_base.append(losses.multiclass_loss(F, y))
    assert chosen == int(np.argmin(losses_by_base))
    assert model.n_trial_trees_ == (K - 1) * (K - 1)  # the four rejected bases' trees
    np.testing.assert_allclose(model.train_loss_[0], min(losses_by_base), rtol=1e-12)


def _one_iteration(X, y, base):
    from gpuboost.binning import BinMapper

    mapper = BinMapper(255).fit(X)
    codes = mapper.transform(X)
    K = int(y.max()) + 1
    backend = NumpyBackend(codes, y, None, K, n_bins=int(mapper.n_bins_.max()), missing_code=255)
    backend.set_scores(np.zeros((len(y), K)))
    grower = TreeGrower(backend, GrowerParams(max_leaves=6), mapper.bin_upper_edge, len(y))
    return [grower.grow(p)[0] for p in iteration_plan("abcrobustlogit", K, GrowerParams(max_leaves=6), base)]


@pytest.mark.parametrize("abc, plain", [("abcmart", "mart"), ("abcrobustlogit", "robustlogit")])
def test_abc_reduces_to_its_plain_method_for_two_classes(abc, plain):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=300) > 0).astype(int)
    a = BoostClassifier(algorithm=abc, n_estimators=20, max_leaves=6).fit(X, y)
    b = BoostClassifier(algorithm=plain, n_estimators=20, max_leaves=6).fit(X, y)
    assert a.n_trees_ == b.n_trees_ == 20
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_saves_loads_and_resumes(algorithm, small_multiclass, tmp_path):
    X, y = small_multiclass
    from gpuboost.callback import Checkpoint

    params = dict(algorithm=algorithm, n_estimators=9, max_leaves=5, gap=1)
    full = BoostClassifier(**params).fit(X, y)
    full.save_model(tmp_path / "full.json")
    loaded = gpuboost.load_model(tmp_path / "full.json")
    np.testing.assert_array_equal(loaded.predict_proba(X), full.predict_proba(X))
    assert full.n_trees_ == 9 * trees_per_iteration(algorithm, 4) and full.n_estimators_ == 9

    class Stop(gpuboost.callback.Callback):
        def after_iteration(self, model, iteration):
            return iteration == 4  # mid-way between two base-class searches (gap 1)

    BoostClassifier(**params, callbacks=[Checkpoint(tmp_path / "ckpt.json", every=2), Stop()]).fit(X, y)
    assert len(json.loads((tmp_path / "ckpt.json").read_text())["train_loss"]) == 5
    BoostClassifier(**params).fit(X, y, init_model=tmp_path / "ckpt.json").save_model(tmp_path / "resumed.json")
    assert (tmp_path / "resumed.json").read_bytes() == (tmp_path / "full.json").read_bytes()


@pytest.mark.parametrize("algorithm", ["mart", "robustlogit", "logitboost", "abcmart", "abcrobustlogit"])
def test_compiled_backend_builds_the_reference_model(algorithm, small_multiclass, monkeypatch):
    X, y = small_multiclass
    models = []
    for backend in ("numpy", "numba"):
        monkeypatch.setenv("GPUBOOST_CPU_BACKEND", backend)
        models.append(BoostClassifier(algorithm=algorithm, n_estimators=6, max_leaves=8).fit(X, y))
    for a, b in zip(models[0].trees_, models[1].trees_, strict=True):
        for name in ("feature", "bin", "pair", "left", "right"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        np.testing.assert_allclose(a.value, b.value, rtol=1e-12)


@pytest.mark.slow
def test_abcboost_numbers_on_digits():
    """ABCBoost's own results (ALGORITHMS.md), with its settings, within 4 test errors."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    abcboost = {"abcrobustlogit": 8, "robustlogit": 10, "abcmart": 11, "mart": 13}
    for algorithm, theirs in abcboost.items():
        model = BoostClassifier(algorithm=algorithm, n_estimators=200, max_leaves=20, learning_rate=0.1,
                                min_samples_leaf=10, max_bins=1000, leaf_clip=50.0, search=2, gap=5)
        errors = int(np.sum(model.fit(X_train, y_train).predict(X_test) != y_test))
        assert abs(errors - theirs) <= 4, f"{algorithm}: {errors} test errors, ABCBoost {theirs}"


def test_klogit_link_derivatives_by_finite_differences():
    rng = np.random.default_rng(5)
    F = rng.normal(size=(20, 3))
    y = rng.integers(0, 3, size=20)

    def loss(F):
        return np.exp(F - 1).sum(axis=1) - F[np.arange(20), y]

    p, g, total = losses.klogit_link(F, y)
    np.testing.assert_allclose(total, loss(F).sum(), rtol=1e-13)
    eps = 1e-5
    for k in range(3):
        step = np.zeros_like(F)
        step[:, k] = eps
        np.testing.assert_allclose(g[:, k], (loss(F + step) - loss(F - step)) / (2 * eps), atol=1e-8)
        second = (loss(F + step) - 2 * loss(F) + loss(F - step)) / eps**2
        np.testing.assert_allclose(p[:, k], second, atol=1e-4)  # Hessian diag(p)


def test_klogitboost_vector_tree_against_brute_force(data):
    codes, y, F = data
    K = 4
    backend = NumpyBackend(codes, y, None, K, n_bins=12, missing_code=255, link="klogit")
    backend.set_scores(F)
    p = np.exp(F - 1)
    check_vector_stump(backend, codes, p - np.eye(K)[y], p, 12)  # Hessian diag(p)


def test_klogitboost_trains_on_its_own_link(small_multiclass):
    X, y = small_multiclass
    model = BoostClassifier(algorithm="klogitboost", n_estimators=15, max_leaves=6).fit(X, y)
    F = model.decision_function(X)
    # the training loss is K-LogitBoost's own, sum_k exp(F_k - 1) - F_y, not the log loss
    np.testing.assert_allclose(model.train_loss_[-1], np.sum(np.exp(F - 1).sum(axis=1) - F[np.arange(len(y)), y]),
                               rtol=1e-10)
    link = np.exp(F - 1)
    np.testing.assert_allclose(model.predict_proba(X), link / link.sum(axis=1, keepdims=True), rtol=1e-12)
    assert model.score(X, y) > 0.8
