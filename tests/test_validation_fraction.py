"""validation_fraction: training rows held out as an eval set, for early stopping without one."""

import numpy as np
import pytest

import gpuboost
from gpuboost import BoostClassifier


@pytest.fixture
def data():
    """Three overlapping classes of 200, 60 and 20 rows."""
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], [200, 60, 20])
    X = rng.normal(size=(y.size, 4)) + 0.7 * y[:, None]
    return X, y


def small(**params):
    return BoostClassifier(**({"n_estimators": 12, "max_leaves": 6} | params))


def split(model, y, weight=None):
    model._check_params()
    model.classes_ = np.unique(y)
    return model._validation_split(np.searchsorted(model.classes_, y), len(y), weight)


def test_the_split_is_per_class_random_and_reproducible(data):
    X, y = data
    train, held = split(small(validation_fraction=0.2, random_state=0), y)
    assert np.bincount(y[held]).tolist() == [40, 12, 4]
    assert np.array_equal(np.sort(np.r_[train, held]), np.arange(len(y)))
    again, _ = split(small(validation_fraction=0.2, random_state=0), y)
    other, _ = split(small(validation_fraction=0.2, random_state=1), y)
    assert np.array_equal(train, again) and not np.array_equal(train, other)
    # a class of 1 row stays in training; a class of 2 rows gives one at most
    _, held = split(small(validation_fraction=0.9, random_state=0), np.r_[y, 3, 4, 4])
    assert 3 not in y[np.r_[held[held < len(y)]]] and (np.r_[y, 3, 4, 4][held] == 4).sum() == 1


def test_the_same_model_as_training_on_the_rest_with_the_held_out_rows_as_eval_set(data):
    X, y = data
    model = small(validation_fraction=0.25, random_state=3).fit(X, y, eval_set=[(X[:50], y[:50])])
    train, held = split(small(validation_fraction=0.25, random_state=3), y)
    explicit = small().fit(X[train], y[train], eval_set=[(X[:50], y[:50]), (X[held], y[held])])
    np.testing.assert_array_equal(model.predict_proba(X), explicit.predict_proba(X))
    assert len(model.eval_loss_) == 2  # the eval_set given first, the held-out rows last
    for a, b in zip(model.eval_loss_ + model.eval_error_, explicit.eval_loss_ + explicit.eval_error_):
        np.testing.assert_array_equal(a, b)


def test_early_stopping_watches_the_held_out_rows(data):
    X, y = data
    params = {"n_estimators": 300, "learning_rate": 0.5, "early_stopping_rounds": 5, "validation_fraction": 0.3,
              "random_state": 0}
    model = small(**params).fit(X, y, eval_set=[(X, y)])
    held_loss = np.asarray(model.eval_loss_[1])
    assert model.n_estimators_ < 300 and model.best_iteration_ == int(np.argmin(held_loss))
    assert model.n_estimators_ == model.best_iteration_ + 1
    # without eval_set: the held-out rows alone
    alone = small(**params).fit(X, y)
    assert alone.best_iteration_ == model.best_iteration_
    np.testing.assert_array_equal(alone.predict_proba(X), model.predict_proba(X))


def test_multilabel_y(data):
    X, y = data
    Y = np.stack([y == 0, y >= 1, X[:, 0] > 0], axis=1).astype(int)
    model = small(algorithm="klogitboost", validation_fraction=0.2, random_state=0).fit(X, Y)
    assert len(model.eval_loss_) == 1 and 0 < model.eval_error_[0][-1] < 0.5 * 56 * 3


def test_continuations_hold_out_the_same_rows(data, tmp_path):
    X, y = data
    whole = small(validation_fraction=0.2, random_state=7, n_estimators=10).fit(X, y)
    half = small(validation_fraction=0.2, random_state=7, n_estimators=5).fit(X, y)
    half.save_model(tmp_path / "half.json")
    resumed = small(validation_fraction=0.2, random_state=7, n_estimators=10).fit(
        X, y, init_model=tmp_path / "half.json")
    np.testing.assert_array_equal(resumed.predict_proba(X), whole.predict_proba(X))
    np.testing.assert_array_equal(resumed.eval_loss_[0], whole.eval_loss_[0])
    assert gpuboost.load_model(tmp_path / "half.json").get_params()["validation_fraction"] == 0.2
    with pytest.raises(ValueError, match="random_state=7, this estimator's is 8"):
        small(validation_fraction=0.2, random_state=8, n_estimators=10).fit(X, y, init_model=tmp_path / "half.json")
    with pytest.raises(ValueError, match="its validation_fraction is 0.2, this estimator's 0.3"):
        small(validation_fraction=0.3, random_state=7, n_estimators=10).fit(X, y, init_model=tmp_path / "half.json")
    half.set_params(n_estimators=10, warm_start=True, random_state=None)
    with pytest.raises(ValueError, match="random_state=7, this estimator's is None"):
        half.fit(X, y)
    # rows drawn without an int seed cannot be drawn again, whatever the seed now
    for seed in (None, np.random.RandomState(1)):
        unseeded = small(validation_fraction=0.2, n_estimators=5, random_state=seed).fit(X, y)
        for later in (None, 0):
            with pytest.raises(ValueError, match="cannot be drawn again"):
                unseeded.set_params(n_estimators=10, warm_start=True, random_state=later).fit(X, y)
        unseeded.set_params(random_state=0).save_model(tmp_path / "unseeded.json")
        with pytest.raises(ValueError, match="cannot be drawn again"):
            small(validation_fraction=0.2, n_estimators=10, random_state=0).fit(
                X, y, init_model=tmp_path / "unseeded.json")


def test_too_few_rows_to_hold_out(data):
    X, y = data
    with pytest.raises(ValueError, match="holds out no row"):
        small(validation_fraction=0.1).fit(X[[0, 1, 200, 201]], y[[0, 1, 200, 201]])
    # one row a class: no fraction helps, and the message does not say that one would
    rows = [0, 200] if y[0] != y[200] else [0, int(np.flatnonzero(y != y[0])[0])]
    with pytest.raises(ValueError, match="holds out no row: every class has one row .* at most, .* give more rows, "
                                         "or pass eval_set.$"):
        small(validation_fraction=0.5).fit(X[rows], y[rows])


def test_the_held_out_count_is_the_fraction_of_all_rows_shared_by_largest_remainders():
    y = np.r_[np.zeros(400, int), np.repeat(np.arange(1, 21), 4)]
    _, held = split(small(validation_fraction=0.1, random_state=0), y)
    counts = np.bincount(y[held], minlength=21)
    assert held.size == 48 and counts[0] == 40  # round(0.1 x 480); class 0: 40.0 of them
    assert counts[1:9].tolist() == [1] * 8 and counts[9:].sum() == 0  # remainders 0.4: the first eight classes


def test_only_rows_of_positive_weight_are_held_out_and_weigh_the_loss(data):
    from sklearn.metrics import log_loss

    X, y = data
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=y.size)
    w[::7] = 0.0
    train, held = split(small(validation_fraction=0.3, random_state=2), y, w)
    assert np.all(w[held] > 0) and held.size == round(0.3 * np.count_nonzero(w))
    model = small(validation_fraction=0.3, random_state=2).fit(X, y, sample_weight=w)
    explicit = small().fit(X[train], y[train], sample_weight=w[train])
    np.testing.assert_array_equal(model.predict_proba(X), explicit.predict_proba(X))
    expected = log_loss(y[held], explicit.predict_proba(X[held]), sample_weight=w[held], normalize=False)
    np.testing.assert_allclose(model.eval_loss_[-1][-1], expected, rtol=1e-9)
    # class_weight weighs the held-out loss too
    balanced = small(validation_fraction=0.3, random_state=2, class_weight="balanced").fit(X, y)
    train, held = split(small(validation_fraction=0.3, random_state=2), y)
    from sklearn.utils.class_weight import compute_sample_weight

    cw = compute_sample_weight("balanced", y)
    expected = log_loss(y[held], balanced.predict_proba(X[held]), sample_weight=cw[held], normalize=False)
    np.testing.assert_allclose(balanced.eval_loss_[-1][-1], expected, rtol=1e-9)


def test_a_class_keeps_its_only_row_of_positive_weight():
    y = np.r_[np.zeros(40, int), np.ones(40, int), 2, 2]
    w = np.ones(y.size)
    w[-1] = 0.0
    for seed in range(10):
        train, held = split(small(validation_fraction=0.5, random_state=seed), y, w)
        assert 80 in train and 81 in train and 80 not in held


def test_random_state_out_of_numpys_range_is_refused(data):
    X, y = data
    with pytest.raises(ValueError, match=r"random_state must be None, an int in \[0, 2\*\*32 - 1\]"):
        small(random_state=-1, validation_fraction=0.2).fit(X, y)


@pytest.mark.parametrize("sizes, fraction", [([1] * 20 + [30], 0.3), ([1, 3], 0.5), ([1, 4, 4, 40, 10, 20, 22], 1 / 3)])
def test_rows_a_small_class_cannot_give_go_to_the_others(sizes, fraction):
    y = np.repeat(np.arange(len(sizes)), sizes)
    _, held = split(small(validation_fraction=fraction, random_state=0), y)
    counts = np.bincount(y[held], minlength=len(sizes))
    achievable = sum(max(s - 1, 0) for s in sizes)
    assert held.size == min(int(np.floor(fraction * y.size + 0.5)), achievable)
    assert np.all(counts <= np.maximum(np.array(sizes) - 1, 0))
