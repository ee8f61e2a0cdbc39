"""A functional API that mirrors ABCBoost's Python module, so that its users' scripts carry over.

ABCBoost is the CPU library of the ABC papers' authors (Ping Li's group). Its calls, with their
arguments and defaults, are kept; underneath, each is a thin layer over ``BoostClassifier``::

    import gpuboost as abcboost
    model = abcboost.train(Y_train, X_train, "abcrobustlogit", 200, 20, 0.1, search=2, gap=5)
    result = abcboost.test(Y_test, X_test, model, save_prob=1)
    result["prediction"], result["testlog"], result["probability"]
    abcboost.predict(X_test, model)
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
search                 search                 2
gap                    gap                    5
n_threads              n_jobs                 all cores
device                 device                 "auto"
save_prob              (test, predict)        0
=====================  =====================  ===========================
"""

from __future__ import annotations

import time

import numpy as np

from .io import load_model
from .losses import predicted_class, softmax
from .sklearn import BoostClassifier

__all__ = ["train", "test", "predict", "save", "load", "ABCBOOST_KEYS"]

#: ABCBoost's keys -> (BoostClassifier parameter, ABCBoost's default)
ABCBOOST_KEYS = {
    "data_max_n_bins": ("max_bins", 1000),
    "tree_min_node_size": ("min_samples_leaf", 10),
    "tree_clip_value": ("leaf_clip", 50.0),
    "search": ("search", 2),
    "gap": ("gap", 5),
    "n_threads": ("n_jobs", None),
    "device": ("device", "auto"),
}


def _check_keys(params: dict, allowed: set) -> None:
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise TypeError(f"unknown parameter(s) {unknown}; known: {sorted(allowed)}.")


def train(Y, X, model_name: str = "robustlogit", iter: int = 1000, leaves: int = 20, shrinkage: float = 0.1,
          **params) -> BoostClassifier:
    """Train a model as ABCBoost's ``train`` does; returns a fitted ``BoostClassifier``.

    ``model_name``: ABCBoost's ``"mart"``, ``"robustlogit"`` (its default), ``"abcmart"``,
    ``"abcrobustlogit"``, and gpuboost's ``"aoso"``, ``"logitboost"``, ``"klogitboost"``.
    ``params``: ABCBoost's keys (the module docstring has the table), with its defaults.
    """
    _check_keys(params, set(ABCBOOST_KEYS))
    estimator_params = {name: params.get(key, default) for key, (name, default) in ABCBOOST_KEYS.items()}
    model = BoostClassifier(algorithm=model_name, n_estimators=iter, max_leaves=leaves, learning_rate=shrinkage,
                            **estimator_params)
    return model.fit(X, np.asarray(Y).reshape(-1) if np.ndim(Y) == 2 and np.shape(Y)[1] == 1 else Y)


def test(Y, X, model: BoostClassifier, save_prob: int = 0, **params) -> dict:
    """Evaluate a model on labelled data, as ABCBoost's ``test`` does.

    Returns a dict: ``prediction`` (labels, shape (n,)), ``testlog`` (one row per iteration:
    iteration, test loss, test errors, seconds since the evaluation started) and, with
    ``save_prob=1``, ``probability`` (n, K).
    """
    _check_keys(params, {"n_threads", "device"})
    y = np.asarray(Y).reshape(-1)
    codes = np.searchsorted(model.classes_, y)
    known = (codes < len(model.classes_)) & (model.classes_[np.minimum(codes, len(model.classes_) - 1)] == y)
    if not known.all():
        raise ValueError(f"Y holds labels the model was not trained on: {np.unique(y[~known])[:5].tolist()}.")
    started = time.perf_counter()
    log = []
    F = None
    for iteration, F in enumerate(model._staged_scores(X), start=1):
        p = softmax(F)[0]
        loss = float(-np.sum(np.log(np.maximum(p[np.arange(len(y)), codes], 1e-300))))
        errors = int(np.sum(predicted_class(F) != codes))
        log.append((iteration, loss, errors, time.perf_counter() - started))
    if F is None:
        raise ValueError("the model has no trees")
    result = {"prediction": model.classes_[predicted_class(F)], "testlog": np.array(log)}
    if save_prob:
        result["probability"] = softmax(F)[0]
    return result


def predict(X, model: BoostClassifier, save_prob: int = 0, **params):
    """Predicted labels, or (labels, probabilities) with ``save_prob=1``."""
    _check_keys(params, {"n_threads", "device"})
    F = model._scores(X)
    labels = model.classes_[predicted_class(F)]
    return (labels, softmax(F)[0]) if save_prob else labels


def save(model: BoostClassifier, path) -> None:
    """Save a model (gpuboost's JSON model file)."""
    model.save_model(path)


def load(path) -> BoostClassifier:
    """Load a model saved by ``save`` (or ``BoostClassifier.save_model``)."""
    return load_model(path)
