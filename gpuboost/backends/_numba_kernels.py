"""numba.cuda kernels of the CUDA backend: each row's leaf in the tree just grown.

``mark_leaves`` runs once per tree; the addition of the leaf vectors to F happens in the next
pass over F, which also computes p and the loss (``softmax_loss`` in ``kernels/aoso.cu``), so
F is read and written once per tree, in row order. Under ``NUMBA_ENABLE_CUDASIM=1`` the kernel
runs on the CPU, which is how CI tests it without a GPU (tests/test_numba_kernels.py).

Imported by ``gpuboost.backends.cuda`` only, never by ``import gpuboost``.
"""

from __future__ import annotations

from numba import cuda

__all__ = ["mark_leaves", "THREADS"]

THREADS = 256


@cuda.jit
def mark_leaves(leaf_of, rows, seg_start, seg_stop, child, n_segments):
    """``leaf_of[rows[j]] = leaf`` for every position j of the segment of every leaf, for the
    first ``n_segments`` segments (the arrays may be longer).

    Grid: (blocks over positions, blocks over segments): block y takes segments y, y +
    gridDim.y, ..., so a grid's y size (at most 65535) need not reach the number of segments
    (2 max_leaves - 1 nodes). Segment ``leaf`` is skipped where ``child[2 * leaf] >= 0``: given a
    tree's node table (``nstart``, ``nstop``, ``nchild``), the inner nodes are skipped and every
    row gets the id of its leaf node; given leaf segments, ``child`` holds -1. Each row is in one
    leaf, so no two threads write the same element.
    """
    leaf = cuda.blockIdx.y
    stride = cuda.gridDim.x * cuda.blockDim.x
    while leaf < n_segments:
        if child[2 * leaf] < 0:
            j = seg_start[leaf] + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            stop = seg_stop[leaf]
            while j < stop:
                leaf_of[rows[j]] = leaf
                j += stride
        leaf += cuda.gridDim.y
