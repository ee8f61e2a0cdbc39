"""Feature contributions (SHAP values) of a fitted ensemble's scores, by TreeSHAP.

For a row x, the contribution phi_j of feature j to class k's score is its Shapley value in the
game whose value of a feature set S is the path-dependent expectation of the score given x_S:
the tree is walked with x where it splits on a feature of S, and down both children, weighted
by their shares of the node's training rows (``Tree.n_samples``), where it splits on another
(Lundberg, Erion and Lee, "Consistent individualized feature attribution for tree ensembles",
2018; the same definition as XGBoost's ``pred_contribs`` and LightGBM's ``pred_contrib``).
The contributions and the bias (the value of the empty set, the covers' average of the leaf
values) add up to the scores F the model predicts, class by class::

    F[i, k] = sum_j phi[i, k, j] + phi[i, k, n_features]

Scores are additive over trees, so are Shapley values: each tree's leaf vectors (eq 29, times
the learning rate) are attributed on their own and summed. Missing values follow each split's
``missing_left``, as in prediction.

``tree_contributions`` is the compiled TreeSHAP (polynomial in the depth); ``brute_force``, its
slow twin for tests, sums the Shapley formula over every subset of the features.
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
    cover = np.concatenate([tree.n_samples for tree in trees]).astype(np.float64)
    inner = feature >= 0
    if np.any(cover[inner] <= 0) or np.any(cover[left[inner]] + cover[right[inner]] != cover[inner]):
        raise ValueError("contributions: a tree's row counts (n_samples) do not add up over its splits; "
                         "they weight TreeSHAP's paths. Refit the model with this version of gpuboost.")
    values = np.concatenate([learning_rate * tree.node_vectors(n_classes) for tree in trees])
    # each node's classes of nonzero value, first in its row of classes (AOSO's two, a K-tree's one)
    nonzero = values != 0.0
    n_changed = nonzero.sum(axis=1).astype(np.int64)
    classes = np.argsort(~nonzero, axis=1, kind="stable").astype(np.int64)
    depth = max(_depth(tree) for tree in trees)
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
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    for j in range(tree.n_nodes):  # children come after their parent
        if tree.feature[j] >= 0:
            depth[tree.left[j]] = depth[tree.right[j]] = depth[j] + 1
    return int(depth.max())


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

    Returns
    -------
    ndarray of shape (n_samples, n_classes, n_features + 1), float64: each feature's
    contribution to each class's score, then the bias; they add up to the scores.
    """
    import numba

    from .backends.cpu import _threads

    n, n_features = codes.shape
    phi = np.zeros((n, n_classes, n_features + 1))
    if not trees or n == 0:
        return phi
    feature, bin_, missing_left, left, right, cover, values, classes, n_changed, offsets, depth = _packed(
        trees, n_classes, learning_rate)
    kernel = _kernel()
    with _threads(max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS))):
        kernel(np.ascontiguousarray(codes), int(missing_code), feature, bin_, missing_left, left, right, cover,
               values, classes, n_changed, offsets, depth, phi)
    phi[:, :, n_features] = _bias(feature, cover, values, offsets)
    return phi


_compiled = None


def _kernel():
    """The compiled kernel, made at the first call (importing gpuboost compiles nothing)."""
    global _compiled
    if _compiled is None:
        _compiled = _compile()
    return _compiled


def _compile():
    from numba import njit, prange

    # The path's weights follow the recurrences of the TreeSHAP paper's EXTEND and UNWIND; each
    # division there is by a small integer or a fraction known before the loop, so it is a
    # product with a reciprocal here (recip[m] = 1 / m): a chain of divisions, one a step,
    # took most of the time

    @njit(cache=True, inline="always")
    def extend(d, z, o, w, length, p_zero, p_one, feat, recip):
        """Add a feature to the path (p_zero: its fraction of the rows, the share of the subsets
        without it; p_one: 1 where x goes this way, else 0), updating the weights of every
        subset size."""
        d[length] = feat
        z[length] = p_zero
        o[length] = p_one
        w[length] = 1.0 if length == 0 else 0.0
        by = recip[length + 1]
        for i in range(length - 1, -1, -1):
            w[i + 1] += p_one * w[i] * ((i + 1) * by)
            w[i] = p_zero * w[i] * ((length - i) * by)
        return length + 1

    @njit(cache=True, inline="always")
    def unwind(d, z, o, w, length, at, recip):
        """Remove the path's element ``at`` (its extend undone); returns the new length."""
        last = length - 1
        n = w[last]
        p_one = o[at]
        p_zero = z[at]
        if p_one != 0.0:
            up = length / p_one
            down = p_zero * recip[length]
            for j in range(last - 1, -1, -1):
                t = w[j]
                w[j] = n * (up * recip[j + 1])
                n = t - w[j] * (down * (last - j))
        else:
            up = length / p_zero
            for j in range(last - 1, -1, -1):
                w[j] = w[j] * (up * recip[last - j])
        for j in range(at, last):
            d[j] = d[j + 1]
            z[j] = z[j + 1]
            o[j] = o[j + 1]
        return last

    @njit(cache=True, inline="always")
    def unwound_sum(z, o, w, length, at, recip):
        """The sum of the weights the path would have without its element ``at``."""
        last = length - 1
        p_one = o[at]
        p_zero = z[at]
        total = 0.0
        if p_one != 0.0:
            up = length / p_one
            down = p_zero * recip[length]
            n = w[last]
            for j in range(last - 1, -1, -1):
                t = n * (up * recip[j + 1])
                total += t
                n = w[j] - t * (down * (last - j))
        else:
            up = length / p_zero
            for j in range(last - 1, -1, -1):
                total += w[j] * (up * recip[last - j])
        return total

    @njit(cache=True, inline="always")
    def _push(stack_node, stack_level, stack_zero, stack_one, stack_feat, stack_length, top, node, level, p_zero,
              p_one, feat, length):
        stack_node[top] = node
        stack_level[top] = level
        stack_zero[top] = p_zero
        stack_one[top] = p_one
        stack_feat[top] = feat
        stack_length[top] = length
        return top

    @njit(cache=True)
    def tree_shap(x, missing_code, feature, bin_, missing_left, left, right, cover, values, classes, n_changed,
                  root, phi, d, z, o, w, recip, stack_node, stack_level, stack_zero, stack_one, stack_feat,
                  stack_length):
        """One row's contributions of the tree at ``root`` added to phi (n_classes, n_features +
        1). The path of each level of the walk is its own row of d, z, o, w (a child copies its
        parent's), so the depth-first walk's pending siblings find their parent's path intact."""
        top = 0
        stack_node[0] = root
        stack_level[0] = -1
        stack_zero[0] = 1.0
        stack_one[0] = 1.0
        stack_feat[0] = -1
        stack_length[0] = 0
        while top >= 0:
            node = stack_node[top]
            parent = stack_level[top]
            p_zero = stack_zero[top]
            p_one = stack_one[top]
            feat = stack_feat[top]
            length = stack_length[top]
            top -= 1
            level = parent + 1
            if parent >= 0:
                for j in range(length):
                    d[level, j] = d[parent, j]
                    z[level, j] = z[parent, j]
                    o[level, j] = o[parent, j]
                    w[level, j] = w[parent, j]
            length = extend(d[level], z[level], o[level], w[level], length, p_zero, p_one, feat, recip)
            f = feature[node]
            if f < 0:
                for i in range(1, length):
                    share = unwound_sum(z[level], o[level], w[level], length, i, recip) * (o[level, i] - z[level, i])
                    for c in range(n_changed[node]):
                        k = classes[node, c]
                        phi[k, d[level, i]] += share * values[node, k]
                continue
            code = x[f]
            goes_left = missing_left[node] if code == missing_code else code <= bin_[node]
            hot = left[node] if goes_left else right[node]
            cold = right[node] if goes_left else left[node]
            in_zero = 1.0
            in_one = 1.0
            for i in range(1, length):  # the feature met higher up the path: its fractions carry on
                if d[level, i] == f:
                    in_zero = z[level, i]
                    in_one = o[level, i]
                    length = unwind(d[level], z[level], o[level], w[level], length, i, recip)
                    break
            # the cold child (p_one 0: x does not go there) pushed first, the hot one walked first
            top = _push(stack_node, stack_level, stack_zero, stack_one, stack_feat, stack_length, top + 1, cold,
                        level, in_zero * cover[cold] / cover[node], 0.0, f, length)
            top = _push(stack_node, stack_level, stack_zero, stack_one, stack_feat, stack_length, top + 1, hot,
                        level, in_zero * cover[hot] / cover[node], in_one, f, length)

    @njit(cache=True, parallel=True)
    def ensemble_shap(codes, missing_code, feature, bin_, missing_left, left, right, cover, values, classes,
                      n_changed, offsets, depth, phi):
        """phi[i] += every tree's contributions of row i (the bias column left alone)."""
        n = codes.shape[0]
        levels = depth + 1
        # a path holds the dummy root element and each feature at most once: its length is at
        # most one more than the depth and than the number of features
        size = min(depth, codes.shape[1]) + 2
        recip = np.empty(size + 2)
        recip[0] = 0.0
        for m in range(1, size + 2):
            recip[m] = 1.0 / m
        for i in prange(n):
            d = np.empty((levels, size), np.int64)
            z = np.empty((levels, size))
            o = np.empty((levels, size))
            w = np.empty((levels, size))
            stack = 2 * levels + 2
            stack_node = np.empty(stack, np.int64)
            stack_level = np.empty(stack, np.int64)
            stack_zero = np.empty(stack)
            stack_one = np.empty(stack)
            stack_feat = np.empty(stack, np.int64)
            stack_length = np.empty(stack, np.int64)
            for t in range(offsets.shape[0] - 1):
                tree_shap(codes[i], missing_code, feature, bin_, missing_left, left, right, cover, values, classes,
                          n_changed, offsets[t], phi[i], d, z, o, w, recip, stack_node, stack_level, stack_zero,
                          stack_one, stack_feat, stack_length)

    return ensemble_shap


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
