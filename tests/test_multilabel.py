"""Multi-label learning (AdaBoost.MH, K-LogitBoost, paper 004's softmax family) and the metrics of
paper 004, against scikit-learn."""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.metrics import coverage_error, label_ranking_average_precision_score
from sklearn.metrics import hamming_loss as sk_hamming_loss

from gpuboost import BoostClassifier, load_model
from gpuboost import metrics


def _data(n=300, L=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Y = (X @ rng.normal(size=(4, L)) + 0.5 * rng.normal(size=(n, L)) > 0.3).astype(int)
    return X, Y, rng


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_agree_with_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    Y = (rng.uniform(size=(60, 6)) < 0.3).astype(int)
    Y[Y.sum(axis=1) == 0, 0] = 1
    scores = rng.normal(size=Y.shape)
    scores[::7, 2] = scores[::7, 3]  # ties, counted as scikit-learn does
    assert metrics.coverage(Y, scores) == pytest.approx(coverage_error(Y, scores) - 1)
    assert metrics.average_precision(Y, scores) == pytest.approx(label_ranking_average_precision_score(Y, scores))
    pred = (scores > 0).astype(int)
    assert metrics.hamming_loss(Y, pred) == pytest.approx(sk_hamming_loss(Y, pred))
    top = np.argmax(scores, axis=1)
    assert metrics.one_error(Y, scores) == pytest.approx(np.mean(Y[np.arange(60), top] == 0))


def test_multilabel_adaboostmh_fits_predicts_and_saves(tmp_path):
    X, Y, _ = _data()
    model = BoostClassifier(algorithm="adaboostmh", n_estimators=40, max_leaves=8, learning_rate=0.5).fit(X, Y)
    assert model.multilabel_ and list(model.classes_) == list(range(Y.shape[1]))
    proba = model.predict_proba(X)
    assert proba.shape == Y.shape and (proba >= 0).all() and (proba <= 1).all()
    pred = model.predict(X)
    F = model.decision_function(X)
    expected = (F > 0).astype(int)  # the sign rule, and each row's top label where no training row was empty
    if not model.empty_label_sets_:
        expected[np.arange(len(X)), np.argmax(F, axis=1)] = 1
    assert model.empty_label_sets_ == (Y.sum(axis=1) == 0).any()
    np.testing.assert_array_equal(pred, expected)
    assert metrics.hamming_loss(Y, pred) < 0.15
    assert metrics.average_precision(Y, model.decision_function(X)) > 0.85
    model.save_model(tmp_path / "m.json")
    again = load_model(tmp_path / "m.json")
    assert again.multilabel_ and np.array_equal(again.predict(X), pred)


def test_rows_without_labels_are_kept_by_adaboostmh():
    X, Y, _ = _data(seed=3)
    Y[:20] = 0
    model = BoostClassifier(algorithm="adaboostmh", n_estimators=5, max_leaves=4).fit(X, Y)
    assert model.predict(X).shape == Y.shape


def test_one_label_per_row_gives_the_multiclass_labels_and_uniform_weights():
    # the same labels as an indicator with one label per row: AdaBoost.MH's +-1 labels are the
    # multi-class ones; only the initial weights differ (uniform 1/(nL) instead of eq (2))
    from gpuboost.backends.numpy import NumpyBackend

    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, size=50)
    y[:3] = [0, 1, 2]
    codes = rng.integers(0, 4, size=(50, 2)).astype(np.uint8)
    multi = NumpyBackend(codes, y, None, 3, n_bins=4, missing_code=255, link="exp", labels=np.eye(3, dtype=bool)[y])
    single = NumpyBackend(codes, y, None, 3, n_bins=4, missing_code=255, link="exp")
    assert np.array_equal(multi.Y, single.Y)
    assert np.allclose(multi.W0, 1 / 150) and multi.W0.sum() == pytest.approx(1.0)
    assert single.W0.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("algorithm", ["aoso", "mart", "robustlogit"])
def test_one_label_per_row_reduces_to_the_multiclass_model(algorithm, monkeypatch):
    # paper 004: with one label per row, eta is the one-hot r, so gradient, Hessian, loss and
    # therefore every tree are the multi-class ones (both on the NumPy reference backend)
    monkeypatch.setenv("GPUBOOST_CPU_BACKEND", "numpy")
    X, _, rng = _data(seed=5)
    y = rng.integers(0, 4, size=X.shape[0])
    params = dict(algorithm=algorithm, n_estimators=6, max_leaves=6, device="cpu")
    multi = BoostClassifier(**params).fit(X, np.eye(4, dtype=int)[y])
    single = BoostClassifier(**params).fit(X, y)
    assert np.array_equal(multi.train_loss_, single.train_loss_)
    assert np.array_equal(multi.decision_function(X), single.decision_function(X))


def test_logitboost_targets_and_rows_without_labels():
    from gpuboost import losses

    eta = losses.label_targets(np.array([[1, 1, 0], [0, 0, 1]]))
    assert np.allclose(eta, [[0.5, 0.5, 0], [0, 0, 1]])
    X, Y, _ = _data(seed=6)
    Y[Y.sum(axis=1) == 0, 0] = 1
    Y[:10] = 0
    with pytest.warns(UserWarning, match="10 rows have no label; aoso leaves them out"):
        model = BoostClassifier(n_estimators=30, max_leaves=8, device="cpu").fit(X, Y)
    assert model.train_loss_[-1] < model.initial_loss_
    proba = model.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert metrics.average_precision(Y[10:], proba[10:]) > 0.85
    assert model.predict(X).shape == Y.shape and model.predict(X).sum(axis=1).min() >= 1  # (as the warning says)


# -- multi-label K-LogitBoost: a logistic model per label on shared vector trees ---------------
def _naive_logistic_loss(F, Y):
    p = 1.0 / (1.0 + np.exp(-F))
    return -(Y * np.log(p) + (1 - Y) * np.log(1 - p)).sum(axis=1)


def test_logistic_link_derivatives_by_finite_differences():
    from gpuboost import losses

    rng = np.random.default_rng(8)
    F = rng.normal(scale=2.0, size=(30, 4))
    Y = rng.random((30, 4)) < 0.4
    w = rng.uniform(0.5, 2.0, size=30)
    p, pc, g, h, total = losses.logistic_link(F, Y)
    np.testing.assert_allclose(total, _naive_logistic_loss(F, Y).sum(), rtol=1e-13)
    assert losses.logistic_link(F, Y, w)[4] == pytest.approx((w * _naive_logistic_loss(F, Y)).sum(), rel=1e-13)
    np.testing.assert_allclose(p, 1.0 / (1.0 + np.exp(-F)), rtol=1e-14)
    np.testing.assert_allclose(p + pc, 1.0, rtol=1e-15)
    eps = 1e-4
    for k in range(4):
        step = np.zeros_like(F)
        step[:, k] = eps
        up, down, mid = _naive_logistic_loss(F + step, Y), _naive_logistic_loss(F - step, Y), _naive_logistic_loss(F, Y)
        np.testing.assert_allclose(g[:, k], (up - down) / (2 * eps), atol=1e-7)
        np.testing.assert_allclose(h[:, k], (up - 2 * mid + down) / eps**2, atol=1e-5)  # the diagonal Hessian
        # the labels are independent: moving F_k changes no other label's derivative
        other = (k + 1) % 4
        np.testing.assert_allclose(losses.logistic_link(F + step, Y)[2][:, other], g[:, other], rtol=0, atol=0)


def test_logistic_link_keeps_its_digits_at_large_scores():
    from gpuboost import losses

    F = np.array([[800.0, -800.0, 40.0, -40.0, 0.0]])
    Y = np.array([[1, 0, 1, 0, 1]])
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # (exp(-800) underflows to 0: harmless)
        p, pc, g, h, total = losses.logistic_link(F, Y)
    assert np.isfinite(total) and total == pytest.approx(2 * np.log1p(np.exp(-40.0)) + np.log(2.0), rel=1e-15)
    # the gradient of a well-predicted label is its tiny complement, not a rounded 0 = 1 - 1
    assert g[0, 2] == pytest.approx(-np.exp(-40.0) / (1 + np.exp(-40.0)), rel=1e-14)
    assert g[0, 3] == pytest.approx(np.exp(-40.0) / (1 + np.exp(-40.0)), rel=1e-14)
    assert h[0, 2] > 0 and h[0, 0] == 0.0 and g[0, 4] == -0.5
    assert losses.logistic_link(-F, Y)[4] > 1000  # wrong by 800: its loss, not inf


def test_multilabel_klogitboost_tree_against_brute_force():
    # one vector tree: the split with the largest sum over labels of eq (30)'s gain under the
    # labels' own logistic derivatives, and every leaf the per-label Newton step -G_l / H_l
    from conftest import check_vector_stump
    from gpuboost.backends.numpy import NumpyBackend

    rng = np.random.default_rng(9)
    n, L = 200, 3
    codes = rng.integers(0, 10, size=(n, 2)).astype(np.uint8)
    Y = np.stack([codes[:, 0] > 4, codes[:, 1] < 3, (codes[:, 0] + codes[:, 1]) % 3 == 0], axis=1)
    F = rng.normal(scale=0.5, size=(n, L))
    backend = NumpyBackend(codes, np.argmax(Y, axis=1), None, L, n_bins=10, missing_code=255, link="logistic",
                           labels=Y)
    backend.set_scores(F)
    p = 1.0 / (1.0 + np.exp(-F))
    check_vector_stump(backend, codes, p - Y, p * (1 - p), 10)


def test_multilabel_klogitboost_fits_predicts_and_saves(tmp_path):
    X, Y, _ = _data(seed=10)
    Y[:15] = 0  # rows without labels: every label negative, kept (no warning)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = BoostClassifier(algorithm="klogitboost", n_estimators=40, max_leaves=8).fit(X, Y)
    F = model.decision_function(X)
    # its own loss: the sum of the labels' logistic losses, falling from n L log 2 at F = 0
    assert model.initial_loss_ == pytest.approx(Y.size * np.log(2.0), rel=1e-12)
    np.testing.assert_allclose(model.train_loss_[-1], _naive_logistic_loss(F, Y).sum(), rtol=1e-10)
    assert np.all(np.diff(model.train_loss_) < 0)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, 1.0 / (1.0 + np.exp(-F)), rtol=1e-12)
    pred = model.predict(X)
    expected = (proba > 0.5).astype(int)  # no top-ranked label added: training had rows without labels
    assert model.empty_label_sets_ and (pred.sum(axis=1) == 0).any()
    np.testing.assert_array_equal(pred, expected)
    assert metrics.average_precision(Y[15:], F[15:]) > 0.9 and metrics.hamming_loss(Y, pred) < 0.15
    model.save_model(tmp_path / "k.json")
    again = load_model(tmp_path / "k.json")
    np.testing.assert_array_equal(again.predict_proba(X), proba)
    np.testing.assert_array_equal(again.predict(X), pred)


def test_multilabel_y_for_another_algorithm_is_a_clear_error():
    X, Y, _ = _data()
    with pytest.raises(ValueError, match="multi-label learning is implemented for algorithm in"):
        BoostClassifier(n_estimators=2, algorithm="abcmart").fit(X, Y)
    with pytest.raises(ValueError, match="indicator matrix of 0 and 1"):
        BoostClassifier(algorithm="adaboostmh", n_estimators=2).fit(X, Y * 2)


def _labelled(n=120, L=3, seed=7):
    """_data with at least one label per row (the LogitBoost family leaves empty rows out)."""
    X, Y, rng = _data(n=n, L=L, seed=seed)
    Y[Y.sum(axis=1) == 0, 0] = 1
    return X, Y, rng


def _first_iterations(model, n_iterations):
    """A copy of ``model`` that keeps its first ``n_iterations`` iterations."""
    import copy

    kept = copy.deepcopy(model)
    kept._truncate(n_iterations)
    return kept


@pytest.mark.parametrize("algorithm", ["adaboostmh", "aoso", "mart", "klogitboost"])
@pytest.mark.parametrize("n_labels", [2, 4])
def test_each_stage_is_the_multilabel_model_of_that_many_iterations(algorithm, n_labels):
    X, Y, _ = _labelled(L=n_labels)
    model = BoostClassifier(algorithm=algorithm, n_estimators=3, max_leaves=4, device="cpu").fit(X, Y)
    stages = zip(model.staged_decision_function(X), model.staged_predict_proba(X), model.staged_predict(X),
                 strict=True)
    for k, (decision, proba, labels) in enumerate(stages, start=1):
        at_k = _first_iterations(model, k)
        np.testing.assert_array_equal(decision, at_k.decision_function(X))
        np.testing.assert_array_equal(proba, at_k.predict_proba(X))
        np.testing.assert_array_equal(labels, at_k.predict(X))
    assert k == model.n_estimators_ == 3
    np.testing.assert_array_equal(labels, model.predict(X))
    assert labels.shape == proba.shape == decision.shape == Y.shape


def test_two_labels_keep_a_score_per_label():
    # the binary F1 - F0 column is for two classes; two labels are two independent scores
    X, Y, _ = _labelled(L=2)
    model = BoostClassifier(algorithm="adaboostmh", n_estimators=2, max_leaves=4).fit(X, Y)
    assert model.decision_function(X).shape == (len(X), 2)
    assert all(F.shape == (len(X), 2) for F in model.staged_decision_function(X))


def test_continuing_across_multiclass_and_multilabel_is_refused(tmp_path):
    X, Y, _ = _labelled(L=3)
    y = np.arange(len(X)) % 3  # classes 0, 1, 2: the same as the labels' column indices
    multiclass = BoostClassifier(n_estimators=2, max_leaves=4, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="fitted on multi-class y, and this y is a multi-label indicator matrix"):
        multiclass.set_params(n_estimators=4).fit(X, Y)
    assert not multiclass.multilabel_ and multiclass.n_estimators_ == 2  # left as it was
    BoostClassifier(n_estimators=2, max_leaves=4).fit(X, Y).save_model(tmp_path / "multilabel.json")
    with pytest.raises(ValueError, match="fitted on a multi-label indicator matrix, and this y holds one class label"):
        BoostClassifier(n_estimators=4, max_leaves=4).fit(X, y, init_model=tmp_path / "multilabel.json")


def test_an_indicator_as_a_list_or_a_sparse_matrix():
    # scikit-learn accepts both; a sparse indicator is densified
    import scipy.sparse

    X, Y, _ = _data(n=100, L=3, seed=9)
    params = dict(algorithm="adaboostmh", n_estimators=3, max_leaves=4)
    dense = BoostClassifier(**params).fit(X, Y)
    for given in (Y.tolist(), scipy.sparse.csr_matrix(Y)):
        model = BoostClassifier(**params).fit(X, given)
        assert model.multilabel_ and np.array_equal(model.predict(X), dense.predict(X))
    w = np.r_[np.zeros(10), np.ones(90)]
    weighted = BoostClassifier(**params).fit(X, Y.tolist(), sample_weight=w)
    assert list(weighted.classes_) == [0, 1, 2]
    np.testing.assert_array_equal(weighted.decision_function(X), BoostClassifier(**params).fit(
        X[10:], Y[10:]).decision_function(X))  # zero-weight rows: as if they were not there


@pytest.mark.parametrize("algorithm", ["klogitboost", "adaboostmh", "aoso", "mart"])
def test_multilabel_eval_set_and_early_stopping(algorithm):
    from gpuboost import losses

    X, Y, _ = _labelled(n=300, L=3, seed=12)
    Y[-5:] = 0  # held-out rows without labels: no target for the softmax family, still scored
    train, held = slice(0, 200), slice(200, None)
    model = BoostClassifier(algorithm=algorithm, n_estimators=12, max_leaves=6, device="cpu")
    if algorithm in ("aoso", "mart"):
        model.fit(X[train], Y[train], eval_set=[(X[held], Y[held])])
    else:
        model.fit(X[train], Y[train], eval_set=[(X[held], Y[held].tolist())])
    assert len(model.eval_loss_[0]) == len(model.eval_error_[0]) == model.n_estimators_ == 12
    Yh = Y[held]
    for k, (F, labels) in enumerate(zip(model.staged_decision_function(X[held]), model.staged_predict(X[held]))):
        assert model.eval_error_[0][k] == np.sum(labels != Yh)  # wrong (row, label) entries of predict
        if algorithm == "adaboostmh":
            p = model._as_proba(F)  # the log loss of predict_proba's per-label probabilities
            want = -np.sum(Yh * np.log(p) + (1 - Yh) * np.log(1 - p))
        elif algorithm == "klogitboost":
            p = 1.0 / (1.0 + np.exp(-F))
            want = -np.sum(Yh * np.log(p) + (1 - Yh) * np.log(1 - p))
        else:  # paper 004's loss; the rows without labels add nothing
            eta = losses.label_targets(Yh[:-5])
            want = -np.sum(eta * np.log(losses.softmax(F)[0][:-5]))
        assert model.eval_loss_[0][k] == pytest.approx(want, rel=1e-9)
    stopped = BoostClassifier(algorithm=algorithm, n_estimators=400, max_leaves=6, learning_rate=0.5,
                              early_stopping_rounds=5, device="cpu").fit(X[train], Y[train], eval_set=[(X[held], Yh)])
    best = int(np.argmin(stopped.eval_loss_[0]))
    assert stopped.n_estimators_ == best + 1 < 400 and stopped.best_iteration_ == best


def test_multilabel_eval_set_must_be_an_indicator_of_the_same_labels():
    X, Y, _ = _labelled(n=100, L=3, seed=13)
    model = BoostClassifier(algorithm="klogitboost", n_estimators=2, max_leaves=4)
    for bad, message in ((Y[:, 0], r"indicator matrix of 0 and 1, got shape \(100,\)"),
                         (Y[:, :2], r"\(n_samples, 3\) indicator matrix of 0 and 1, got shape \(100, 2\)"),
                         (Y[:50], "X has 100 rows but y has 50")):
        with pytest.raises(ValueError, match=message):
            model.fit(X, Y, eval_set=[(X, bad)])
    with pytest.raises(ValueError, match="indicator matrix of 0 and 1"):
        model.fit(X, Y, eval_set=[(X, 2 * Y)])


def test_metrics_refuse_what_they_cannot_rank_and_take_sparse_labels():
    """NaN scores, labels of -1 and 1, and probabilities as predictions were taken silently
    (inf, or every label true); a sparse Y, which fit takes, was refused. The ranks are made
    in blocks of rows (bounded memory), with the same results."""
    import scipy.sparse

    from gpuboost import metrics

    rng = np.random.default_rng(0)
    Y = (rng.random((300, 12)) < 0.3).astype(int)
    S = rng.integers(0, 4, size=(300, 12)).astype(float)  # ties everywhere
    with pytest.raises(ValueError, match="scores hold NaN"):
        metrics.average_precision([[1, 0]], [[np.nan, 0.0]])
    with pytest.raises(ValueError, match=r"labels of -1 and 1: pass Y > 0"):
        metrics.average_precision([[1, -1, -1]], [[0.9, 0.5, 0.1]])
    with pytest.raises(ValueError, match="predict's output, not predict_proba's scores"):
        metrics.hamming_loss([[1, 0, 0]], [[0.9, 0.1, 0.2]])
    assert metrics.average_precision(scipy.sparse.csr_matrix(Y), S) == metrics.average_precision(Y, S)
    for metric in (metrics.one_error, metrics.coverage, metrics.average_precision, metrics.hamming_loss):
        for empty in (np.zeros((0, 3), int), np.zeros((2, 0), int)):  # no row, no label: no mean to take
            with pytest.raises(ValueError, match=r"a metric needs at least one row and one label"):
                metric(empty, empty)
    with pytest.raises(ValueError, match=r"it holds \[1, None, 0\]"):  # (values that do not sort)
        metrics.one_error(np.array([[1, None, 0]], dtype=object), np.zeros((1, 3)))
    assert metrics.hamming_loss(scipy.sparse.csr_matrix(Y), Y) == 0.0
    with pytest.raises(ValueError, match=r"must be indicator matrices, shape \(n_samples, n_labels\); got shape "
                                         r"\(2, 2, 2\)"):  # (was a mean over a 3-D array)
        metrics.hamming_loss(np.ones((2, 2, 2), int), np.ones((2, 2, 2), int))
    assert metrics.hamming_loss([1, 0, 1], [1, 1, 1]) == pytest.approx(sk_hamming_loss([1, 0, 1], [1, 1, 1]))
    whole = (metrics.coverage(Y, S), metrics.average_precision(Y, S))
    saved = metrics.RANK_CELLS
    metrics.RANK_CELLS = 1000  # blocks of 6 rows
    try:
        assert (metrics.coverage(Y, S), metrics.average_precision(Y, S)) == whole
    finally:
        metrics.RANK_CELLS = saved


def test_a_nullable_pandas_indicator_is_multi_label_and_ragged_rows_are_refused():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    Y = (X[:, :3] > 0).astype(int)
    expected = BoostClassifier(algorithm="klogitboost", n_estimators=3).fit(X, Y).predict_proba(X)
    for frame in (pd.DataFrame(Y).astype("Int64"), pd.DataFrame(Y.astype(bool)).astype("boolean")):
        got = BoostClassifier(algorithm="klogitboost", n_estimators=3).fit(X, frame).predict_proba(X)
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="rows of different lengths"):
        BoostClassifier(algorithm="klogitboost", n_estimators=3).fit(X, [[0, 2], [1]] + [[1]] * 38)


@pytest.mark.parametrize("algorithm", ["adaboostmh", "klogitboost"])
def test_a_row_gets_no_label_only_where_training_had_such_rows(algorithm, tmp_path):
    """Four rare labels, half of the rows without any: the model may predict the empty set
    (forcing each row's top-ranked label gave a Hamming loss of 0.126 where the sign rule's is
    0.003); trained on rows that all have a label, every row gets at least its top one. Saved
    and loaded, the model keeps the rule."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 6))
    Y = (X[:, :4] > 1).astype(int)
    model = BoostClassifier(algorithm=algorithm, n_estimators=30, max_leaves=8).fit(X[:600], Y[:600])
    assert model.empty_label_sets_
    predicted = model.predict(X[600:])
    empty = Y[600:].sum(axis=1) == 0
    assert (predicted[empty].sum(axis=1) == 0).mean() > 0.9
    from gpuboost.metrics import hamming_loss

    assert hamming_loss(Y[600:], predicted) < 0.02
    model.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(load_model(tmp_path / "m.json").predict(X), model.predict(X))
    labelled = ~empty
    full = BoostClassifier(algorithm=algorithm, n_estimators=30, max_leaves=8).fit(X[600:][labelled], Y[600:][labelled])
    assert not full.empty_label_sets_ and (full.predict(X[:600]).sum(axis=1) >= 1).all()


@pytest.mark.parametrize("bad, where", [(2, "y[1, 0] is 2.0"), (0.5, "y[1, 0] is 0.5"), (np.nan, "y[1, 0] is missing"),
                                        (-1, "y[1, 0] is -1.0"), ("a", "y[1, 0] is 'a'"), (None, "y[1, 0] is missing")])
def test_a_value_other_than_0_and_1_is_named_where_it_is(bad, where):
    """A 2-D y with a 2, a 0.5 or a missing entry was refused without saying which or where."""
    import gpuboost as abcboost

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    Y = (rng.random((30, 3)) < 0.5).astype(object if isinstance(bad, str) or bad is None else float)
    Y[1, 0] = bad
    with pytest.raises(ValueError, match=re.escape(f"y has shape (30, 3), and {where}: a 2-D y must be")):
        BoostClassifier(n_estimators=2).fit(X, Y)
    good = (rng.random((30, 3)) < 0.5).astype(int)
    good[:, 0] |= ~good.any(axis=1)  # (every row a label: no warning of the others)
    model = abcboost.train(good, X, "aoso", 2, 4, 0.1)
    with pytest.raises(ValueError, match=re.escape(f"Y holds values other than 0 and 1 (Y{where[1:]});")):
        abcboost.test(Y, X, model)


@pytest.mark.parametrize("algorithm, scale", [("klogitboost", 1.0), ("adaboostmh", 2.0)])
def test_label_probabilities_keep_their_digits_far_from_one_half(algorithm, scale):
    """predict_proba of the per-label models is 1 / (1 + exp(-scale F)) to rounding, also where
    it is tiny (0.5 (1 + tanh) gave exactly 0 from scale F <= -38, and 1.7e-4 relative error at
    -30)."""
    X, Y, _ = _data()
    model = BoostClassifier(algorithm=algorithm, n_estimators=3, max_leaves=4).fit(X, Y)
    F = np.array([[-700.0, -40.0, -30.0, -1e-3, 0.0], [3.0, 20.0, 40.0, 800.0, -1e-300]])
    with np.errstate(over="ignore"):  # (exp(1400): inf, and 1 / inf the 0 that e^-1400 rounds to)
        expected = 1.0 / (1.0 + np.exp(-scale * F))  # (accurate here: 1 + a large number, or 1 + a small one)
    np.testing.assert_allclose(model._as_proba(F), expected, rtol=1e-15, atol=0)
    assert (model._as_proba(F[0, 1:3]) > 0).all()  # (-40 and -30: 4e-18 and 9e-14 at scale 1)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, 1.0 / (1.0 + np.exp(-scale * model.decision_function(X))), rtol=1e-15)


def test_functional_test_ranks_by_the_scores_not_rounded_probabilities():
    """gpuboost.test's ranking metrics come from F: probabilities of labels the model is sure
    of round to 1 and tie (a wrong label at F = 38 beside a right one at 40: both 1.0), and the
    pessimistic ranks of tied labels lower the measures. Probabilities that all tie (a stand-in
    for rounding) must not change what test reports."""
    import gpuboost

    assert metrics.average_precision([[1, 0]], 1.0 / (1.0 + np.exp(-np.array([[40.0, 38.0]])))) == 0.5
    assert metrics.average_precision([[1, 0]], np.array([[40.0, 38.0]])) == 1.0
    X, Y, _ = _data()
    model = gpuboost.train(Y, X, "klogitboost", iter=20, leaves=4)
    model._as_proba = lambda F: np.full(F.shape, 0.5)
    result = gpuboost.test(Y, X, model)["metrics"]
    F = model.decision_function(X)
    assert result["average_precision"] == metrics.average_precision(Y, F)
    assert result["average_precision"] != metrics.average_precision(Y, np.full(F.shape, 0.5))
    assert result["coverage"] == metrics.coverage(Y, F) and result["one_error"] == metrics.one_error(Y, F)


def test_the_scikit_learn_tags_say_multi_label_where_the_algorithm_has_it():
    # (scikit-learn's multi-label checks run where the tag is set: tests/test_sklearn_checks.py)
    from gpuboost.algorithms import ALGORITHMS
    from gpuboost._validation import MULTILABEL_ALGORITHMS

    for algorithm in ALGORITHMS:
        tags = BoostClassifier(algorithm=algorithm).__sklearn_tags__()
        assert tags.classifier_tags.multi_label == (algorithm in MULTILABEL_ALGORITHMS), algorithm
    assert set(MULTILABEL_ALGORITHMS) < set(ALGORITHMS)


def test_pandas_indicator_frames_in_fit_and_the_metrics():
    # a DataFrame's values are F-ordered (the kernels compiled again for them), and its nullable
    # columns object arrays, which fit took and the metrics refused ("it holds [0, 1]")
    pd = pytest.importorskip("pandas")
    X, Y, _ = _data(seed=3)
    frame = pd.DataFrame(Y).astype("Int64")
    from gpuboost import _validation

    made = _validation.label_indicator(frame, "aoso")
    assert made.flags.c_contiguous and made.dtype == bool
    np.testing.assert_array_equal(made, Y.astype(bool))
    scores = np.random.default_rng(0).normal(size=Y.shape)
    for metric in (metrics.one_error, metrics.coverage, metrics.average_precision):
        assert metric(frame, scores) == metric(Y, scores)
    assert metrics.hamming_loss(frame, pd.DataFrame(Y).astype("boolean")) == 0.0
    with pytest.raises(ValueError, match="X has 10 rows but the multi-label y has"):
        BoostClassifier(n_estimators=2).fit(X[:10], Y)
