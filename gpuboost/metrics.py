"""Multi-label metrics: paper 004's one-error, coverage and average precision, and the
Hamming loss.

``Y`` is an (n_samples, n_labels) indicator matrix of the true label sets; ``scores`` the
model's per-label scores (any monotone scores: ``decision_function`` or ``predict_proba``),
higher meaning more likely. Ranks count ties pessimistically, as scikit-learn does: a label's
rank is the number of labels scored at least as high. ``decision_function`` is the better
input: probabilities of confident labels round to exactly 1 in float64 and then tie.
"""

from __future__ import annotations

import numpy as np

from ._validation import host_labels, nullable_numbers

__all__ = ["one_error", "coverage", "average_precision", "hamming_loss"]


def _indicator(Y, name: str = "Y") -> np.ndarray:
    """An indicator matrix of 0 and 1 (or booleans; a scipy.sparse one densified) as bool."""
    Y = np.asarray(host_labels(Y, name))
    numbers = nullable_numbers(Y)  # (a pandas nullable frame's values, as fit takes them)
    if numbers is not None and np.isin(numbers, (0, 1)).all():  # (else the error names the values as given)
        Y = numbers
    if Y.dtype.kind not in "biuf" or not np.isin(Y, (0, 1)).all():
        try:
            values = np.unique(Y)[:5].tolist()
        except TypeError:  # values that do not compare (None among numbers): the first ones
            values = Y.ravel()[:5].tolist()
        hint = " (labels of -1 and 1: pass Y > 0)" if set(values) == {-1, 1} else (
            " (predict's output, not predict_proba's scores)" if name == "Y_pred" else "")
        raise ValueError(f"{name} must be an indicator matrix of 0 and 1 (or booleans), one column per label; "
                         f"it holds {values}{hint}.")
    return Y.astype(bool)


def _check(Y, scores):
    Y = _indicator(Y)
    scores = np.asarray(host_labels(scores, "scores"), dtype=np.float64)  # (a sparse or GPU array densified, as Y)
    if Y.ndim != 2 or Y.shape != scores.shape:
        raise ValueError(f"Y and scores must both have shape (n_samples, n_labels); got {Y.shape} and {scores.shape}.")
    _nonempty(Y)
    if np.isnan(scores).any():
        raise ValueError("scores hold NaN: a ranking needs every label scored.")
    return Y, scores


def _nonempty(Y) -> None:
    if 0 in Y.shape:
        raise ValueError(f"Y has shape {Y.shape}: a metric needs at least one row and one label.")


#: _ranks compares the labels of this many cells' worth of rows at a time (rows x L x L
#: booleans): its memory stays bounded however many labels there are
RANK_CELLS = 1 << 24


def _ranks(scores):
    """rank[i, l] = number of labels of row i scored at least as high as label l (1 = top)."""
    n, L = scores.shape
    ranks = np.empty((n, L), dtype=np.int64)
    step = max(1, RANK_CELLS // max(1, L * L))
    for lo in range(0, n, step):
        block = scores[lo:lo + step]
        ranks[lo:lo + step] = (block[:, None, :] >= block[:, :, None]).sum(axis=2)
    return ranks


def one_error(Y, scores) -> float:
    """Fraction of rows whose top-scored label is not one of their labels (ties: the first
    label). Rows without labels are left out (0.0 where no row has a label)."""
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
    """Fraction of (row, label) entries predicted wrongly (both indicator matrices of 0 and 1:
    ``predict``'s, not ``predict_proba``'s scores)."""
    Y = _indicator(Y)
    Y_pred = _indicator(Y_pred, "Y_pred")
    if Y.shape != Y_pred.shape:
        raise ValueError(f"Y and Y_pred must have the same shape; got {Y.shape} and {Y_pred.shape}.")
    if Y.ndim not in (1, 2):
        raise ValueError(f"Y and Y_pred must be indicator matrices, shape (n_samples, n_labels); got shape {Y.shape}.")
    _nonempty(Y)
    return float(np.mean(Y != Y_pred))
