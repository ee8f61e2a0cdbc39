"""Plots of fitted models (matplotlib, imported only when a function here is called).

- ``plot_training_curves``: training loss and test errors against trees for one or several
  models (the papers' figures: trees on the x axis, so that algorithms that grow K or K-1 trees
  per iteration are compared at equal numbers of trees).
- ``plot_importance``: feature importance by total gain or by number of splits.
"""

from __future__ import annotations

import numpy as np

from .algorithms import trees_per_iteration

__all__ = ["plot_training_curves", "plot_importance"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install matplotlib") from None
    return plt


def _check_model(model) -> None:
    """A fitted gpuboost model, else an error that says what was given."""
    from sklearn.utils.validation import check_is_fitted

    from .sklearn import BoostClassifier

    if not isinstance(model, BoostClassifier):
        raise TypeError(f"plots take fitted gpuboost models (BoostClassifier), got {type(model).__name__}.")
    check_is_fitted(model, "trees_")


def plot_training_curves(models, labels=None, ax=None):
    """Training loss (log scale) and, where an ``eval_set`` was given, test errors, against trees.

    Parameters
    ----------
    models : BoostClassifier or list of them (fitted)
    labels : list of str, one per model, default: each model's algorithm
    ax : one or two matplotlib Axes (loss, errors), default: a new figure, with a second panel
        when a model has eval-set errors

    Returns
    -------
    axes : ndarray of the Axes
    """
    models = models if isinstance(models, (list, tuple)) else [models]
    if labels is not None and len(labels) != len(models):
        raise ValueError(f"labels has {len(labels)} entries for {len(models)} models: give one label per model.")
    for model in models:
        _check_model(model)
    plt = _pyplot()
    with_eval = any(len(m.eval_error_) for m in models)
    if ax is None:  # model files keep the training loss, not eval errors: one panel then
        _, ax = plt.subplots(1, 2, figsize=(11, 4)) if with_eval else plt.subplots(1, 1, figsize=(6, 4))
    ax = np.atleast_1d(ax)
    for k, model in enumerate(models):
        algorithm = model._fitted("algorithm")  # (set_params after fit changes the parameter, not the trees)
        label = labels[k] if labels is not None else algorithm
        per = trees_per_iteration(algorithm, len(model.classes_))
        trees = np.arange(1, len(model.train_loss_) + 1) * per
        ax[0].semilogy(trees, np.maximum(np.asarray(model.train_loss_, dtype=float), 1e-300), label=label)
        if len(model.eval_error_) and len(ax) > 1:
            ax[1].plot(trees, model.eval_error_[0], label=label)
    ax[0].set(xlabel="trees", ylabel="training loss", title="training loss")
    if len(ax) > 1:
        ax[1].set(xlabel="trees", ylabel="errors", title="test errors (first eval_set)")
    for a in ax:
        if a.lines:
            a.legend()
    return ax


def plot_importance(model, importance_type: str = "gain", max_features: int = 20, ax=None):
    """Horizontal bars of the ``max_features`` most important features of a fitted model, by
    ``model.feature_importance(importance_type)``, on ``ax`` (a new figure's when None); returns
    the axes."""
    _check_model(model)
    if not isinstance(max_features, (int, np.integer)) or isinstance(max_features, bool) or max_features < 1:
        raise ValueError(f"max_features must be an integer >= 1, got {max_features!r}.")
    plt = _pyplot()
    importance = model.feature_importance(importance_type)
    names = (list(model.feature_names_in_) if hasattr(model, "feature_names_in_")
             else [f"feature {j}" for j in range(len(importance))])
    order = np.argsort(-importance, kind="stable")[:max_features][::-1]
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.3 * len(order) + 1.2))
    ax.barh([names[j] for j in order], importance[order])
    ax.set(xlabel=f"importance ({importance_type})", title="feature importance")
    return ax
