"""Feature contributions (SHAP values) of a fitted ensemble's scores, by TreeSHAP.

For a row x, the contribution phi_j of feature j to class k's score is its Shapley value in the
game whose value of a feature set S is the path-dependent expectation of the score given x_S:
the tree is walked with x where it splits on a feature of S, and down both children, weighted
by their shares of the node's training rows (``Tree.n_samples``), where it splits on another
(Lundberg, Erion and Lee, "Consistent individualized feature attribution for tree ensembles",
2018). The algorithm of XGBoost's ``pred_contribs`` and LightGBM's ``pred_contrib``; the
children are weighted by row counts as LightGBM weights them (XGBoost weights by Hessian sums),
and sample weights do not enter the weighting.
The contributions and the bias (the value of the empty set, the covers' average of the leaf
values) add up to the scores F the model predicts, class by class::

    F[i, k] = sum_j phi[i, k, j] + phi[i, k, n_features]

Scores are additive over trees, so are Shapley values: each tree's leaf vectors (eq 29, times
the learning rate) are attributed on their own and summed. Missing values follow each split's
``missing_left``, as in prediction.

``contributions`` runs the compiled TreeSHAP (``gpuboost._treeshap``; per tree and row, about
the leaves times the depth squared); ``brute_force``, its slow twin for tests, sums the Shapley
formula over every subset of the features.
"""

from __future__ import annotations

from itertools import combinations
from math import factorial

import numpy as np

__all__ = ["contributions", "brute_force"]


def _packed(trees, n_classes: int, learning_rate: float):
    """The trees' nodes in flat arrays (node_offset[t]: tree t's first node; children as
    indices into the flat arrays), each node's values (learning rate times its eq (29) vector),
    its cover (training rows, float64) and the deepest tree's depth."""
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum([tree.n_nodes for tree in trees], out=offsets[1:])
    feature = np.concatenate([tree.feature for tree in trees]).astype(np.int64)
    left = np.concatenate([np.where(tree.left >= 0, tree.left + offsets[t], -1) for t, tree in enumerate(trees)])
    right = np.concatenate([np.where(tree.right >= 0, tree.right + offsets[t], -1) for t, tree in enumerate(trees)])
    depth = max(_depth(tree) for tree in trees)
    cover = np.concatenate([tree.n_samples for tree in trees]).astype(np.float64)
    inner = feature >= 0
    if np.any(cover <= 0) or np.any(cover[left[inner]] + cover[right[inner]] != cover[inner]):
        raise ValueError("contributions: a tree's row counts (n_samples) are not positive or do not add up "
                         "over its splits; they weight TreeSHAP's paths. Refit the model with this version "
                         "of gpuboost.")
    values = np.concatenate([learning_rate * tree.node_vectors(n_classes) for tree in trees])
    # each node's classes of nonzero value, first in its row of classes (AOSO's two, a K-tree's one)
    nonzero = values != 0.0
    n_changed = nonzero.sum(axis=1).astype(np.int64)
    classes = np.argsort(~nonzero, axis=1, kind="stable").astype(np.int64)
    return (feature, np.concatenate([tree.bin for tree in trees]).astype(np.int64),
            np.concatenate([tree.missing_left for tree in trees]).astype(np.bool_), left.astype(np.int64),
            right.astype(np.int64), cover, np.ascontiguousarray(values), classes, n_changed, offsets, depth)


def _bias(feature, cover, values, offsets) -> np.ndarray:
    """The value of the empty feature set: each tree's leaf values averaged over its training
    rows (E[f] under the covers), summed over the trees."""
    root_cover = np.repeat(cover[offsets[:-1]], np.diff(offsets))
    leaves = feature < 0
    return ((cover[leaves] / root_cover[leaves])[:, None] * values[leaves]).sum(axis=0)


def _depth(tree) -> int:
    """The tree's depth (its deepest leaf's level; the root's is 0), walked from the root, whatever
    the order of its nodes; ValueError where the links do not make a tree of its nodes (the
    compiled walk sizes its arrays by the depth and does not check their bounds)."""
    seen = np.zeros(tree.n_nodes, dtype=bool)
    level, depth = [0], 0
    while level:
        nodes = np.asarray(level)
        if nodes.min() < 0 or nodes.max() >= tree.n_nodes or seen[nodes].any() or len(set(level)) < len(level):
            raise ValueError("contributions: a tree's child links do not form a tree of its nodes.")
        seen[nodes] = True
        inner = nodes[tree.feature[nodes] >= 0]
        level = [int(c) for c in np.concatenate([tree.left[inner], tree.right[inner]])]
        depth += bool(level)
    return depth


def contributions(trees, codes: np.ndarray, missing_code: int, n_classes: int, learning_rate: float,
                  n_threads: int = 1) -> np.ndarray:
    """TreeSHAP contributions of the ensemble ``trees`` for the binned rows ``codes``.

    Parameters
    ----------
    trees : list of Tree
    codes : ndarray of shape (n_samples, n_features), the bin mapper's codes
    missing_code : int, the code of missing values
    n_classes : int
    learning_rate : float, the factor of every tree's leaf vectors in the scores
    n_threads : int, default=1, the threads the rows are shared among (the result does not
        depend on it)

    Returns
    -------
    ndarray of shape (n_samples, n_classes, n_features + 1), float64: each feature's
    contribution to each class's score, then the bias; they add up to the scores.
    """
    import numba

    from ._treeshap import ensemble_shap, ensemble_shap_serial
    from .backends import _reference_chosen
    from .backends.cpu import _threads, serial_kernels

    n, n_features = codes.shape
    phi = np.zeros((n, n_classes, n_features + 1))
    if not trees or n == 0:
        return phi
    feature, bin_, missing_left, left, right, cover, values, classes, n_changed, offsets, depth = _packed(
        trees, n_classes, learning_rate)
    if feature.max() >= n_features:  # (the compiled walk reads a row's codes unchecked)
        raise ValueError(f"contributions: the trees split on feature {int(feature.max())}, but codes has "
                         f"{n_features} features.")
    arguments = (np.ascontiguousarray(codes), int(missing_code), feature, bin_, missing_left, left, right, cover,
                 values, classes, n_changed, offsets, depth, phi)
    if _reference_chosen():  # (a process forked after OpenMP started, or GPUBOOST_CPU_BACKEND=numpy): no threads
        ensemble_shap_serial(*arguments)
    else:
        with _threads(max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS))), serial_kernels():
            ensemble_shap(*arguments)
    phi[:, :, n_features] = _bias(feature, cover, values, offsets)
    return phi


def brute_force(trees, codes: np.ndarray, missing_code: int, n_classes: int, learning_rate: float) -> np.ndarray:
    """``contributions`` by the Shapley formula itself: for every feature j and every subset S
    of the others, |S|! (M - |S| - 1)! / M! (v(S + j) - v(S)), where v(S) is the path-dependent
    expectation of the scores given the row's values of S. Exponential in the number of
    features M: for tests on a few features."""
    n, M = codes.shape
    if M > 10:
        raise ValueError("brute_force: at most 10 features (it sums over every subset of them)")
    phi = np.zeros((n, n_classes, M + 1))
    for i in range(n):
        values = {}
        for size in range(M + 1):
            for subset in combinations(range(M), size):
                values[subset] = sum(_expectation(tree, 0, codes[i], missing_code, set(subset), n_classes)
                                     for tree in trees) * learning_rate
        phi[i, :, M] = values[()]
        for j in range(M):
            others = [f for f in range(M) if f != j]
            for size in range(M):
                weight = factorial(size) * factorial(M - size - 1) / factorial(M)
                for subset in combinations(others, size):
                    with_j = tuple(sorted(subset + (j,)))
                    phi[i, :, j] += weight * (values[with_j] - values[subset])
    return phi


def _expectation(tree, node, x, missing_code, known, n_classes) -> np.ndarray:
    """E[tree's vector | the row's values of the features ``known``]: x's child where the
    node splits on a known feature, else both children weighted by their rows."""
    f = tree.feature[node]
    if f < 0:
        return tree.node_vectors(n_classes, np.array([node]))[0]
    left, right = tree.left[node], tree.right[node]
    if f in known:
        goes_left = tree.missing_left[node] if x[f] == missing_code else x[f] <= tree.bin[node]
        return _expectation(tree, left if goes_left else right, x, missing_code, known, n_classes)
    share = tree.n_samples[left] / tree.n_samples[node]
    return (share * _expectation(tree, left, x, missing_code, known, n_classes)
            + (1.0 - share) * _expectation(tree, right, x, missing_code, known, n_classes))
