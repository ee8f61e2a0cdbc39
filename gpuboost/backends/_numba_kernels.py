"""numba.cuda kernels of the CUDA backend: the element-wise stages.

The per-sample probabilities with the training loss, and the update of F from the leaf
segments of a grown tree. They run once per tree (the per-node stages are CUDA C++ in
``kernels/aoso.cu``), and under ``NUMBA_ENABLE_CUDASIM=1`` they run on the CPU, which is how CI
tests them without a GPU (tests/test_numba_kernels.py).

Imported by ``gpuboost.backends.cuda`` only, never by ``import gpuboost``.
"""

from __future__ import annotations

import math

from numba import cuda

__all__ = ["softmax_rows", "add_leaf_deltas", "THREADS"]

THREADS = 256


@cuda.jit
def softmax_rows(F, y, w, weighted, p, pc, loss):
    """p = softmax(F), pc = 1 - p (accurate where p rounds to 1), and each row's loss
    ``w_i (log sum_k exp F_ik - F_{i,y_i})``: the operations of ``losses.softmax_with_loss``
    (exp of F - rowmax, the non-maximal exponentials summed in class order)."""
    n = F.shape[0]
    K = F.shape[1]
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        top = 0
        for k in range(1, K):
            if F[i, k] > F[i, top]:
                top = k
        m = F[i, top]
        rest = 0.0
        for k in range(K):
            e = math.exp(F[i, k] - m)
            p[i, k] = e
            if k != top:
                rest += e
        norm = 1.0 + rest
        for k in range(K):
            p[i, k] = p[i, k] / norm
            pc[i, k] = 1.0 - p[i, k]
        p[i, top] = 1.0 / norm
        pc[i, top] = rest / norm
        value = (m - F[i, y[i]]) + math.log1p(rest)
        loss[i] = value * w[i] if weighted else value
        i += stride


@cuda.jit
def add_leaf_deltas(F, rows, seg_start, seg_stop, deltas):
    """``F[rows[j]] += deltas[leaf]`` for every position j of every leaf's segment.

    Grid: (blocks over positions, leaves). Each row is in one leaf, so no two threads write
    the same element of F.
    """
    leaf = cuda.blockIdx.y
    start = seg_start[leaf]
    stop = seg_stop[leaf]
    K = F.shape[1]
    j = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.gridDim.x * cuda.blockDim.x
    while j < stop:
        i = rows[j]
        for k in range(K):
            F[i, k] += deltas[leaf, k]
        j += stride
