"""BoostClassifier: the scikit-learn API, labels, weights, missing values, devices."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from gpuboost import ALGORITHMS, BoostClassifier


def fit_small(X, y, **params):
    params = {"n_estimators": 20, "max_leaves": 8} | params
    return BoostClassifier(**params).fit(X, y)


def test_defaults_are_the_papers():
    params = BoostClassifier().get_params()
    assert params["max_leaves"] == 20 and params["learning_rate"] == 0.1
    assert params["min_samples_leaf"] == 1 and params["tol"] == 1e-16
    assert params["max_bins"] == 255 and params["pair_rule"] == "eq33" and params["leaf_clip"] == 5.0
    assert params["device"] == "auto" and params["algorithm"] == "aoso"


def test_clone_and_set_params():
    model = BoostClassifier(n_estimators=7).set_params(max_leaves=4)
    copy = clone(model)
    assert copy.get_params() == model.get_params() and copy is not model


def test_fit_predict_and_probabilities(small_multiclass):
    X, y = small_multiclass
    model = fit_small(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (len(y), 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
    assert model.score(X, y) > 0.8
    assert model.n_trees_ == model.n_estimators_ == 20 == len(model.train_loss_)
    np.testing.assert_allclose(model.decision_function(X).sum(axis=1), 0.0, atol=1e-12)


def test_training_scores_are_reproduced_by_prediction(small_multiclass):
    # the loop adds leaf vectors from row positions; prediction walks the trees: same bits
    X, y = small_multiclass
    model = fit_small(X, y, n_estimators=30)
    F = model.decision_function(X)
    loss = np.sum(np.log(np.exp(F).sum(axis=1)) - F[np.arange(len(y)), y])
    np.testing.assert_allclose(loss, model.train_loss_[-1], rtol=1e-12)


def test_staged_predictions_end_at_the_final_ones(small_multiclass):
    X, y = small_multiclass
    model = fit_small(X, y)
    stages = list(model.staged_predict_proba(X))
    assert len(stages) == 20
    np.testing.assert_array_equal(stages[-1], model.predict_proba(X))
    np.testing.assert_array_equal(list(model.staged_predict(X))[-1], model.predict(X))


def test_eval_set_is_monitored(small_multiclass):
    X, y = small_multiclass
    model = BoostClassifier(n_estimators=15, max_leaves=8).fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])])
    errors = [np.sum(p != y[200:]) for p in model.staged_predict(X[200:])]
    np.testing.assert_array_equal(model.eval_error_[0], errors)
    assert model.eval_loss_[0].shape == (15,)


def test_string_labels():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    names = np.array(["setosa", "versicolor", "virginica"])
    y = names[np.digitize(X[:, 0], [-0.5, 0.5])]
    model = fit_small(X, y)
    np.testing.assert_array_equal(model.classes_, names)
    assert model.predict(X).dtype.kind == "U" and model.score(X, y) > 0.95


def test_two_classes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] + X[:, 1] > 0, 7, 3)
    model = fit_small(X, y)
    for tree in model.trees_:
        assert set(map(tuple, tree.pair.tolist())) <= {(0, 1), (1, 0)}
    assert model.score(X, y) > 0.95
    decision = model.decision_function(X)
    assert decision.shape == (200,)
    np.testing.assert_array_equal(model.predict(X), np.where(decision > 0, 7, 3))


def test_missing_values_are_learned_and_routed():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 2))
    y = (X[:, 1] > 0).astype(int)
    # class 2: feature 0 is missing; nothing else tells it apart
    X[:100, 0] = np.nan
    y[:100] = 2
    model = fit_small(X, y)
    assert model.score(X, y) > 0.97
    X_new = rng.normal(size=(50, 2))
    X_new[:, 0] = np.nan
    assert np.all(model.predict(X_new) == 2)


def test_missing_at_prediction_only_goes_to_the_larger_child():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 1))
    y = (X[:, 0] > 1.0).astype(int)  # the left child (x <= ~1) holds most rows
    model = fit_small(X, y, n_estimators=5, max_leaves=2)
    assert model.predict(np.array([[np.nan]]))[0] == 0
    X_inf = np.array([[np.inf], [-np.inf]])
    np.testing.assert_array_equal(model.predict(X_inf), [1, 0])


def test_weight_two_equals_a_duplicated_row():
    rng = np.random.default_rng(4)
    # at most 120 distinct values a feature: exact bins either way; labels from the features,
    # so that no two candidate splits tie exactly (a tie could be broken by rounding)
    X = np.round(rng.normal(size=(120, 3)), 2)
    y = np.digitize(X @ [1.0, 0.5, -0.7] + 0.3 * rng.normal(size=120), [-0.5, 0.5])
    w = np.ones(120)
    w[:30] = 2.0
    weighted = BoostClassifier(n_estimators=10, max_leaves=8).fit(X, y, sample_weight=w)
    duplicated = BoostClassifier(n_estimators=10, max_leaves=8).fit(np.vstack([X, X[:30]]), np.r_[y, y[:30]])
    for a, b in zip(weighted.trees_, duplicated.trees_, strict=True):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.bin, b.bin)
        np.testing.assert_array_equal(a.pair, b.pair)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-9)
    np.testing.assert_allclose(weighted.predict_proba(X), duplicated.predict_proba(X), rtol=1e-9)


def test_zero_weight_rows_do_not_count():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    y_noisy = y.copy()
    y_noisy[:50] = 1 - y_noisy[:50]
    w = np.r_[np.zeros(50), np.ones(150)]
    a = BoostClassifier(n_estimators=10, max_leaves=4).fit(X, y_noisy, sample_weight=w)
    assert a.score(X[:50], y[:50]) > 0.9  # the flipped rows were ignored


@pytest.mark.parametrize("algorithm", ["aoso", "mart", "klogitboost"])
def test_read_only_weights_train_with_the_same_kernels(algorithm):
    """A read-only sample_weight (a pandas Series' values under copy-on-write, an np.load
    memory map) reached the compiled kernels as it was: numba compiled them again for a
    read-only array (minutes on a machine's first such fit). The weights are a writable copy,
    the kernels' argument types those of a writable array, the model the same."""
    from gpuboost.backends import _numba_cpu as kernels

    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    w = rng.uniform(0.5, 2.0, size=300)
    params = dict(algorithm=algorithm, n_estimators=4, max_leaves=5)
    kernel = {"aoso": kernels.grow_rounds, "mart": kernels.grow_tree}.get(algorithm, kernels.vector_histogram_rows)
    writable = BoostClassifier(**params).fit(X, y, sample_weight=w)
    before = set(kernel.signatures)
    read_only = w.copy()
    read_only.flags.writeable = False
    model = BoostClassifier(**params).fit(X, y, sample_weight=read_only)
    assert set(kernel.signatures) == before
    np.testing.assert_array_equal(model.decision_function(X), writable.decision_function(X))


def test_pandas_feature_names():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    df = pd.DataFrame(rng.normal(size=(100, 3)), columns=["a", "b", "c"])
    y = (df["a"] > 0).astype(int)
    model = fit_small(df, y)
    np.testing.assert_array_equal(model.feature_names_in_, ["a", "b", "c"])
    assert model.n_features_in_ == 3
    with pytest.warns(UserWarning):
        model.predict(df.to_numpy())


def test_wrong_number_of_features_at_predict(small_multiclass):
    X, y = small_multiclass
    model = fit_small(X, y, n_estimators=2)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])


@pytest.mark.parametrize(
    "params, message",
    [
        ({"algorithm": "xgboost"}, "algorithm='xgboost' is not known"),
        ({"max_leaves": 1}, "max_leaves"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"n_estimators": 0}, "n_estimators"),
        ({"pair_rule": "eq31"}, "pair_rule"),
        ({"max_bins": 70000}, "max_bins"),
        ({"device": "tpu"}, "device"),
    ],
)
def test_bad_parameters_get_clear_errors(small_multiclass, params, message):
    X, y = small_multiclass
    with pytest.raises(ValueError, match=message):
        BoostClassifier(**params).fit(X, y)


def test_cuda_is_a_clear_error_without_a_usable_gpu(small_multiclass, monkeypatch):
    from gpuboost import _device

    monkeypatch.setattr(_device, "gpu_status", lambda: (False, "no CUDA device (simulated)"))
    X, y = small_multiclass
    with pytest.raises(RuntimeError, match="no CUDA device .simulated.*device='cpu'"):
        BoostClassifier(device="cuda").fit(X, y)
    model = BoostClassifier(n_estimators=2, device="auto").fit(X, y)  # auto falls back to the CPU
    assert model.device_ == "cpu"


def _stub_cupy(capability: str):
    """A CuPy that imports and sees one device of the given compute capability ("75", "90")."""
    import types

    device = types.SimpleNamespace(compute_capability=capability, id=0)
    return types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: True, Device=lambda *a: device))


def test_a_gpu_the_kernels_cannot_run_on_is_not_usable(small_multiclass, monkeypatch):
    # CuPy working is not enough: the kernels need compute capability 8.0 (a T4 is 7.5), and the
    # backend needs numba-cuda. "auto" then trains on the CPU; "cuda" says why it cannot.
    import types

    from gpuboost.backends import cuda

    monkeypatch.setattr(cuda, "import_numba_cuda", lambda: types.SimpleNamespace(is_available=lambda: True))
    monkeypatch.setitem(sys.modules, "cupy", _stub_cupy("75"))
    usable, why = cuda.cuda_usable()
    assert not usable and "compute capability 7.5" in why and "8.0 or newer" in why
    X, y = small_multiclass
    assert BoostClassifier(n_estimators=2, device="auto").fit(X, y).device_ == "cpu"
    with pytest.raises(RuntimeError, match="compute capability 7.5"):
        BoostClassifier(device="cuda").fit(X, y)
    for capability in ("80", "90", "120"):
        monkeypatch.setitem(sys.modules, "cupy", _stub_cupy(capability))
        assert cuda.cuda_usable() == (True, "")

    def no_numba_cuda():
        raise ImportError("No module named 'numba.cuda'")

    monkeypatch.setattr(cuda, "import_numba_cuda", no_numba_cuda)
    usable, why = cuda.cuda_usable()
    assert not usable and why.startswith("numba-cuda is not usable (ImportError")
    assert BoostClassifier(n_estimators=2, device="auto").fit(X, y).device_ == "cpu"
    monkeypatch.setattr(cuda, "import_numba_cuda", lambda: types.SimpleNamespace(is_available=lambda: False))
    assert cuda.cuda_usable() == (False, "numba-cuda sees no usable CUDA device")


def test_one_class_is_a_clear_error():
    with pytest.raises(ValueError, match="only 1 class"):
        BoostClassifier().fit(np.ones((5, 2)), np.zeros(5))


def test_bad_weights_are_clear_errors(small_multiclass):
    X, y = small_multiclass
    for w, message in [(-np.ones(len(y)), ">= 0"), (np.zeros(len(y)), "zero for every row"), (np.ones(3), "entries")]:
        with pytest.raises(ValueError, match=message):
            BoostClassifier(n_estimators=2).fit(X, y, sample_weight=w)


def test_pair_rule_eq32_trains(small_multiclass):
    X, y = small_multiclass
    assert fit_small(X, y, pair_rule="eq32").score(X, y) > 0.8


def test_import_touches_no_gpu_stack():
    code = (
        "import sys, gpuboost\n"
        "bad = [m for m in ('cupy', 'numba.cuda', 'rmm') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_auto_keeps_the_cpu_when_the_gpu_kernels_do_not_hold_the_problem(monkeypatch):
    # device="auto" on a machine with a GPU, but more classes than the CUDA kernels hold:
    # the CPU trains, where device="cuda" would be an error from the backend
    from gpuboost import _device
    from gpuboost.backends import cuda

    monkeypatch.setattr(_device, "gpu_status", lambda: (True, ""))
    assert not cuda.cuda_supports(cuda.MAX_CLASSES + 1, 255)
    assert cuda.cuda_supports(cuda.MAX_CLASSES, 255) and not cuda.cuda_supports(2, 5000)
    assert cuda.cuda_supports(2, 255, cuda.MAX_GRID_Y) and not cuda.cuda_supports(2, 255, cuda.MAX_GRID_Y + 1)
    X = np.repeat(np.arange(cuda.MAX_CLASSES + 1, dtype=float), 2)[:, None]
    y = np.repeat(np.arange(cuda.MAX_CLASSES + 1), 2)
    model = BoostClassifier(n_estimators=1, max_leaves=2, device="auto").fit(X, y)
    assert model.device_ == "cpu"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_each_stage_is_the_model_of_that_many_iterations(algorithm, n_classes):
    import copy

    rng = np.random.default_rng(10)
    X = rng.normal(size=(90, 3))
    y = np.arange(90) % n_classes
    model = fit_small(X, y, algorithm=algorithm, n_estimators=3, max_leaves=4, device="cpu")
    stages = zip(model.staged_decision_function(X), model.staged_predict_proba(X), model.staged_predict(X),
                 strict=True)
    for k, (decision, proba, labels) in enumerate(stages, start=1):
        at_k = copy.deepcopy(model)
        at_k._truncate(k)
        np.testing.assert_array_equal(decision, at_k.decision_function(X))
        np.testing.assert_array_equal(proba, at_k.predict_proba(X))
        np.testing.assert_array_equal(labels, at_k.predict(X))
    assert k == model.n_estimators_


@pytest.mark.parametrize("algorithm", ["aoso", "mart", "abcmart", "klogitboost", "adaboostmh"])
def test_a_class_only_in_zero_weight_rows_is_still_a_class(algorithm, tmp_path):
    # as in scikit-learn, rows of weight 0 still declare their classes: a column each in predict_proba
    from gpuboost import load_model

    rng = np.random.default_rng(11)
    X = rng.normal(size=(90, 3))
    y = np.digitize(X[:, 0], [-0.4, 0.4])
    w = np.where(y == 2, 0.0, 1.0)
    model = BoostClassifier(algorithm=algorithm, n_estimators=3, max_leaves=4, device="cpu").fit(
        X, y, sample_weight=w, eval_set=[(X, y)])
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    proba = model.predict_proba(X)
    assert proba.shape == (90, 3) and np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert model.score(X[y < 2], y[y < 2]) > 0.8
    model.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(load_model(tmp_path / "m.json").predict_proba(X), proba)


def test_a_new_fit_keeps_nothing_of_the_previous_one(small_multiclass):
    X, y = small_multiclass
    model = BoostClassifier(n_estimators=10, max_leaves=4, early_stopping_rounds=2)
    model.fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])])
    assert hasattr(model, "best_iteration_") and hasattr(model, "best_score_")
    model.set_params(early_stopping_rounds=None, n_estimators=3).fit(X, y)
    assert not hasattr(model, "best_iteration_") and not hasattr(model, "best_score_")
    model.set_params(algorithm="adaboostmh").fit(X, y)
    assert len(model.train_hamming_loss_) == 3
    model.set_params(algorithm="aoso").fit(X, y)
    assert not hasattr(model, "train_hamming_loss_")


def test_a_loss_already_at_tol_warns_and_the_model_predicts_uniformly(small_multiclass, tmp_path):
    from gpuboost import load_model

    X, y = small_multiclass
    with pytest.warns(UserWarning, match=r"no tree was added: the training loss .* is already at or below tol"):
        model = BoostClassifier(n_estimators=3, tol=1e9).fit(X, y)
    assert model.n_trees_ == model.n_estimators_ == 0
    np.testing.assert_array_equal(model.decision_function(X), 0.0)
    np.testing.assert_allclose(model.predict_proba(X), 0.25)
    np.testing.assert_array_equal(model.predict(X), np.full(len(y), model.classes_[0]))
    assert list(model.staged_predict(X)) == []
    model.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(load_model(tmp_path / "m.json").predict_proba(X), model.predict_proba(X))


def test_continuing_on_other_feature_names_is_refused():
    # as scikit-learn's predict: other names are an error, names on one side only a warning
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(12)
    df = pd.DataFrame(rng.normal(size=(100, 3)), columns=["a", "b", "c"])
    y = (df["a"] > 0).astype(int)
    model = BoostClassifier(n_estimators=2, max_leaves=4, warm_start=True).fit(df, y)
    model.set_params(n_estimators=4)
    with pytest.raises(ValueError, match=r"X's feature names are not the ones it was fitted with "
                                         r"\(unseen at fit time: \['d'\]; seen at fit time, yet now missing: \['c'\]\)"):
        model.fit(df.rename(columns={"c": "d"}), y)
    with pytest.raises(ValueError, match="X's feature names are the ones it was fitted with, in another order"):
        model.fit(df[["b", "a", "c"]], y, init_model=BoostClassifier(n_estimators=2, max_leaves=4).fit(df, y))
    assert model.n_estimators_ == 2
    with pytest.warns(UserWarning, match="X does not have valid feature names, but the model to continue was fitted"):
        model.fit(df.to_numpy(), y)
    assert model.n_estimators_ == 4


def test_a_model_continues_itself_as_init_model(small_multiclass):
    X, y = small_multiclass
    model = BoostClassifier(n_estimators=3, max_leaves=4).fit(X, y)
    model.set_params(n_estimators=5).fit(X, y, init_model=model)
    full = BoostClassifier(n_estimators=5, max_leaves=4).fit(X, y)
    np.testing.assert_array_equal(model.predict_proba(X), full.predict_proba(X))


@pytest.mark.parametrize("multilabel", [False, True])
def test_set_params_after_fit_changes_the_parameters_not_the_model(small_multiclass, multilabel, tmp_path):
    # prediction, staged prediction and the saved file use what the trees were trained with
    from gpuboost import load_model

    X, y = small_multiclass
    target = np.eye(4, dtype=int)[y] | (X[:, :1] > 0) if multilabel else y
    model = BoostClassifier(algorithm="klogitboost", n_estimators=4, max_leaves=4, learning_rate=0.1).fit(X, target)
    before = (model.predict_proba(X), model.predict(X), list(model.staged_predict_proba(X)))
    model.set_params(algorithm="mart", learning_rate=0.5)
    np.testing.assert_array_equal(model.predict_proba(X), before[0])
    np.testing.assert_array_equal(model.predict(X), before[1])
    staged = list(model.staged_predict_proba(X))
    assert len(staged) == 4 and all(np.array_equal(a, b) for a, b in zip(staged, before[2]))
    model.save_model(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.get_params()["algorithm"] == "klogitboost" and loaded.get_params()["learning_rate"] == 0.1
    np.testing.assert_array_equal(loaded.predict_proba(X), before[0])
    # a new fit takes the new parameters: MART, a tree per class an iteration
    model.fit(X, target)
    assert len(model.trees_) == 4 * len(model.classes_) and not np.array_equal(model.predict_proba(X), before[0])


def test_prediction_packs_the_trees_it_is_given(small_multiclass):
    # predict keeps trees_ packed for the compiled walk (beside the estimator, not in it); a
    # continued fit, a shorter trees_ or a replaced tree is packed again: every prediction is
    # the reference's walk of the trees as they are now
    from gpuboost.backends.base import Backend
    from gpuboost.backends.numpy import NumpyBackend
    from gpuboost.sklearn import _PACKED

    X, y = small_multiclass
    model = BoostClassifier(n_estimators=8, max_leaves=6, warm_start=True, device="cpu").fit(X, y)
    K = len(model.classes_)

    def reference():
        F = np.zeros((X.shape[0], K))
        Backend.add_trees.__func__(NumpyBackend, F, model.trees_, model._bin_mapper.transform(X),
                                   model._bin_mapper.missing_bin, model.learning_rate)
        return F

    before = dict(model.__dict__)
    np.testing.assert_array_equal(model.decision_function(X), reference())
    assert model.__dict__.keys() == before.keys()  # predicting changes nothing in the estimator
    packed = _PACKED[model][2]
    np.testing.assert_array_equal(model.decision_function(X), reference())
    assert _PACKED[model][2] is packed  # the same trees: the same packing
    model.set_params(n_estimators=12).fit(X, y)  # continued: 4 more trees
    assert len(model.trees_) == 12
    np.testing.assert_array_equal(model.decision_function(X), reference())
    model.trees_ = model.trees_[:5]
    np.testing.assert_array_equal(model.decision_function(X), reference())
    model.trees_[2] = model.trees_[4]
    np.testing.assert_array_equal(model.decision_function(X), reference())
    with pytest.raises(ValueError, match="read-only"):  # a tree changes by replacing it, not in place
        model.trees_[0].value[0] = 1.0
    import pickle

    copy = pickle.loads(pickle.dumps(model))  # the packing is not pickled: the copy packs its own
    assert copy not in _PACKED
    np.testing.assert_array_equal(copy.decision_function(X), reference())


def test_an_unhashable_subclass_still_predicts(small_multiclass):
    # the packing is kept in a weak dictionary keyed by the estimator; a subclass with __eq__
    # and no __hash__ cannot be a key, and packs at every prediction instead
    class Unhashable(BoostClassifier):
        def __eq__(self, other):
            return self is other

    X, y = small_multiclass
    model = Unhashable(n_estimators=4, max_leaves=5).fit(X, y)
    reference = BoostClassifier(n_estimators=4, max_leaves=5).fit(X, y)
    np.testing.assert_array_equal(model.decision_function(X), reference.decision_function(X))


def test_max_leaves_beyond_the_rows_grows_the_same_trees(small_multiclass):
    """A tree has at most n_samples // min_samples_leaf leaves: a larger max_leaves grows the
    same trees, without allocating for it (max_leaves=10**9 was killed for lack of memory)."""
    X, y = small_multiclass[0][:80], small_multiclass[1][:80]
    for algorithm in ("aoso", "mart", "adaboostmh"):
        huge = BoostClassifier(n_estimators=3, max_leaves=10**9, min_samples_leaf=2, algorithm=algorithm).fit(X, y)
        capped = BoostClassifier(n_estimators=3, max_leaves=40, min_samples_leaf=2, algorithm=algorithm).fit(X, y)
        np.testing.assert_array_equal(huge.predict_proba(X), capped.predict_proba(X))
        assert huge.get_params()["max_leaves"] == 10**9


def test_continuing_with_other_max_bins_is_refused(small_multiclass):
    """A continuation keeps its model's binning: a different max_bins (set_params before a
    warm start, say) is refused rather than reported but not used."""
    X, y = small_multiclass
    model = BoostClassifier(n_estimators=2, max_leaves=4, warm_start=True).fit(X, y)
    model.set_params(n_estimators=4, max_bins=16)
    with pytest.raises(ValueError, match="its max_bins is 255, this estimator's 16"):
        model.fit(X, y)
    with pytest.raises(ValueError, match="its max_bins is 255, this estimator's 16"):
        BoostClassifier(n_estimators=4, max_leaves=4, max_bins=16).fit(X, y, init_model=model)


def test_missing_values_of_pandas_string_and_categorical_columns_and_lists_are_nan():
    """pandas.NA in a string or categorical column, or in lists of rows, was a TypeError from
    deep inside the conversion; it is a missing value, as in an object column."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(80, 2)), 1)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.3)
    X[[3, 10], 0] = np.nan
    expected = BoostClassifier(n_estimators=4, max_leaves=4).fit(X, y).predict_proba(X)
    text = pd.array([None if np.isnan(v) else str(v) for v in X[:, 0]], dtype="string")
    categories = pd.Series(pd.Categorical(pd.array([pd.NA if np.isnan(v) else v for v in X[:, 0]], dtype="Float64")))
    rows = [[pd.NA if np.isnan(v) else v for v in row] for row in X.tolist()]
    for data in (pd.DataFrame({"a": text, "b": X[:, 1]}), pd.DataFrame({"a": categories, "b": X[:, 1]}), rows):
        model = BoostClassifier(n_estimators=4, max_leaves=4).fit(data, y)
        np.testing.assert_array_equal(model.predict_proba(data), expected)


def test_a_dataframe_of_sparse_columns_is_its_dense_values():
    """A DataFrame whose every column is sparse (DataFrame.sparse.from_spmatrix) was refused
    as sparse data, while one with a dense column and scipy.sparse X are taken."""
    pd = pytest.importorskip("pandas")
    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    X = np.where(rng.random((60, 3)) < 0.6, 0.0, rng.normal(size=(60, 3)))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] < 0)
    frame = pd.DataFrame.sparse.from_spmatrix(sp.csr_matrix(X), columns=["a", "b", "c"])
    model = BoostClassifier(n_estimators=4, max_leaves=4).fit(frame, y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_array_equal(model.predict_proba(frame),
                                  BoostClassifier(n_estimators=4, max_leaves=4).fit(X, y).predict_proba(X))


def test_scikit_learn_conventions_for_verbose_and_a_scalar_sample_weight(capsys):
    """verbose=True was refused (scikit-learn's estimators take a bool), and a scalar
    sample_weight was 'sample_weight has 1 entries' (scikit-learn gives every row that weight)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    BoostClassifier(n_estimators=2, max_leaves=4, verbose=True).fit(X, y)
    assert BoostClassifier(n_estimators=2, max_leaves=4, verbose=False).fit(X, y).n_estimators == 2
    weighted = BoostClassifier(n_estimators=4, max_leaves=4).fit(X, y, sample_weight=2.0)
    full = BoostClassifier(n_estimators=4, max_leaves=4).fit(X, y, sample_weight=np.full(60, 2.0))
    np.testing.assert_array_equal(weighted.predict_proba(X), full.predict_proba(X))
    np.testing.assert_array_equal(weighted.train_loss_, full.train_loss_)


def test_a_fit_whose_training_loss_ends_above_its_start_warns():
    """K-LogitBoost at learning_rate=20 drove its training loss from 331 to 1e43 without a word
    (only an overflow to inf was an error): a fit that ends above the loss of F = 0 warns."""
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    pattern = (r"the training loss ended at .*, above 331.091, the loss of the initial scores F = 0 .* "
               r"Lower learning_rate \(now 20.0\) or leaf_clip")
    with pytest.warns(ConvergenceWarning, match=pattern):
        model = BoostClassifier(algorithm="klogitboost", learning_rate=20.0, n_estimators=10).fit(X, y)
    assert model.train_loss_[-1] > model.initial_loss_
    # of the model fit returns: after an early stopping's truncation
    with pytest.warns(ConvergenceWarning) as caught:
        stopped = BoostClassifier(algorithm="klogitboost", learning_rate=20.0, n_estimators=10,
                                  early_stopping_rounds=2).fit(X, y, eval_set=[(X, y)])
    assert f"ended at {stopped.train_loss_[-1]:.6g}," in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for algorithm in ALGORITHMS:
            BoostClassifier(algorithm=algorithm, n_estimators=10, max_leaves=4).fit(X, y)


def test_n_jobs_none_counts_the_cpus_the_process_may_use():
    """n_jobs=None took the CPU affinity alone: in a container limited to 2 CPUs of a large host,
    as many threads as the host's cores shared 2 CPUs' time. It is joblib's count (affinity,
    cgroup quota, LOKY_MAX_CPU_COUNT), which the environment variable stands for here."""
    code = ("from gpuboost import BoostClassifier; import numpy as np; m = BoostClassifier(n_estimators=2); "
            "print(m._n_threads(), BoostClassifier(n_jobs=-1)._n_threads(), BoostClassifier(n_jobs=4)._n_threads()); "
            "m.fit(np.arange(40.0).reshape(20, 2), np.arange(20) % 2)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "LOKY_MAX_CPU_COUNT": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["1", "1", "1"]


def test_a_min_samples_leaf_no_tree_can_split_by_warns():
    X, y = np.random.default_rng(0).normal(size=(60, 2)), np.arange(60) % 3
    with pytest.warns(UserWarning, match="min_samples_leaf=31 is more than half of the 60 rows .* Lower min_samples"):
        model = BoostClassifier(n_estimators=2, min_samples_leaf=31).fit(X, y)
    assert all(tree.n_leaves == 1 for tree in model.trees_)
    with pytest.warns(UserWarning, match="of the 6 rows each tree is grown on.* or raise subsample"):
        BoostClassifier(n_estimators=2, subsample=0.1, min_samples_leaf=4).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BoostClassifier(n_estimators=2, min_samples_leaf=30).fit(X, y)  # (30 and 30 rows: one split)


def test_float32_X_trains_the_float64_copys_model():
    """A float32 X is kept as it is (binned a block of columns at a time: no float64 copy of X)
    and gives the model of its float64 copy, bit for bit: fit, eval sets, held-out rows,
    predictions."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(400, 6)).astype(np.float32)
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    y = (X[:, 0] > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 0.5)
    params = dict(n_estimators=8, max_leaves=6, validation_fraction=0.2, random_state=0, n_jobs=1)
    a = BoostClassifier(**params).fit(X, y, eval_set=[(X[:50], y[:50])])
    b = BoostClassifier(**params).fit(X.astype(np.float64), y, eval_set=[(X[:50].astype(np.float64), y[:50])])
    np.testing.assert_array_equal(np.asarray(a.eval_loss_), np.asarray(b.eval_loss_))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X.astype(np.float64)))
    np.testing.assert_array_equal(a.predict_proba(X), a.predict_proba(X.astype(np.float64)))


_TOY_KERNEL = '''
from numba import njit

@njit(cache=True)
def add_one(x):
    return x + {step}
'''

_TOY_CHECK = '''
import sys
sys.path.insert(0, sys.argv[1])
import toy_kernel
from gpuboost.backends.cpu import machine_code_cached
before = machine_code_cached(toy_kernel.add_one)
toy_kernel.add_one(1.0)
print(before, machine_code_cached(toy_kernel.add_one))
'''


def test_machine_code_cached_tells_a_first_compile_from_numbas_cache(tmp_path):
    """machine_code_cached (what a verbose fit asks before saying that it compiles): False for
    a cache=True kernel never compiled for its source, True once compiled, and True in a later
    process (numba's cache), False again once its source changes."""
    import gpuboost

    (tmp_path / "toy_kernel.py").write_text(_TOY_KERNEL.format(step=1))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(Path(gpuboost.__file__).resolve().parents[1]))

    def run():
        done = subprocess.run([sys.executable, "-c", _TOY_CHECK, str(tmp_path)], capture_output=True, text=True,
                              env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    assert run() == ["False", "True"]
    assert run() == ["True", "True"]
    (tmp_path / "toy_kernel.py").write_text(_TOY_KERNEL.format(step=2) + "\n# another source\n")
    assert run() == ["False", "True"]


@pytest.mark.parametrize("verbose, compiled, said", [(1, False, True), (1, True, False), (0, False, False),
                                                      (1, None, False)])
def test_a_verbose_fit_says_when_it_compiles_the_kernels(monkeypatch, capsys, verbose, compiled, said):
    from gpuboost import sklearn as gpuboost_sklearn
    from gpuboost.backends import cpu

    monkeypatch.setattr(cpu, "kernels_compiled", lambda vector=False: compiled)
    X = np.random.default_rng(0).normal(size=(60, 3))
    BoostClassifier(n_estimators=2, max_leaves=4, verbose=verbose, device="cpu").fit(X, X[:, 0] > 0)
    assert (gpuboost_sklearn.COMPILING in capsys.readouterr().out) == said
