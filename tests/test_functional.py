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
    prediction = abcboost.predict(X_test, model)
    abcboost.save(model, str(tmp_path / "model.json"))
    again = abcboost.load(str(tmp_path / "model.json"))

    assert result["testlog"].shape == (30, 4)  # iteration, loss, errors, time
    np.testing.assert_array_equal(result["testlog"][:, 0], np.arange(1, 31))
    assert result["testlog"][-1, 2] == np.sum(result["prediction"] != Y_test)
    assert result["probability"].shape == (len(Y_test), 10)
    np.testing.assert_array_equal(prediction, result["prediction"])
    np.testing.assert_array_equal(abcboost.predict(X_test, again), prediction)
    assert np.mean(prediction == Y_test) > 0.9


def test_abcboost_keys_and_defaults_are_translated(digits):
    X_train, _, Y_train, _ = digits
    model = abcboost.train(Y_train, X_train, "mart", 2, 8, 0.2, data_max_n_bins=300, tree_min_node_size=3,
                           tree_clip_value=7, n_threads=1)
    params = model.get_params()
    assert (params["algorithm"], params["n_estimators"], params["max_leaves"], params["learning_rate"]) == ("mart", 2, 8, 0.2)
    assert (params["max_bins"], params["min_samples_leaf"], params["leaf_clip"], params["n_jobs"]) == (300, 3, 7, 1)
    defaults = abcboost.train(Y_train, X_train, "robustlogit", 1).get_params()
    # ABCBoost's defaults: 1000 bins, minimum node size 10, clip 50, search 2, gap 5
    assert (defaults["max_bins"], defaults["min_samples_leaf"], defaults["leaf_clip"]) == (1000, 10, 50.0)
    assert (defaults["search"], defaults["gap"]) == (2, 5)


def test_errors_are_raised_not_printed(digits):
    X_train, X_test, Y_train, Y_test = digits
    with pytest.raises(TypeError, match="unknown parameter"):
        abcboost.train(Y_train, X_train, "mart", 2, no_such_key=1)
    with pytest.raises(ValueError, match="not known"):
        abcboost.train(Y_train, X_train, "gbdt", 2)
    model = abcboost.train(Y_train, X_train, "mart", 1)
    with pytest.raises(ValueError, match="not trained on"):
        abcboost.test(Y_test + 100, X_test, model)
