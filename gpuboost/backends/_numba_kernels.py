"""numba.cuda kernels of the CUDA backend: the update of F from a grown tree's leaf segments.

It runs once per tree (the per-node stages, and p with the loss, are CUDA C++ in
``kernels/aoso.cu``), and under ``NUMBA_ENABLE_CUDASIM=1`` it runs on the CPU, which is how CI
tests it without a GPU (tests/test_numba_kernels.py).

Imported by ``gpuboost.backends.cuda`` only, never by ``import gpuboost``.
"""

from __future__ import annotations

from numba import cuda

__all__ = ["add_leaf_deltas", "THREADS"]

THREADS = 256


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
