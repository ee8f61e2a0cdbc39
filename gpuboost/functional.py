"""A functional API that mirrors ABCBoost's Python module, so that its users' scripts carry over.

ABCBoost is the CPU library of the ABC papers' authors (Ping Li's group). Its calls, with their
arguments and defaults, are kept; underneath, each is a thin layer over ``BoostClassifier``::

    import gpuboost as abcboost
    model = abcboost.train(Y_train, X_train, "abcrobustlogit", 200, 20, 0.1, search=2, gap=5)
    result = abcboost.test(Y_test, X_test, model, save_prob=1, test_auc=1)
    result["prediction"], result["testlog"], result["probability"]
    abcboost.predict(X_test, model)["prediction"]
    abcboost.save(model, "model.json"); model = abcboost.load("model.json")

Unlike ABCBoost it raises exceptions (it never prints and returns None), accepts what the
estimator accepts, and keeps no global state. ABCBoost's parameter keys are translated to the
estimator's one name per parameter:

=====================  =====================  ===========================
ABCBoost key           BoostClassifier        ABCBoost's default (kept)
=====================  =====================  ===========================
model_name             algorithm              "robustlogit"
iter                   n_estimators           1000
leaves                 max_leaves             (positional; 20)
shrinkage              learning_rate          (positional; 0.1)
data_max_n_bins        max_bins               1000
tree_min_node_size     min_samples_leaf       10
tree_clip_value        leaf_clip              50
model_data_sample_rate subsample              1.0
model_feature_sample_  colsample_bytree       1.0
rate
stop_tolerance         tol                    2e-14
search                 search                 2
gap                    gap                    5
n_threads              n_jobs                 the CPUs the process may use
device                 device                 "auto"
save_prob              (test, predict)        0
test_auc               (test)                 0
=====================  =====================  ===========================

``test`` and ``predict`` take ``n_threads`` and ``device`` as ABCBoost's do, check them, and
otherwise ignore them: the model predicts where and with the threads it was trained for. The
sample rates draw rows per iteration and features per tree as ``BoostClassifier`` does, from
NumPy's global generator (ABCBoost has no seed key; ``np.random.seed`` makes them repeatable):
the same fractions as ABCBoost's, not its draws.
"""

from __future__ import annotations

import numbers
import os
import time
from collections.abc import Hashable

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _validation, metrics
from ._device import resolve_device
from .io import load_model
from .losses import multiclass_loss, predicted_class
from .sklearn import BoostClassifier

__all__ = ["train", "test", "predict", "save", "load", "ABCBOOST_KEYS"]

#: ABCBoost's keys -> (BoostClassifier parameter, ABCBoost's default)
ABCBOOST_KEYS = {
    "data_max_n_bins": ("max_bins", 1000),
    "tree_min_node_size": ("min_samples_leaf", 10),
    "tree_clip_value": ("leaf_clip", 50.0),
    "model_data_sample_rate": ("subsample", 1.0),
    "model_feature_sample_rate": ("colsample_bytree", 1.0),
    "stop_tolerance": ("tol", 2e-14),
    "search": ("search", 2),
    "gap": ("gap", 5),
    "n_threads": ("n_jobs", None),
    "device": ("device", "auto"),
}


#: BoostClassifier's parameter -> train's name for it (in train's error messages)
TRAIN_NAMES = {"algorithm": "model_name", "n_estimators": "iter", "max_leaves": "leaves", "learning_rate": "shrinkage",
               **{name: key for key, (name, _) in ABCBOOST_KEYS.items()}}


def _check_keys(params: dict, allowed: set) -> None:
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise TypeError(f"unknown parameter(s) {unknown}; known: {sorted(allowed)}.")


def _check_prediction_keys(params: dict) -> None:
    """test's and predict's ABCBoost keys: n_threads and device are accepted for its signature
    and otherwise ignored (the model predicts where it does, with its own threads), but checked
    as train checks them, so that a typo is not silently taken; test_auc is 0 or 1 (test adds
    an AUC column to its log; predict, without labels, ignores it, as ABCBoost's does)."""
    from ._device import DEVICES

    _check_keys(params, {"n_threads", "device", "test_auc"})
    n_threads = params.get("n_threads")
    if n_threads is not None and (not isinstance(n_threads, numbers.Integral) or isinstance(n_threads, bool)
                                  or n_threads == 0):
        raise ValueError(f"n_threads must be None or a non-zero integer, got {n_threads!r}.")
    if "device" in params and not (isinstance(params["device"], str) and params["device"] in DEVICES):
        raise ValueError(f"device must be one of {DEVICES}, got {params['device']!r}.")
    if "test_auc" in params:
        _check_flag("test_auc", params["test_auc"])


def _check_flag(name: str, value) -> None:
    """An ABCBoost flag (test_auc, save_prob): 0 or 1 (or a bool), so that "0" or 2 is not
    silently taken as on."""
    if not (isinstance(value, (numbers.Integral, np.bool_)) and value in (0, 1)):
        raise ValueError(f"{name} must be 0 or 1, got {value!r}.")


def train(Y, X, model_name: str = "robustlogit", iter: int = 1000, leaves: int = 20, shrinkage: float = 0.1,
          search: int | None = None, gap: int | None = None, **params) -> BoostClassifier:
    """Train a model as ABCBoost's ``train`` does; returns a fitted ``BoostClassifier``.

    ``model_name``: ABCBoost's ``"mart"``, ``"robustlogit"`` (its default), ``"abcmart"``,
    ``"abcrobustlogit"``, and gpuboost's ``"aoso"``, ``"logitboost"``, ``"klogitboost"``,
    ``"adaboostmh"``.
    ``search`` and ``gap``: keys, as in ABCBoost's module, or the seventh and eighth positional
    arguments, as its earlier module took them (``train(Y, X, "abcrobustlogit", 100, 20, 0.1, 3,
    0)``); left out, ABCBoost's current defaults, 2 and 5 (its earlier module's were 1 and 0).
    ``params``: ABCBoost's other keys (the module docstring has the table), with its defaults.
    ``Y``: one label per row, or an (n, L) indicator matrix of 0 and 1 for a multi-label model
    (``"aoso"``, ``"mart"``, ``"robustlogit"``, ``"klogitboost"``, ``"adaboostmh"``; ``test`` and
    ``predict`` then work on such matrices).
    """
    _check_keys(params, set(ABCBOOST_KEYS))
    params.update({key: value for key, value in (("search", search), ("gap", gap)) if value is not None})
    estimator_params = {name: params.get(key, default) for key, (name, default) in ABCBOOST_KEYS.items()}
    model = BoostClassifier(algorithm=model_name, n_estimators=iter, max_leaves=leaves, learning_rate=shrinkage,
                            **estimator_params)
    try:
        model._check_params()
        resolve_device(model.device, model.algorithm)  # (an algorithm the GPU does not train: named as model_name)
    except ValueError as error:  # told in the names this call takes
        message = str(error)
        for name, key in TRAIN_NAMES.items():
            if message.startswith((name + " ", name + "=")):
                message = key + message[len(name):]
                break
        raise ValueError(message) from None
    Y = _validation.host_labels(Y, "Y")  # (a scipy.sparse Y densified, as fit does)
    return model.fit(X, np.asarray(Y).reshape(-1) if np.ndim(Y) == 2 and np.shape(Y)[1] == 1 else Y)


def test(Y, X, model: BoostClassifier, save_prob: int = 0, **params) -> dict:
    """Evaluate a model on labelled data, as ABCBoost's ``test`` does.

    Returns a dict: ``prediction`` (labels, shape (n,)), ``testlog`` (one row per iteration:
    iteration, test loss, test errors, seconds since the evaluation started; with
    ``test_auc=1`` the AUC before the seconds, in the order of ABCBoost's log line) and, with
    ``save_prob=1``, ``probability`` (n, K). ``prediction`` and ``probability`` are what the
    model's ``predict`` and ``predict_proba`` give. The AUC is ABCBoost's: for two classes the
    first class's against the other, ranked by its score minus the other's (ABCBoost's scores
    of two classes are each other's negatives); for more, the mean over classes of
    each one's against the rest (ties of scores count a half; a class with no row in Y, or
    with every row, has none, and the mean is then NaN).

    A multi-label model (``train`` on an (n, L) indicator matrix; ABCBoost has none) takes its
    indicator matrix as ``Y`` and is evaluated in the same shape: ``prediction`` is the (n, L)
    indicator matrix, the loss in ``testlog`` is the Hamming loss (the fraction of (row, label)
    entries predicted wrongly) and the errors are the wrong entries, so that the last row's
    errors are ``(prediction != Y).sum()`` as for a multi-class model. ``metrics`` adds the
    final model's ``hamming_loss``, ``one_error``, ``coverage`` and ``average_precision``
    (``gpuboost.metrics``, on the model's scores F: ``decision_function``, which ranks the
    labels as ``predict_proba`` does without the ties of probabilities that round to 1).
    """
    _check_prediction_keys(params)
    _check_flag("save_prob", save_prob)
    _check_model(model)
    with_auc = bool(params.get("test_auc", 0))
    multilabel = getattr(model, "multilabel_", False)
    y = _indicator(Y, model) if multilabel else _codes(Y, model)
    started = time.perf_counter()
    log = []
    F = None
    for iteration, F in enumerate(model._staged_scores(X), start=1):
        if iteration == 1 and F.shape[0] != y.shape[0]:
            raise ValueError(f"Y has {y.shape[0]} labels but X has {F.shape[0]} rows; give one label per row of X.")
        if multilabel:
            errors = int(np.sum(_outputs(model, F)[0] != y))
            loss = errors / y.size
        else:
            loss = float(multiclass_loss(F, y))  # (from F itself: exact where a probability underflows)
            errors = int(np.sum(predicted_class(F) != y))
        auc = (_mean_auc(y.astype(bool) if multilabel else y, F, multilabel),) if with_auc else ()
        log.append((iteration, loss, errors, *auc, time.perf_counter() - started))
    if F is None:  # a model of no trees (its training stopped before the first: tol): F = 0
        F = model._scores(X)
        if F.shape[0] != y.shape[0]:
            raise ValueError(f"Y has {y.shape[0]} labels but X has {F.shape[0]} rows; give one label per row of X.")
    labels, probability = _outputs(model, F)
    result = {"prediction": labels, "testlog": np.array(log).reshape(len(log), 5 if with_auc else 4)}
    if save_prob:
        result["probability"] = probability
    if multilabel:
        # the rankings from the scores F, which order the labels as the probabilities do, without
        # the ties of probabilities rounded to 1 (or to 0)
        result["metrics"] = {"hamming_loss": metrics.hamming_loss(y, labels),
                             "one_error": metrics.one_error(y, F),
                             "coverage": metrics.coverage(y, F),
                             "average_precision": metrics.average_precision(y, F)}
    return result


def predict(X, model: BoostClassifier, save_prob: int = 0, **params) -> dict:
    """Predictions without labels, as ABCBoost's ``predict`` gives them: a dict of
    ``prediction`` (the labels) and, with ``save_prob=1``, ``probability``: what the model's
    ``predict`` and ``predict_proba`` give (for a multi-label model, its indicator matrix and
    per-label scores)."""
    _check_prediction_keys(params)
    _check_flag("save_prob", save_prob)
    _check_model(model)
    labels, probability = _outputs(model, model._scores(X))
    return {"prediction": labels, "probability": probability} if save_prob else {"prediction": labels}


def _auc(positive: np.ndarray, score: np.ndarray) -> float:
    """The area under the ROC curve of score for the rows where positive is True
    (scikit-learn's roc_auc_score: ties count a half, as the trapezoids of ABCBoost's curve over
    runs of equal scores); NaN without positive or negative rows, where scikit-learn raises."""
    from sklearn.metrics import roc_auc_score

    if positive.all() or not positive.any():
        return float("nan")
    return float(roc_auc_score(positive, score))


def _mean_auc(y: np.ndarray, F: np.ndarray, multilabel: bool) -> float:
    """test's AUC column: y class indices (n,) or a multi-label model's (n, L) bool matrix,
    F the scores (n, K) (see test)."""
    if multilabel:
        return float(np.mean([_auc(y[:, label], F[:, label]) for label in range(F.shape[1])]))
    if F.shape[1] == 2:  # (ABCBoost's second score is minus its first; K-LogitBoost's is not)
        return _auc(y == 0, F[:, 0] - F[:, 1])
    return float(np.mean([_auc(y == k, F[:, k]) for k in range(F.shape[1])]))


def _check_model(model) -> None:
    if not isinstance(model, BoostClassifier):
        hint = "; load a model file with load(path) first" if isinstance(model, (str, os.PathLike)) else ""
        raise TypeError(f"model must be a BoostClassifier (from train or load), got {type(model).__name__}{hint}.")
    check_is_fitted(model, "trees_")


def _outputs(model: BoostClassifier, F: np.ndarray):
    """(labels, probabilities) from the scores F by the model's own ``predict`` and
    ``predict_proba`` rules (F from one pass over the trees, or each iteration's in ``test``)."""
    return model._as_prediction(F), model._as_proba(F)


def _codes(Y, model: BoostClassifier, name: str = "Y") -> np.ndarray:
    """Each row's index into ``model.classes_``; Y checked: one known label per row. ``name``
    names Y in the messages (the command line's evaluate gives the data file's)."""
    if Y is None:
        raise ValueError("Y is None: test needs the true label of each row of X (for predictions alone, use "
                         "predict(X, model)).")
    Y = _validation.host_labels(Y, "Y")  # (a scipy.sparse column densified)
    try:
        y = np.asarray(Y)
    except (TypeError, ValueError):
        y = np.asarray(Y, dtype=object)  # ragged: refused below by its shape
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.reshape(-1)  # a column of labels, as train takes it
    if y.ndim != 1:
        raise ValueError(
            f"{name} has shape {y.shape}; this model is multi-class (one label per row): give Y of shape (n_samples,)."
        )
    if y.dtype.kind == "f":
        missing = np.isnan(y)
    elif y.dtype.kind == "O":
        missing = np.array([v is None or type(v).__name__ == "NAType"
                            or (isinstance(v, (float, np.floating)) and np.isnan(v)) for v in y], dtype=bool)
    else:
        missing = np.zeros(y.shape, dtype=bool)
    if missing.any():
        rows = np.flatnonzero(missing)
        raise ValueError(
            f"{name} has {rows.size} missing labels (None or NaN), at rows {rows[:5].tolist()}"
            f"{' ...' if rows.size > 5 else ''}; a model is evaluated on the true label of every row: drop those rows."
        )
    classes = model.classes_
    try:
        codes = np.minimum(np.searchsorted(classes, y), len(classes) - 1)
        known = np.asarray(classes[codes] == y, dtype=bool)
    except TypeError:  # labels that do not sort with the classes (mixed types)
        index = {c: i for i, c in enumerate(classes.tolist())}
        codes = np.array([index.get(v, -1) if isinstance(v, Hashable) else -1 for v in y.tolist()], dtype=np.intp)
        known = codes >= 0
    if not known.all():
        unknown = []
        for v in y[~known].tolist():
            if len(unknown) < 5 and v not in unknown:
                unknown.append(v)
        raise ValueError(
            f"{name} holds labels the model was not trained on: {unknown}; its classes are "
            f"{classes[:10].tolist()}{' ...' if len(classes) > 10 else ''}."
        )
    return codes


def _indicator(Y, model: BoostClassifier) -> np.ndarray:
    """Y as the (n, L) 0/1 matrix of a multi-label model's labels."""
    n_labels = len(model.classes_)
    expected = (f"this model is multi-label ({n_labels} labels): Y must be its (n_samples, {n_labels}) "
                "indicator matrix of 0 and 1")
    if Y is None:
        raise ValueError(f"Y is None; {expected}.")
    Y = _validation.host_labels(Y, "Y")  # (a scipy.sparse Y densified, as train takes it; masked entries told)
    try:
        y = np.asarray(Y)
    except (TypeError, ValueError):
        raise ValueError(f"{expected}.") from None
    if y.ndim != 2 or y.shape[1] != n_labels:
        raise ValueError(f"Y has shape {y.shape}; {expected}.")
    if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
        where = _validation._first_other_value(y, "Y")
        raise ValueError(f"Y holds values other than 0 and 1{f' ({where})' if where else ''}; {expected}.")
    return y.astype(np.int64)


def save(model: BoostClassifier, path) -> None:
    """Save a model (gpuboost's JSON model file)."""
    if isinstance(path, BoostClassifier):
        raise TypeError("save takes the model first, then the path: save(model, path).")
    _check_model(model)
    model.save_model(path)


def load(path) -> BoostClassifier:
    """Load a model saved by ``save`` (or ``BoostClassifier.save_model``)."""
    return load_model(path)
