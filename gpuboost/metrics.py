"""Multi-label metrics: paper 004's one-error, coverage and average precision, and the
Hamming loss.

``Y`` is an (n_samples, n_labels) indicator matrix of the true label sets; ``scores`` the
model's per-label scores (any monotone scores: ``decision_function`` or ``predict_proba``),
higher meaning more likely. Ranks count ties pessimistically, as scikit-learn does: a label's
rank is the number of labels scored at least as high.
"""

from __future__ import annotations

import numpy as np

__all__ = ["one_error", "coverage", "average_precision", "hamming_loss"]


def _check(Y, scores):
    Y = np.asarray(Y).astype(bool)
    scores = np.asarray(scores, dtype=np.float64)
    if Y.ndim != 2 or Y.shape != scores.shape:
        raise ValueError(f"Y and scores must both have shape (n_samples, n_labels); got {Y.shape} and {scores.shape}.")
    return Y, scores


def _ranks(scores):
    """rank[i, l] = number of labels of row i scored at least as high as label l (1 = top)."""
    return (scores[:, None, :] >= scores[:, :, None]).sum(axis=2)


def one_error(Y, scores) -> float:
    """Fraction of rows whose top-scored label is not one of their labels (ties: the first
    label). Rows without labels are left out."""
    Y, scores = _check(Y, scores)
    rows = Y.any(axis=1)
    top = np.argmax(scores[rows], axis=1)
    return float(np.mean(~Y[rows][np.arange(top.size), top])) if rows.any() else 0.0


def coverage(Y, scores) -> float:
    """Mean over rows of how far down the ranking one goes to cover all of a row's labels,
    counted from 0 as in paper 004 (scikit-learn's ``coverage_error`` counts from 1: it is this
    plus 1 on rows with labels). Rows without labels count 0."""
    Y, scores = _check(Y, scores)
    ranks = _ranks(scores)
    deepest = np.where(Y, ranks, 0).max(axis=1)
    return float(np.mean(np.maximum(deepest - 1, 0)))


def average_precision(Y, scores) -> float:
    """Mean over rows of the mean, over a row's labels, of the fraction of labels ranked at
    least as high that are true labels (paper 004; scikit-learn's
    ``label_ranking_average_precision_score``). A row without labels (or with every label)
    counts 1, as in scikit-learn."""
    Y, scores = _check(Y, scores)
    ranks = _ranks(scores)
    total = 0.0
    for i in range(Y.shape[0]):
        true = np.flatnonzero(Y[i])
        if true.size in (0, Y.shape[1]):
            total += 1.0
            continue
        r = ranks[i, true]
        above_true = (ranks[i, true][None, :] <= r[:, None]).sum(axis=1)  # true labels ranked >= each
        total += float(np.mean(above_true / r))
    return total / Y.shape[0]


def hamming_loss(Y, Y_pred) -> float:
    """Fraction of (row, label) entries predicted wrongly."""
    Y = np.asarray(Y).astype(bool)
    Y_pred = np.asarray(Y_pred).astype(bool)
    if Y.shape != Y_pred.shape:
        raise ValueError(f"Y and Y_pred must have the same shape; got {Y.shape} and {Y_pred.shape}.")
    return float(np.mean(Y != Y_pred))
