"""One whole tree in one compiled call: the grower's best-first logic on the stage kernels.

``grow_tree`` runs what ``grower.TreeGrower`` runs with the NumPy backend, node for node, but
without Python between the stages (its overhead per node would dominate small data). The two
children of a split are evaluated as one batch, and each pass over their rows is one
parallel region when the batch is large enough::

    pass                  threads own               per node, summed in row order
    class sums G, Hd      a block of classes        G_k, Hd_k            -> r
    cross sums C          a block of classes        C_rk                 -> s, eq (33)
    histograms            a block of features       hist[f, code, :]     -> best split

Every sum still runs over the node's rows in row order on one thread, so the result is the
sequential one whatever the number of threads (and the NumPy reference's).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._numba_cpu import (COUNT, GRAD, HESS, PARALLEL_CELLS, _class_sums, _cross_sums, _pair_stat, best_split,
                         node_sums, partition, pick_r, pick_s)


@njit(cache=True)
def _histogram_block(rows, start, stop, r, s, codes, p, pc, y, w, weighted, first_order, hist, f_lo, f_hi):
    """hist[f_lo:f_hi] = the node's histogram for those features, channels computed on the fly."""
    for f in range(f_lo, f_hi):
        hist[f] = 0.0
    for j in range(start, stop):
        i = rows[j]
        g, h = _pair_stat(i, r, s, p, pc, y)
        if first_order:
            h = 1.0
        if weighted:
            g *= w[i]
            h *= w[i]
        for f in range(f_lo, f_hi):
            c = codes[i, f]
            hist[f, c, GRAD] += g
            hist[f, c, HESS] += h
            hist[f, c, COUNT] += 1.0


@njit(cache=True, parallel=True)
def _histograms_parallel(rows, batch, n_batch, start, stop, pair, codes, p, pc, y, w, weighted, first_order, hist,
                         n_blocks):
    D = codes.shape[1]
    for block in prange(n_blocks):
        for b in range(n_batch):
            node = batch[b]
            _histogram_block(rows, start[node], stop[node], pair[node, 0], pair[node, 1], codes, p, pc, y, w,
                             weighted, first_order, hist[b], block * D // n_blocks, (block + 1) * D // n_blocks)


@njit(cache=True, parallel=True)
def _class_sums_parallel(rows, batch, n_batch, start, stop, p, pc, top, y, w, weighted, G, Hd, n_blocks):
    K = p.shape[1]
    for block in prange(n_blocks):
        k_lo = block * K // n_blocks
        k_hi = (block + 1) * K // n_blocks
        for b in range(n_batch):
            node = batch[b]
            _class_sums(rows, start[node], stop[node], p, pc, top, y, w, weighted, G[b], Hd[b], k_lo, k_hi)


@njit(cache=True, parallel=True)
def _cross_sums_parallel(rows, batch, n_batch, start, stop, p, w, weighted, r, C, n_blocks):
    K = p.shape[1]
    for block in prange(n_blocks):
        k_lo = block * K // n_blocks
        k_hi = (block + 1) * K // n_blocks
        for b in range(n_batch):
            node = batch[b]
            _cross_sums(rows, start[node], stop[node], p, w, weighted, r[b], C[b], k_lo, k_hi)


@njit(cache=True)
def _batch_pairs(rows, batch, n_batch, start, stop, p, pc, top, y, w, weighted, rule_eq32, G, Hd, C, r, pair,
                 n_threads):
    """pair[node] for the nodes of a batch (AOSO: each node picks its own by eq (33) / (32))."""
    K = p.shape[1]
    n_rows = 0
    for b in range(n_batch):
        n_rows += stop[batch[b]] - start[batch[b]]
    parallel = n_threads > 1 and K > 1 and n_rows * K >= PARALLEL_CELLS
    G[:] = 0.0
    Hd[:] = 0.0
    C[:] = 0.0
    if parallel:
        _class_sums_parallel(rows, batch, n_batch, start, stop, p, pc, top, y, w, weighted, G, Hd, min(n_threads, K))
    else:
        for b in range(n_batch):
            node = batch[b]
            _class_sums(rows, start[node], stop[node], p, pc, top, y, w, weighted, G[b], Hd[b], 0, K)
    for b in range(n_batch):
        r[b] = pick_r(G[b])
    if not rule_eq32:
        if parallel:
            _cross_sums_parallel(rows, batch, n_batch, start, stop, p, w, weighted, r, C, min(n_threads, K))
        else:
            for b in range(n_batch):
                node = batch[b]
                _cross_sums(rows, start[node], stop[node], p, w, weighted, r[b], C[b], 0, K)
    for b in range(n_batch):
        node = batch[b]
        pair[node, 0] = r[b]
        pair[node, 1] = pick_s(G[b], Hd[b], C[b], r[b], rule_eq32)


@njit(cache=True)
def grow_tree(codes, y, w, weighted, p, pc, top, rows, n_codes, max_leaves, min_samples_leaf,
              rule_eq32, n_threads, fixed_r, fixed_s, first_order):
    """Grow one tree best-first, as grower.TreeGrower does with the NumPy backend.

    fixed_r < 0: every node picks its pair (AOSO); else the tree's pair is (fixed_r, fixed_s).
    p, pc, top as CpuBackend.set_scores leaves them.

    Returns node arrays (n_nodes entries each): start, stop, pair (n, 2), sums (n, 3), and per
    node the split (gain, feature, bin, missing_left) and children (-1 for leaves).
    """
    N, D = codes.shape
    K = p.shape[1]
    missing_code = n_codes - 1
    max_nodes = 2 * max_leaves - 1
    start = np.zeros(max_nodes, np.int64)
    stop = np.zeros(max_nodes, np.int64)
    pair = np.zeros((max_nodes, 2), np.int64)
    sums = np.zeros((max_nodes, 3))
    gain = np.full(max_nodes, -np.inf)
    feature = np.full(max_nodes, -1, np.int64)
    bin_ = np.full(max_nodes, -1, np.int64)
    missing_left = np.zeros(max_nodes, np.bool_)
    left = np.full(max_nodes, -1, np.int64)
    right = np.full(max_nodes, -1, np.int64)
    split_gain = np.full(max_nodes, -np.inf)  # candidate gains of open leaves

    hist = np.empty((2, D, n_codes, 3))  # one per node of a batch
    prefix = np.empty((n_codes, 3))
    suffix = np.empty((n_codes, 3))
    cand_gain = np.empty(2 * D * n_codes)
    cand_at = np.empty(2 * D * n_codes, np.int64)
    G = np.empty((2, K))
    Hd = np.empty((2, K))
    C = np.empty((2, K))
    r = np.empty(2, np.int64)
    batch = np.empty(2, np.int64)
    grow = np.empty(2, np.int64)
    scratch = np.empty(N, rows.dtype)

    for j in range(N):
        rows[j] = j
    start[0] = 0
    stop[0] = N
    n_nodes = 1
    n_leaves = 1
    batch[0] = 0  # evaluate the root
    n_batch = 1
    while True:
        can_grow = n_leaves < max_leaves
        if fixed_r < 0:
            _batch_pairs(rows, batch, n_batch, start, stop, p, pc, top, y, w, weighted, rule_eq32, G, Hd, C, r, pair,
                         n_threads)
        else:
            for b in range(n_batch):
                pair[batch[b], 0] = fixed_r
                pair[batch[b], 1] = fixed_s
        n_grow = 0
        cells = 0
        for b in range(n_batch):
            node = batch[b]
            if can_grow and stop[node] - start[node] >= 2 * min_samples_leaf:
                grow[n_grow] = node
                n_grow += 1
                cells += (stop[node] - start[node]) * D
            else:
                node_sums(rows, start[node], stop[node], pair[node, 0], pair[node, 1], p, pc, y, w, weighted,
                          sums[node])
        if n_grow > 0:
            if n_threads > 1 and cells >= PARALLEL_CELLS:
                _histograms_parallel(rows, grow, n_grow, start, stop, pair, codes, p, pc, y, w, weighted, first_order,
                                     hist, min(n_threads, D))
            else:
                for b in range(n_grow):
                    node = grow[b]
                    _histogram_block(rows, start[node], stop[node], pair[node, 0], pair[node, 1], codes, p, pc, y, w,
                                     weighted, first_order, hist[b], 0, D)
            for b in range(n_grow):
                node = grow[b]
                g, f, bb, ml = best_split(hist[b], min_samples_leaf, sums[node], prefix, suffix, cand_gain, cand_at)
                if g > 0.0:
                    split_gain[node] = g
                    feature[node] = f
                    bin_[node] = bb
                    missing_left[node] = ml
        if n_leaves >= max_leaves:
            break
        # the open leaf with the largest gain; ties: the lowest node id
        best = -1
        for node in range(n_nodes):
            if split_gain[node] > 0.0 and (best < 0 or split_gain[node] > split_gain[best]):
                best = node
        if best < 0:
            break
        gain[best] = split_gain[best]
        split_gain[best] = -np.inf
        n_left = partition(rows, start[best], stop[best], codes, feature[best], bin_[best],
                           missing_left[best], missing_code, scratch)
        lo = n_nodes
        start[lo] = start[best]
        stop[lo] = start[best] + n_left
        start[lo + 1] = start[best] + n_left
        stop[lo + 1] = stop[best]
        left[best] = lo
        right[best] = lo + 1
        n_nodes += 2
        n_leaves += 1
        batch[0] = lo
        batch[1] = lo + 1
        n_batch = 2
    if first_order:  # the histograms summed weights: the values need the Hessian sums
        for node in range(n_nodes):
            node_sums(rows, start[node], stop[node], pair[node, 0], pair[node, 1], p, pc, y, w, weighted,
                      sums[node])
    # nodes that stayed leaves carry no split
    for node in range(n_nodes):
        if left[node] < 0:
            feature[node] = -1
            bin_[node] = -1
            missing_left[node] = False
            gain[node] = 0.0
    return (n_nodes, start[:n_nodes], stop[:n_nodes], pair[:n_nodes], sums[:n_nodes],
            gain[:n_nodes], feature[:n_nodes], bin_[:n_nodes], missing_left[:n_nodes],
            left[:n_nodes], right[:n_nodes])
