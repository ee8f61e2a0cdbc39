"""The compiled TreeSHAP of gpuboost.contributions (imported when contributions are first asked
for: importing gpuboost compiles and imports none of it). Module-level functions, so that
numba's cache finds them again in the next process."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._numba_cache import ensure_cache, lock_cache_files

ensure_cache(__file__)  # (before the first @njit(cache=True): see _numba_cache)

# The path's weights follow the recurrences of the TreeSHAP paper's EXTEND and UNWIND; each
# division there is by a small integer or a fraction known before the loop, so it is a
# product with a reciprocal here (recip[m] = 1 / m): letter's 1000 trees on 1000 rows took
# 5.0 s instead of 6.0 (one run each, 2026-11-27)


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


@njit(cache=True)
def _path_sizes(depth, n_features):
    """(levels, size, recip) of the walks: a path holds the dummy root element and each feature
    at most once, so its length is at most one more than the depth and than the number of
    features; recip[m] = 1 / m."""
    levels = depth + 1
    size = min(depth, n_features) + 2
    recip = np.empty(size + 2)
    recip[0] = 0.0
    for m in range(1, size + 2):
        recip[m] = 1.0 / m
    return levels, size, recip


@njit(cache=True)
def _row_shap(i, codes, missing_code, feature, bin_, missing_left, left, right, cover, values, classes, n_changed,
              offsets, phi, levels, size, recip):
    """phi[i] += every tree's contributions of row i, with the row's own work arrays."""
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


@njit(cache=True, parallel=True)
def ensemble_shap(codes, missing_code, feature, bin_, missing_left, left, right, cover, values, classes,
                  n_changed, offsets, depth, phi):
    """phi[i] += every tree's contributions of row i (the bias column left alone), rows on
    numba's threads."""
    levels, size, recip = _path_sizes(depth, codes.shape[1])
    for i in prange(codes.shape[0]):
        _row_shap(i, codes, missing_code, feature, bin_, missing_left, left, right, cover, values, classes,
                  n_changed, offsets, phi, levels, size, recip)


@njit(cache=True)
def ensemble_shap_serial(codes, missing_code, feature, bin_, missing_left, left, right, cover, values, classes,
                         n_changed, offsets, depth, phi):
    """ensemble_shap on the calling thread alone (the same rows' sums, bit for bit): for a process
    forked from one whose GNU OpenMP had started, where a parallel kernel would be terminated
    (backends._reference_chosen)."""
    levels, size, recip = _path_sizes(depth, codes.shape[1])
    for i in range(codes.shape[0]):
        _row_shap(i, codes, missing_code, feature, bin_, missing_left, left, right, cover, values, classes,
                  n_changed, offsets, phi, levels, size, recip)


lock_cache_files(globals())  # (after the last kernel: saves and loads of the cache under its lock)
