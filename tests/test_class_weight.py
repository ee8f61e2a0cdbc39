"""class_weight: per-class weights that multiply sample_weight, as in scikit-learn's classifiers."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.class_weight import compute_sample_weight

import gpuboost
from gpuboost import BoostClassifier


@pytest.fixture
def imbalanced():
    """Three classes of 200, 60 and 20 rows, overlapping."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], [200, 60, 20])
    X = rng.normal(size=(y.size, 4)) + 0.8 * y[:, None]
    return X, y


def small(**params):
    return BoostClassifier(**({"n_estimators": 15, "max_leaves": 6} | params))


@pytest.mark.parametrize("algorithm", ["aoso", "mart", "adaboostmh"])
def test_a_dict_is_the_same_model_as_those_sample_weights(imbalanced, algorithm):
    X, y = imbalanced
    per_class = {0: 0.5, 1: 2.0, 2: 4.0}
    a = small(algorithm=algorithm, class_weight=per_class).fit(X, y)
    b = small(algorithm=algorithm).fit(X, y, sample_weight=np.array([per_class[c] for c in y]))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.train_loss_, b.train_loss_)


def test_balanced_is_scikit_learns_and_multiplies_sample_weight(imbalanced):
    X, y = imbalanced
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=y.size)
    a = small(class_weight="balanced").fit(X, y, sample_weight=w)
    b = small().fit(X, y, sample_weight=w * compute_sample_weight("balanced", y))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    # the weights change the model: the smallest class is predicted more often
    plain = small().fit(X, y)
    assert (a.predict(X) == 2).sum() > (plain.predict(X) == 2).sum()


def test_weights_of_one_are_the_unweighted_model(imbalanced):
    X, y = imbalanced
    plain = small().fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(small(class_weight={0: 1, 2: 1.0}).fit(X, y).predict_proba(X), plain)
    balanced = np.repeat([0, 1, 2], 30)
    Xb = X[:90]
    np.testing.assert_array_equal(small(class_weight="balanced").fit(Xb, balanced).predict_proba(Xb),
                                  small().fit(Xb, balanced).predict_proba(Xb))


def test_string_labels_and_numpy_keys(imbalanced):
    X, y = imbalanced
    names = np.array(["cat", "dog", "eel"])[y]
    a = small(class_weight={"eel": 3.0, np.str_("dog"): 2.0}).fit(X, names)
    b = small(class_weight={2: 3.0, np.int64(1): 2.0}).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_a_zero_class_weight_drops_the_class_rows(imbalanced):
    X, y = imbalanced
    a = small(class_weight={2: 0.0}).fit(X, y)
    b = small().fit(X, y, sample_weight=(y != 2) * 1.0)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert list(a.classes_) == [0, 1, 2]


def test_clone_and_model_files_keep_it(imbalanced, tmp_path):
    X, y = imbalanced
    for labels, class_weight in [(y, {0: 0.5, 2: 4.0}), (np.array(["a", "b", "c"])[y], {"c": 4.0}),
                                 (y, "balanced")]:
        model = small(class_weight=class_weight).fit(X, labels)
        assert clone(model).get_params()["class_weight"] == class_weight
        model.save_model(tmp_path / "m.json")
        loaded = gpuboost.load_model(tmp_path / "m.json")
        assert loaded.get_params()["class_weight"] == class_weight
        np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_continuation_needs_the_same_class_weight(imbalanced, tmp_path):
    X, y = imbalanced
    whole = small(class_weight={2: 4.0}, n_estimators=10).fit(X, y)
    half = small(class_weight={2: 4.0}, n_estimators=5).fit(X, y)
    half.save_model(tmp_path / "half.json")
    resumed = small(class_weight={2: 4.0}, n_estimators=10).fit(X, y, init_model=tmp_path / "half.json")
    np.testing.assert_array_equal(resumed.predict_proba(X), whole.predict_proba(X))
    with pytest.raises(ValueError, match="its class_weight is {2: 4.0}, this estimator's 'balanced'"):
        small(class_weight="balanced", n_estimators=10).fit(X, y, init_model=tmp_path / "half.json")
    # warm_start: the weights the trees were trained with, not a set_params since
    half.set_params(class_weight=None, n_estimators=10, warm_start=True)
    with pytest.raises(ValueError, match="its class_weight is {2: 4.0}, this estimator's None"):
        half.fit(X, y)


def test_a_model_file_with_a_class_weight_of_an_unknown_label_is_refused(imbalanced, tmp_path):
    import json

    X, y = imbalanced
    small(class_weight={2: 4.0}).fit(X, y).save_model(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    assert data["params"]["class_weight"] == [[2, 4.0]]
    data["params"]["class_weight"] = [[9, 4.0]]
    del data["checksum"]
    from gpuboost.io import _checksum

    data["checksum"] = _checksum(data)
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(gpuboost.io.ModelFormatError, match="class_weight"):
        gpuboost.load_model(tmp_path / "m.json")


def test_a_dict_for_more_classes_than_this_y_has(imbalanced):
    X, y = imbalanced
    keep = y < 2  # a fold without class 2, weighted with the dict made for all three
    a = small(class_weight={0: 0.5, 1: 2.0, 2: 4.0}).fit(X[keep], y[keep])
    b = small(class_weight={0: 0.5, 1: 2.0}).fit(X[keep], y[keep])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    with pytest.raises(ValueError, match=r"not classes of y \(\[2\]\) and leaves classes of y at weight 1 \(\[1\]\)"):
        small(class_weight={0: 0.5, 2: 4.0}).fit(X[keep], y[keep])


def test_weights_of_other_number_types(imbalanced, tmp_path):
    import warnings
    from fractions import Fraction

    X, y = imbalanced
    expected = small(class_weight={2: 0.5}).fit(X, y).predict_proba(X)
    for value in (np.float32(0.5), np.float16(0.5), Fraction(1, 2)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (np.float32 once warned of an overflow in a cast)
            model = small(class_weight={2: value}).fit(X, y)
        np.testing.assert_array_equal(model.predict_proba(X), expected)
    model = small(validation_fraction=Fraction(1, 5), random_state=0).fit(X, y)
    model.save_model(tmp_path / "f.json")
    assert gpuboost.load_model(tmp_path / "f.json").get_params()["validation_fraction"] == 0.2


def test_equivalent_class_weights_continue(imbalanced):
    X, y = imbalanced
    model = small(n_estimators=4).fit(X, y)
    for same in ({}, {0: 1, 1: 1.0}):
        small(n_estimators=6, class_weight=same).fit(X, y, init_model=model)


def test_estimators_pickled_before_these_parameters_and_files_without_them(imbalanced, tmp_path):
    import pickle

    X, y = imbalanced
    model = small().fit(X, y)
    del model.class_weight, model.validation_fraction  # as an estimator of the previous version
    old = pickle.loads(pickle.dumps(model))
    assert old.get_params()["class_weight"] is None and old.get_params()["validation_fraction"] is None
    np.testing.assert_array_equal(old.predict_proba(X), small().fit(X, y).predict_proba(X))
    fixture = __import__("pathlib").Path(__file__).parent / "fixtures" / "model_v1.json"
    loaded = BoostClassifier(class_weight="balanced", validation_fraction=0.3).load_model(fixture)
    # the file's parameters (their defaults), not the estimator's own
    assert loaded.class_weight is None and loaded.validation_fraction is None


def test_eval_sample_weight_weighs_an_eval_sets_loss_and_drops_rows_of_weight_0(imbalanced):
    from sklearn.metrics import log_loss

    X, y = imbalanced
    w = np.random.default_rng(4).uniform(0.5, 3.0, size=y.size)
    w[::5] = 0.0
    model = small().fit(X, y, eval_set=[(X, y), (X, y)], eval_sample_weight=[w, None])
    proba = model.predict_proba(X)
    kept = w > 0
    np.testing.assert_allclose(model.eval_loss_[0][-1], log_loss(y, proba, sample_weight=w, normalize=False),
                               rtol=1e-9)
    np.testing.assert_allclose(model.eval_loss_[1][-1], log_loss(y, proba, normalize=False), rtol=1e-9)
    assert model.eval_error_[0][-1] == np.count_nonzero(model.predict(X)[kept] != y[kept])
    assert model.eval_error_[1][-1] == np.count_nonzero(model.predict(X) != y)


def test_eval_sample_weight_of_a_multilabel_eval_set(imbalanced):
    from gpuboost import losses

    X, y = imbalanced
    Y = np.stack([y == 0, y >= 1, X[:, 0] > 0], axis=1).astype(int)
    w = np.r_[np.zeros(10), np.linspace(0.5, 2.0, y.size - 10)]
    model = small(algorithm="klogitboost").fit(X, Y, eval_set=[(X, Y)], eval_sample_weight=[w])
    F = model.decision_function(X[10:])
    expected = losses.logistic_link(model._label_logit_scale() * F, Y[10:].astype(bool), w[10:])[4]
    np.testing.assert_allclose(model.eval_loss_[0][-1], expected, rtol=1e-12)
    assert model.eval_error_[0][-1] == np.count_nonzero(model.predict(X[10:]) != Y[10:])


def test_files_with_class_weights_for_more_classes_or_of_fractions(imbalanced, tmp_path):
    from fractions import Fraction

    X, y = imbalanced
    keep = y < 2
    for class_weight in ({0: 2.0, 1: 1.0, 2: 3.0, 9: 5.0}, {0: Fraction(1, 2)}):
        model = small(n_estimators=4, class_weight=class_weight).fit(X[keep], y[keep])
        model.save_model(tmp_path / "m.json")
        loaded = gpuboost.load_model(tmp_path / "m.json")
        assert loaded.get_params()["class_weight"] == class_weight
        resumed = small(n_estimators=8, class_weight=class_weight).fit(X[keep], y[keep], init_model=tmp_path / "m.json")
        whole = small(n_estimators=8, class_weight=class_weight).fit(X[keep], y[keep])
        np.testing.assert_array_equal(resumed.predict_proba(X), whole.predict_proba(X))


def test_fraction_parameters_continue_from_their_files(imbalanced, tmp_path):
    from fractions import Fraction

    X, y = imbalanced
    params = {"validation_fraction": Fraction(1, 5), "learning_rate": Fraction(1, 4), "random_state": 0}
    small(n_estimators=4, **params).fit(X, y).save_model(tmp_path / "m.json")
    resumed = small(n_estimators=8, **params).fit(X, y, init_model=tmp_path / "m.json")
    np.testing.assert_array_equal(resumed.predict_proba(X), small(n_estimators=8, **params).fit(X, y).predict_proba(X))


def test_a_file_with_an_out_of_range_seed_of_an_earlier_version_loads(imbalanced, tmp_path):
    import json

    from gpuboost.io import _checksum

    X, y = imbalanced
    model = small().fit(X, y)
    model.save_model(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    data["params"]["random_state"] = -1  # as an earlier version saved it
    del data["checksum"]
    data["checksum"] = _checksum(data)
    (tmp_path / "m.json").write_text(json.dumps(data))
    loaded = gpuboost.load_model(tmp_path / "m.json")
    assert loaded.random_state is None
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
