"""The ABCBoost-style functional API: an ABCBoost script runs with ``import gpuboost as abcboost``."""

import numpy as np
import pytest

import gpuboost as abcboost


@pytest.fixture
def digits():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)


def test_an_abcboost_script_runs_unchanged(digits, tmp_path):
    X_train, X_test, Y_train, Y_test = digits
    # as an ABCBoost user writes it: train, test with save_prob=1, predict, save, load
    model = abcboost.train(Y_train, X_train, "abcrobustlogit", 30, 20, 0.1, search=2, gap=5)
    result = abcboost.test(Y_test, X_test, model, save_prob=1)
    prediction = abcboost.predict(X_test, model)["prediction"]
    abcboost.save(model, str(tmp_path / "model.json"))
    again = abcboost.load(str(tmp_path / "model.json"))

    assert result["testlog"].shape == (30, 4)  # iteration, loss, errors, time
    np.testing.assert_array_equal(result["testlog"][:, 0], np.arange(1, 31))
    assert result["testlog"][-1, 2] == np.sum(result["prediction"] != Y_test)
    assert result["probability"].shape == (len(Y_test), 10)
    np.testing.assert_array_equal(prediction, result["prediction"])
    np.testing.assert_array_equal(abcboost.predict(X_test, again)["prediction"], prediction)
    assert np.mean(prediction == Y_test) > 0.9


def test_the_abcboost_readme_calls_run(digits):
    """The calls of ABCBoost's README, current (keys; test and predict with test_auc=1) and
    earlier (search and gap as the seventh and eighth positional arguments)."""
    X_train, X_test, Y_train, Y_test = digits
    model = abcboost.train(Y_train, X_train, "abcrobustlogit", 5, 20, 0.1, search=3, gap=0, n_threads=1)
    earlier = abcboost.train(Y_train, X_train, "abcrobustlogit", 5, 20, 0.1, 3, 0)
    assert (model.search, model.gap, earlier.search, earlier.gap) == (3, 0, 3, 0)
    np.testing.assert_array_equal(earlier.predict_proba(X_test), model.predict_proba(X_test))
    result = abcboost.test(Y_test, X_test, model, test_auc=1)
    assert result["testlog"].shape == (5, 5)  # iteration, loss, errors, AUC, seconds
    np.testing.assert_array_equal(result["testlog"][:, :3], abcboost.test(Y_test, X_test, model)["testlog"][:, :3])
    res = abcboost.predict(X_test, model, test_auc=1)
    assert set(res) == {"prediction"}
    np.testing.assert_array_equal(res["prediction"], model.predict(X_test))
    with pytest.raises(ValueError, match="test_auc must be 0 or 1, got 2"):
        abcboost.test(Y_test, X_test, model, test_auc=2)
    for call in (lambda v: abcboost.test(Y_test, X_test, model, save_prob=v),
                 lambda v: abcboost.predict(X_test, model, save_prob=v)):
        for value in ("0", 2):  # ("0" was taken as on)
            with pytest.raises(ValueError, match=f"save_prob must be 0 or 1, got {value!r}"):
                call(value)
        assert "probability" in call(True) and "probability" not in call(np.bool_(False))


def _brute_force_auc(positive, score):
    """The chance that a positive row scores above a negative one, ties a half, over all pairs."""
    above = score[positive][:, None] > score[~positive][None, :]
    tied = score[positive][:, None] == score[~positive][None, :]
    return (above.sum() + 0.5 * tied.sum()) / above.size


def test_the_auc_column_is_abcboosts(small):
    """test_auc's column: for more than two classes the mean over classes of each class's AUC
    against the rest by its own score, for two the first class's, for a multi-label model the
    mean over labels; checked against every (positive, negative) pair, and against
    scikit-learn's roc_auc_score, on scores with ties."""
    from sklearn.metrics import roc_auc_score

    from gpuboost.functional import _auc

    X, y = small
    rng = np.random.default_rng(3)
    score = rng.integers(0, 5, size=60).astype(float)  # (many ties)
    for positive in (y == 0, y == 2, rng.random(60) < 0.5):
        assert _auc(positive, score) == pytest.approx(_brute_force_auc(positive, score), abs=1e-12)
        assert _auc(positive, score) == pytest.approx(roc_auc_score(positive, score), abs=1e-12)
    assert np.isnan(_auc(np.zeros(60, bool), score)) and np.isnan(_auc(np.ones(60, bool), score))
    three = abcboost.train(y, X, "mart", 3, 4, 0.1)
    F = three.decision_function(X)
    want = np.mean([_brute_force_auc(y == k, F[:, k]) for k in range(3)])
    assert abcboost.test(y, X, three, test_auc=1)["testlog"][-1, 3] == pytest.approx(want, abs=1e-12)
    X2 = rng.normal(size=(600, 4))
    y2 = (X2[:, 0] + X2[:, 1] * X2[:, 2] + rng.normal(scale=0.5, size=600) > 0).astype(int)
    for algorithm in ("robustlogit", "klogitboost"):  # (K-LogitBoost's two scores are not each other's negatives)
        two = abcboost.train(y2, X2, algorithm, 20, 8, 0.1, n_threads=1)
        F = two._scores(X2)
        want = _brute_force_auc(y2 == 0, F[:, 0] - F[:, 1])
        assert abcboost.test(y2, X2, two, test_auc=1)["testlog"][-1, 3] == pytest.approx(want, abs=1e-12)
        if algorithm == "robustlogit":  # (scores of sum 0: the first class's probability ranks the rows alike)
            assert want == pytest.approx(_brute_force_auc(y2 == 0, two.predict_proba(X2)[:, 0]), abs=1e-12)
        else:
            assert np.abs(F.sum(axis=1)).max() > 0.01 and want != _brute_force_auc(y2 == 0, F[:, 0])
    Y = np.column_stack([X[:, 0] > 0, X[:, 0] <= 0, X[:, 1] > 0]).astype(int)
    labels = abcboost.train(Y, X, "mart", 3, 4, 0.1)
    F = labels.decision_function(X)
    want = np.mean([_brute_force_auc(Y[:, k] == 1, F[:, k]) for k in range(3)])
    assert abcboost.test(Y, X, labels, test_auc=1)["testlog"][-1, 3] == pytest.approx(want, abs=1e-12)


def test_abcboost_keys_and_defaults_are_translated(digits):
    X_train, _, Y_train, _ = digits
    model = abcboost.train(Y_train, X_train, "mart", 2, 8, 0.2, data_max_n_bins=300, tree_min_node_size=3,
                           tree_clip_value=7, n_threads=1)
    params = model.get_params()
    assert (params["algorithm"], params["n_estimators"], params["max_leaves"], params["learning_rate"]) == ("mart", 2, 8, 0.2)
    assert (params["max_bins"], params["min_samples_leaf"], params["leaf_clip"], params["n_jobs"]) == (300, 3, 7, 1)
    sampled = abcboost.train(Y_train, X_train, "mart", 2, 8, 0.2, model_data_sample_rate=0.5,
                             model_feature_sample_rate=0.25, n_threads=1)
    assert (sampled.subsample, sampled.colsample_bytree) == (0.5, 0.25)
    assert sampled.trees_[0].n_samples[0] == int(0.5 * len(Y_train) + 0.5)  # (rounded, halves up)
    defaults = abcboost.train(Y_train, X_train, "robustlogit", 1).get_params()
    # ABCBoost's defaults: 1000 bins, minimum node size 10, clip 50, search 2, gap 5
    assert (defaults["max_bins"], defaults["min_samples_leaf"], defaults["leaf_clip"]) == (1000, 10, 50.0)
    assert (defaults["search"], defaults["gap"]) == (2, 5)
    assert (defaults["subsample"], defaults["colsample_bytree"]) == (1.0, 1.0)
    assert defaults["tol"] == 2e-14  # ABCBoost's stop_tolerance
    assert abcboost.train(Y_train, X_train, "mart", 1, stop_tolerance=1e-3).tol == 1e-3


def test_errors_are_raised_not_printed(digits):
    X_train, X_test, Y_train, Y_test = digits
    with pytest.raises(TypeError, match="unknown parameter"):
        abcboost.train(Y_train, X_train, "mart", 2, no_such_key=1)
    with pytest.raises(ValueError, match="not known"):
        abcboost.train(Y_train, X_train, "gbdt", 2)
    model = abcboost.train(Y_train, X_train, "mart", 1)
    with pytest.raises(ValueError, match="not trained on"):
        abcboost.test(Y_test + 100, X_test, model)


@pytest.fixture
def small():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    return X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)


@pytest.mark.parametrize("Y, message", [
    (lambda y: y[:10], "Y has 10 labels but X has 60 rows"),
    (lambda y: None, "Y is None: test needs the true label"),
    (lambda y: np.where(np.arange(len(y)) == 3, None, y), r"1 missing labels \(None or NaN\), at rows \[3\]"),
    (lambda y: np.where(np.arange(len(y)) == 3, np.nan, y), r"1 missing labels \(None or NaN\), at rows \[3\]"),
    (lambda y: np.where(np.arange(len(y)) == 3, "a", y.astype(object)),
     r"not trained on: \['a'\]; its classes are \[0, 1, 2\]"),
    (lambda y: np.stack([y, y], axis=1), r"Y has shape \(60, 2\); this model is multi-class"),
], ids=["short", "None", "a None label", "a NaN label", "an unknown label", "2-D"])
def test_test_says_what_is_wrong_with_Y(small, Y, message):
    X, y = small
    model = abcboost.train(y, X, "mart", 2, 4, 0.1)
    with pytest.raises(ValueError, match=message):
        abcboost.test(Y(y), X, model)


def test_an_unfitted_or_wrong_model_is_refused(small, tmp_path):
    from sklearn.exceptions import NotFittedError

    X, y = small
    with pytest.raises(NotFittedError):
        abcboost.test(y, X, abcboost.BoostClassifier())
    with pytest.raises(NotFittedError):
        abcboost.predict(X, abcboost.BoostClassifier())
    with pytest.raises(TypeError, match=r"got str; load a model file with load\(path\) first"):
        abcboost.test(y, X, str(tmp_path / "model.json"))


@pytest.mark.parametrize("algorithm", ["mart", "adaboostmh"])
def test_multi_label_models_predict_and_test_on_indicator_matrices(small, algorithm):
    from gpuboost import metrics

    X, _ = small
    Y = np.column_stack([X[:, 0] > 0, X[:, 0] <= 0, X[:, 1] > 0]).astype(int)  # one or two labels a row
    model = abcboost.train(Y, X, algorithm, 4, 4, 0.1)
    res = abcboost.predict(X, model, save_prob=1)
    np.testing.assert_array_equal(res["prediction"], model.predict(X))
    np.testing.assert_array_equal(res["probability"], model.predict_proba(X))
    np.testing.assert_array_equal(abcboost.predict(X, model)["prediction"], model.predict(X))
    result = abcboost.test(Y, X, model, save_prob=1)
    np.testing.assert_array_equal(result["prediction"], model.predict(X))
    np.testing.assert_array_equal(result["probability"], model.predict_proba(X))
    assert result["testlog"].shape == (4, 4)  # iteration, Hamming loss, wrong entries, seconds
    assert result["testlog"][-1, 2] == np.sum(result["prediction"] != Y)
    assert result["testlog"][-1, 1] == metrics.hamming_loss(Y, model.predict(X)) == result["metrics"]["hamming_loss"]
    assert result["metrics"]["average_precision"] == metrics.average_precision(Y, model.predict_proba(X))
    assert set(result["metrics"]) == {"hamming_loss", "one_error", "coverage", "average_precision"}
    sparse = pytest.importorskip("scipy.sparse")  # a sparse Y, as train (and fit) take it
    np.testing.assert_array_equal(abcboost.test(sparse.csr_matrix(Y), X, model)["prediction"], result["prediction"])
    with pytest.raises(ValueError, match=r"Y has shape \(60,\); this model is multi-label \(3 labels\)"):
        abcboost.test(Y[:, 0], X, model)
    with pytest.raises(ValueError, match="Y has 10 labels but X has 60 rows"):
        abcboost.test(Y[:10], X, model)


@pytest.mark.parametrize("test_auc", [0, 1])
def test_a_model_of_no_trees_is_tested(small, test_auc):
    # training stopped before the first tree (its loss at or below stop_tolerance): test gives
    # the model's predictions from F = 0 and a log of no rows, as predict does
    X, y = small
    model = abcboost.train(y, X, "robustlogit", 5, 8, 0.1, stop_tolerance=1e9)
    assert model.trees_ == []
    res = abcboost.test(y, X, model, save_prob=1, test_auc=test_auc)
    assert res["testlog"].shape == (0, 5 if test_auc else 4)
    np.testing.assert_array_equal(res["prediction"], abcboost.predict(X, model)["prediction"])
    np.testing.assert_array_equal(res["probability"], model.predict_proba(X))
    with pytest.raises(ValueError, match="Y has 10 labels but X has 60 rows"):
        abcboost.test(y[:10], X, model)


def test_predict_is_the_models_predict(small):
    X, y = small
    model = abcboost.train(np.array(["a", "b", "c"])[y], X, "aoso", 3, 4, 0.1)
    res = abcboost.predict(X, model, save_prob=1)
    assert set(res) == {"prediction", "probability"}  # (ABCBoost's dict)
    np.testing.assert_array_equal(res["prediction"], model.predict(X))
    np.testing.assert_array_equal(res["probability"], model.predict_proba(X))
    assert set(abcboost.predict(X, model)) == {"prediction"}


def test_save_checks_its_arguments(small, tmp_path):
    X, y = small
    model = abcboost.train(y, X, "mart", 2, 4, 0.1)
    with pytest.raises(TypeError, match=r"save takes the model first, then the path: save\(model, path\)"):
        abcboost.save(str(tmp_path / "m.json"), model)
    with pytest.raises(TypeError, match="model must be a BoostClassifier"):
        abcboost.save(None, str(tmp_path / "m.json"))
    assert not (tmp_path / "m.json").exists()


def test_prediction_keys_are_checked_though_ignored(small):
    """test and predict take ABCBoost's n_threads and device, and check them (a typo such as
    device='gpu' was silently taken)."""
    X, y = small
    model = abcboost.train(y, X, "mart", 2, 4, 0.1)
    np.testing.assert_array_equal(abcboost.predict(X, model, n_threads=2, device="cpu")["prediction"],
                                  model.predict(X))
    with pytest.raises(ValueError, match="device must be one of"):
        abcboost.predict(X, model, device="gpu")
    with pytest.raises(ValueError, match="n_threads must be None or a non-zero integer"):
        abcboost.test(y, X, model, n_threads=0)


@pytest.mark.parametrize("key, value, message", [
    ("iter", 0, "iter must be an integer >= 1, got 0"),
    ("leaves", 1, "leaves must be an integer >= 2, got 1"),
    ("shrinkage", 0.0, "shrinkage must be a finite number > 0, got 0.0"),
    ("model_name", "gbdt", "model_name='gbdt' is not known"),
    ("data_max_n_bins", 1, "data_max_n_bins must be an integer in"),
    ("tree_min_node_size", 0, "tree_min_node_size must be an integer >= 1, got 0"),
    ("tree_clip_value", -1, "tree_clip_value must be a finite number > 0, got -1"),
    ("model_data_sample_rate", 0, r"model_data_sample_rate must be a number in \(0, 1\], got 0"),
    ("n_threads", 0, "n_threads must be None or a non-zero integer, got 0"),
])
def test_train_names_a_bad_argument_as_it_was_given(small, key, value, message):
    """train's messages named the estimator's parameters (n_estimators for iter, ...), which the
    user of ABCBoost's names never typed."""
    X, y = small
    arguments = {"model_name": "mart", "iter": 2, **{key: value}}
    with pytest.raises(ValueError, match="^" + message):
        abcboost.train(y, X, **arguments)


def test_test_loss_is_exact_where_probabilities_underflow():
    """test's loss was -log(max(p, 1e-300)): a row whose probability underflowed counted 690.8
    at most. It is the eval set's loss, computed from the scores."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    wrong = (y + 1) % 3
    model = abcboost.BoostClassifier(algorithm="adaboostmh", n_estimators=20, learning_rate=3.0, tol=0)
    model.fit(X, y, eval_set=[(X, wrong)])
    log = abcboost.test(wrong, X, model)["testlog"]
    assert model.eval_loss_[0][-1] > 300 * 700  # (past where the clipped loss could go)
    np.testing.assert_allclose(log[:, 1], model.eval_loss_[0], rtol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.DataConversionWarning")  # (eval_set: a column, as fit warns)
def test_a_sparse_column_of_labels_is_a_label_per_row(small):
    """A scipy.sparse (n, 1) column of labels, which fit takes, was one label to train (its
    0-d object array reshaped) and a shape () to test and to fit's eval_set."""
    import scipy.sparse as sp

    X, y = small
    column = sp.csr_matrix(y.reshape(-1, 1))
    model = abcboost.train(column, X, "mart", 3, 4, 0.1)
    expected = abcboost.train(y, X, "mart", 3, 4, 0.1)
    np.testing.assert_array_equal(model.predict_proba(X), expected.predict_proba(X))
    np.testing.assert_array_equal(abcboost.test(column, X, model)["testlog"][:, 1:3],
                                  abcboost.test(y, X, model)["testlog"][:, 1:3])
    fitted = abcboost.BoostClassifier(n_estimators=3, max_leaves=4).fit(X, y, eval_set=[(X, column)])
    np.testing.assert_array_equal(fitted.eval_loss_[0],
                                  abcboost.BoostClassifier(n_estimators=3, max_leaves=4).fit(
                                      X, y, eval_set=[(X, y)]).eval_loss_[0])


def test_device_errors_name_the_functional_arguments():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), np.arange(60) % 3
    with pytest.raises(ValueError, match="^model_name='robustlogit' has no CUDA implementation"):
        abcboost.train(y, X, "robustlogit", iter=2, device="cuda")
    model = abcboost.train(y, X, "aoso", iter=2)
    with pytest.raises(ValueError, match="device must be one of"):
        abcboost.test(y, X, model, device=np.array(["cuda"]))
    with pytest.raises(ValueError, match="device must be one of"):
        abcboost.predict(X, model, device=np.array(["cuda"]))
