"""numba kernels of the compiled CPU backend (``cpu.py``): the stages, and a whole tree.

Each stage is the NumPy reference's formula written as loops, so that the tests can hold
every kernel to its NumPy twin; ``grow_tree`` composes them and runs the grower's best-first
logic for a whole tree in one compiled call (Python overhead per node would otherwise
dominate small data).

Arithmetic notes. Sums are float64 and sequential in row order within a node, so the result
does not depend on the number of threads. Histograms are laid out like the reference's:
``hist[feature, code, channel]``, the missing code last, channels (w g, w h, count).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# Channels, as in base.py
GRAD, HESS, COUNT = 0, 1, 2
GAIN_NOISE = 8 * np.finfo(np.float64).eps  # as losses.GAIN_NOISE
SPLIT_TIE = 1e-10  # as losses.SPLIT_TIE
Z_MAX = 4.0  # as losses.Z_MAX

#: Below this many (row, feature) or (row, class) cells a node's sums run on one thread:
#: starting the thread pool costs more than it saves.
PARALLEL_CELLS = 1 << 20


@njit(cache=True)
def shifted_scores(F, out):
    """out = F - rowmax(F): what exp is taken of (NumPy's row max over a short axis is slow)."""
    n, K = F.shape
    for i in range(n):
        m = F[i, 0]
        for k in range(1, K):
            if F[i, k] > m:
                m = F[i, k]
        for k in range(K):
            out[i, k] = F[i, k] - m


@njit(cache=True)
def softmax_from_exponentials(F, E, y, w, weighted, p, pc):
    """p = softmax(F) and pc = 1 - p (see losses.softmax_with_loss); returns the loss.

    E holds exp(F - rowmax), computed by NumPy's vectorised exp (several times faster than a
    scalar exp here, and the same values as the reference's).
    """
    n, K = F.shape
    total = 0.0
    for i in range(n):
        top = 0
        for k in range(1, K):
            if F[i, k] > F[i, top]:
                top = k
        rest = 0.0
        for k in range(K):
            if k != top:
                rest += E[i, k]
        norm = 1.0 + rest
        for k in range(K):
            p[i, k] = E[i, k] / norm
            pc[i, k] = 1.0 - p[i, k]
        p[i, top] = 1.0 / norm
        pc[i, top] = rest / norm
        loss = (F[i, top] - F[i, y[i]]) + np.log1p(rest)
        total += loss * w[i] if weighted else loss
    return total


@njit(cache=True)
def _argmax_first(values):
    best = 0
    for k in range(1, values.shape[0]):
        if values[k] > values[best]:
            best = k
    return best


@njit(cache=True)
def _class_sums(rows, start, stop, p, pc, y, w, weighted, G, Hd, k_lo, k_hi):
    for j in range(start, stop):
        i = rows[j]
        wi = w[i] if weighted else 1.0
        for k in range(k_lo, k_hi):
            g = -pc[i, k] if y[i] == k else p[i, k]
            G[k] += wi * g
            Hd[k] += wi * (p[i, k] * pc[i, k])


@njit(cache=True)
def _cross_sums(rows, start, stop, p, w, weighted, r, C, k_lo, k_hi):
    for j in range(start, stop):
        i = rows[j]
        pr = (w[i] if weighted else 1.0) * p[i, r]
        for k in range(k_lo, k_hi):
            C[k] += pr * p[i, k]


@njit(cache=True, parallel=True)
def _class_sums_parallel(rows, start, stop, p, pc, y, w, weighted, G, Hd, n_blocks):
    # threads own disjoint class blocks: each class is still summed in row order
    K = p.shape[1]
    for block in prange(n_blocks):
        _class_sums(rows, start, stop, p, pc, y, w, weighted, G, Hd, block * K // n_blocks, (block + 1) * K // n_blocks)


@njit(cache=True, parallel=True)
def _cross_sums_parallel(rows, start, stop, p, w, weighted, r, C, n_blocks):
    K = p.shape[1]
    for block in prange(n_blocks):
        _cross_sums(rows, start, stop, p, w, weighted, r, C, block * K // n_blocks, (block + 1) * K // n_blocks)


@njit(cache=True)
def node_pair(rows, start, stop, p, pc, y, w, weighted, rule_eq32, G, Hd, C, n_threads):
    """Class pair (r, s) of the node rows[start:stop] by eq (33), or eq (32) if rule_eq32.

    G, Hd, C are scratch arrays of length K.
    """
    K = p.shape[1]
    parallel = n_threads > 1 and K > 1 and (stop - start) * K >= PARALLEL_CELLS
    n_blocks = min(n_threads, K)
    G[:] = 0.0
    Hd[:] = 0.0
    if parallel:
        _class_sums_parallel(rows, start, stop, p, pc, y, w, weighted, G, Hd, n_blocks)
    else:
        _class_sums(rows, start, stop, p, pc, y, w, weighted, G, Hd, 0, K)
    r = 0
    for k in range(1, K):
        if -G[k] > -G[r]:
            r = k
    score = C  # reuse the scratch: C_rk first, then the score
    if rule_eq32:
        for k in range(K):
            score[k] = G[k]
    else:
        C[:] = 0.0
        if parallel:
            _cross_sums_parallel(rows, start, stop, p, w, weighted, r, C, n_blocks)
        else:
            _cross_sums(rows, start, stop, p, w, weighted, r, C, 0, K)
        for k in range(K):
            den = Hd[r] + Hd[k] + 2.0 * C[k]
            if den == 0.0:
                den = 1.0
            diff = G[r] - G[k]
            score[k] = diff * diff / den
    score[r] = -np.inf
    return r, _argmax_first(score)


@njit(cache=True)
def _pair_stat(i, r, s, p, pc, y):
    """Eqs (25), (26) for row i; s = -1: the single class r (g_ir, p_ir (1 - p_ir));
    s = -2: LogitBoost's clipped working response (see losses.pair_statistics).

    The pair case comes first and reads each value once: this runs for every row of every
    node, and the branchy form it replaced was several times slower.
    """
    yi = y[i]
    p_r = p[i, r]
    pc_r = pc[i, r]
    if s >= 0:
        p_s = p[i, s]
        pc_s = pc[i, s]
        g_r = -pc_r if yi == r else p_r
        g_s = -pc_s if yi == s else p_s
        return g_r - g_s, p_r * pc_r + p_s * pc_s + 2.0 * p_r * p_s
    if s == -1:
        return (-pc_r if yi == r else p_r), p_r * pc_r
    h = p_r * pc_r
    if yi == r:
        z = 1.0 / p_r if p_r > 0.0 else np.inf
    else:
        z = -1.0 / pc_r if pc_r > 0.0 else -np.inf
    return -h * min(max(z, -Z_MAX), Z_MAX), h


@njit(cache=True)
def node_sums(rows, start, stop, r, s, p, pc, y, w, weighted, out):
    """out[:] = (sum w g, sum w h, count) of the node under the pair (r, s)."""
    G = 0.0
    H = 0.0
    for j in range(start, stop):
        i = rows[j]
        g, h = _pair_stat(i, r, s, p, pc, y)
        if weighted:
            g *= w[i]
            h *= w[i]
        G += g
        H += h
    out[GRAD] = G
    out[HESS] = H
    out[COUNT] = stop - start


@njit(cache=True)
def _node_channels(rows, start, stop, r, s, p, pc, y, w, weighted, first_order, gh):
    """gh[j - start] = (w g, w h) of row rows[j] under the pair (r, s); (w g, w) first_order."""
    for j in range(start, stop):
        i = rows[j]
        g, h = _pair_stat(i, r, s, p, pc, y)
        if first_order:
            h = 1.0
        if weighted:
            g *= w[i]
            h *= w[i]
        gh[j - start, 0] = g
        gh[j - start, 1] = h


@njit(cache=True)
def _accumulate(rows, start, stop, codes, gh, hist, f_lo, f_hi):
    for j in range(start, stop):
        i = rows[j]
        g = gh[j - start, 0]
        h = gh[j - start, 1]
        for f in range(f_lo, f_hi):
            c = codes[i, f]
            hist[f, c, GRAD] += g
            hist[f, c, HESS] += h
            hist[f, c, COUNT] += 1.0


@njit(cache=True, parallel=True)
def _accumulate_parallel(rows, start, stop, codes, gh, hist, n_blocks):
    # Threads own disjoint feature blocks: every (feature, code) cell is still summed in row
    # order, so the result is the sequential one, whatever the number of threads.
    D = codes.shape[1]
    for block in prange(n_blocks):
        _accumulate(rows, start, stop, codes, gh, hist, block * D // n_blocks, (block + 1) * D // n_blocks)


@njit(cache=True)
def node_histogram(rows, start, stop, r, s, codes, p, pc, y, w, weighted, first_order, hist, gh, n_threads):
    """hist[f, code, :] = sums of (w g, w h, 1) of the node's rows, per feature and code
    ((w g, w, 1) with first_order).

    gh is scratch of shape (>= stop - start, 2).
    """
    hist[:] = 0.0
    D = codes.shape[1]
    _node_channels(rows, start, stop, r, s, p, pc, y, w, weighted, first_order, gh)
    if n_threads > 1 and (stop - start) * D >= PARALLEL_CELLS:
        _accumulate_parallel(rows, start, stop, codes, gh, hist, min(n_threads, D))
    else:
        _accumulate(rows, start, stop, codes, gh, hist, 0, D)


@njit(cache=True)
def _hguard(H):
    return 1.0 if H == 0.0 else H


@njit(cache=True)
def _gain(GL, HL, GR, HR, parent):
    """losses.split_gain, the same operations in the same order (noise-level gains are 0)."""
    left = GL * GL / (2.0 * _hguard(HL))
    right = GR * GR / (2.0 * _hguard(HR))
    gain = left + right - parent
    return gain if gain > GAIN_NOISE * (left + right + parent) else 0.0


@njit(cache=True)
def best_split(hist, min_samples_leaf, sums, prefix, suffix, cand_gain, cand_at):
    """Best split of one node by eq (30), as backends.numpy.best_splits does it.

    Fills sums (the node totals, from feature 0's bins). prefix / suffix are scratch arrays of
    shape (n_codes, 3); cand_gain (float64) and cand_at (int64) of length >= 2 D (n_codes - 1).
    Returns (gain, feature, bin, missing_left); gain -inf when no split. Gains within
    SPLIT_TIE (relative) of the largest are ties: the first candidate wins.

    Candidates are scanned once, in the reference's order (feature, bin, missing right then
    left), and their gains stored for the tie rule. A value bin b > 0 that holds no row of the
    node is skipped: its prefix and suffix sums are those of bin b - 1 (adding an empty bin
    adds 0.0), so its gains equal the earlier candidate's and can never be the first best.
    """
    D, W, _ = hist.shape
    nb = W - 1
    for c in range(3):
        t = 0.0
        for b in range(W):
            t += hist[0, b, c]
        sums[c] = t
    G = sums[GRAD]
    H = sums[HESS]
    n = sums[COUNT]
    parent = G * G / (2.0 * _hguard(H))
    top = -np.inf
    m = 0
    for f in range(D):
        acc_g = 0.0
        acc_h = 0.0
        acc_c = 0.0
        for b in range(nb):
            acc_g += hist[f, b, GRAD]
            acc_h += hist[f, b, HESS]
            acc_c += hist[f, b, COUNT]
            prefix[b, GRAD] = acc_g
            prefix[b, HESS] = acc_h
            prefix[b, COUNT] = acc_c
        acc_g = 0.0
        acc_h = 0.0
        acc_c = 0.0
        suffix[nb - 1, GRAD] = 0.0
        suffix[nb - 1, HESS] = 0.0
        suffix[nb - 1, COUNT] = 0.0
        for b in range(nb - 1, 0, -1):
            acc_g += hist[f, b, GRAD]
            acc_h += hist[f, b, HESS]
            acc_c += hist[f, b, COUNT]
            suffix[b - 1, GRAD] = acc_g
            suffix[b - 1, HESS] = acc_h
            suffix[b - 1, COUNT] = acc_c
        mg = hist[f, nb, GRAD]
        mh = hist[f, nb, HESS]
        mc = hist[f, nb, COUNT]
        for b in range(nb):
            if b > 0 and hist[f, b, COUNT] == 0.0:
                continue
            # missing values right
            gain = -np.inf
            if prefix[b, COUNT] >= min_samples_leaf and suffix[b, COUNT] + mc >= min_samples_leaf:
                gain = _gain(prefix[b, GRAD], prefix[b, HESS], suffix[b, GRAD] + mg, suffix[b, HESS] + mh,
                             parent)
            cand_gain[m] = gain
            cand_at[m] = (f * nb + b) * 2
            m += 1
            if gain > top:
                top = gain
            if mc == 0:  # this feature has no missing values in the node: no missing-left candidate
                continue
            gain = -np.inf
            if prefix[b, COUNT] + mc >= min_samples_leaf and suffix[b, COUNT] >= min_samples_leaf:
                gain = _gain(prefix[b, GRAD] + mg, prefix[b, HESS] + mh, suffix[b, GRAD], suffix[b, HESS],
                             parent)
            cand_gain[m] = gain
            cand_at[m] = (f * nb + b) * 2 + 1
            m += 1
            if gain > top:
                top = gain
    if not np.isfinite(top):
        return top, 0, 0, False
    threshold = top - SPLIT_TIE * abs(top)
    at = 0
    best_gain = top
    for j in range(m):
        if cand_gain[j] >= threshold:
            best_gain = cand_gain[j]
            at = cand_at[j]
            break
    best_dir = at % 2
    best_b = (at // 2) % nb
    best_f = at // 2 // nb
    if hist[best_f, nb, COUNT] > 0:  # the chosen feature has missing values in the node
        missing_left = best_dir == 1
    else:
        left_rows = 0.0
        for b in range(best_b + 1):
            left_rows += hist[best_f, b, COUNT]
        missing_left = left_rows >= n - left_rows
    return best_gain, best_f, best_b, missing_left


@njit(cache=True)
def partition(rows, start, stop, codes, feature, bin_, missing_left, missing_code, scratch):
    """Stable partition of rows[start:stop] into [left | right]; returns the left count."""
    n_left = 0
    n_right = 0
    for j in range(start, stop):
        i = rows[j]
        c = codes[i, feature]
        left = missing_left if c == missing_code else c <= bin_
        if left:
            rows[start + n_left] = i
            n_left += 1
        else:
            scratch[n_right] = i
            n_right += 1
    for k in range(n_right):
        rows[start + n_left + k] = scratch[k]
    return n_left


@njit(cache=True)
def update_scores(F, rows, seg_start, seg_stop, deltas):
    """F[rows of leaf j] += deltas[j] for each leaf segment."""
    K = F.shape[1]
    for j in range(seg_start.shape[0]):
        for q in range(seg_start[j], seg_stop[j]):
            i = rows[q]
            for k in range(K):
                F[i, k] += deltas[j, k]


@njit(cache=True)
def grow_tree(codes, y, w, weighted, p, pc, rows, n_codes, max_leaves, min_samples_leaf,
              rule_eq32, n_threads, fixed_r, fixed_s, first_order):
    """Grow one tree best-first, as grower.TreeGrower does with the NumPy backend.

    fixed_r < 0: every node picks its pair (AOSO); else the tree's pair is (fixed_r, fixed_s).

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

    hist = np.empty((D, n_codes, 3))
    prefix = np.empty((n_codes, 3))
    suffix = np.empty((n_codes, 3))
    cand_gain = np.empty(2 * D * n_codes)
    cand_at = np.empty(2 * D * n_codes, np.int64)
    G = np.empty(K)
    Hd = np.empty(K)
    C = np.empty(K)
    scratch = np.empty(N, rows.dtype)
    gh = np.empty((N, 2))

    for j in range(N):
        rows[j] = j
    start[0] = 0
    stop[0] = N
    n_nodes = 1
    n_leaves = 1
    # evaluate the root
    todo_first = 0
    todo_last = 1
    while True:
        can_grow = n_leaves < max_leaves
        for node in range(todo_first, todo_last):
            if fixed_r < 0:
                r, s = node_pair(rows, start[node], stop[node], p, pc, y, w, weighted, rule_eq32, G, Hd, C,
                                 n_threads)
            else:
                r, s = fixed_r, fixed_s
            pair[node, 0] = r
            pair[node, 1] = s
            if can_grow and stop[node] - start[node] >= 2 * min_samples_leaf:
                node_histogram(rows, start[node], stop[node], r, s, codes, p, pc, y, w, weighted, first_order,
                               hist, gh, n_threads)
                g, f, b, ml = best_split(hist, min_samples_leaf, sums[node], prefix, suffix, cand_gain, cand_at)
                if g > 0.0:
                    split_gain[node] = g
                    feature[node] = f
                    bin_[node] = b
                    missing_left[node] = ml
            else:
                node_sums(rows, start[node], stop[node], r, s, p, pc, y, w, weighted, sums[node])
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
        todo_first = lo
        todo_last = lo + 2
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


@njit(cache=True)
def apply_tree(codes, feature, bin_, missing_left, left, right, missing_code, out):
    """out[i] = leaf id of row i."""
    for i in range(codes.shape[0]):
        node = 0
        while feature[node] >= 0:
            c = codes[i, feature[node]]
            go_left = missing_left[node] if c == missing_code else c <= bin_[node]
            node = left[node] if go_left else right[node]
        out[i] = node
