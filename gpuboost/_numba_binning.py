"""The compiled search of ``BinMapper.transform``: each value's bin code.

A value's code is the number of its feature's edges below it (``numpy.searchsorted(edges, x,
side="left")``), or the missing code for NaN. NumPy's search branches on every comparison, and
a comparison with values in no order is mispredicted half the time: 65-80 ns a value on the
2-core machines. Here a search is a fixed number of steps for its feature (the number of its
edges decides them, not the value), each step a comparison that picks the next base by a select
that LLVM is told not to turn back into a branch, and eight rows of a feature are searched in
lockstep, so that their steps overlap instead of waiting for each other's loads (one value at a
time: 26 ns a value; eight: 9, on 255 edges). The rows are searched in tiles, so that a tile's
values and its features' edges stay in the core's caches whatever the order of X.

Imported by ``gpuboost.binning`` on a host transform (``import gpuboost`` does not import
numba); compiled on first use and cached (``cache=True``), as the training kernels.
"""

from __future__ import annotations

from numba import njit, types
from numba.extending import intrinsic

from ._numba_cache import ensure_cache, lock_cache_files

ensure_cache(__file__)

#: A tile is this many rows by this many features: 256 x 32 float64 values are 64 KiB of X, and
#: 32 features of 255 edges 64 KiB of edges (a core's L2 holds both)
TILE_ROWS = 256
TILE_FEATURES = 32


@intrinsic
def _step(typingctx, base, half, edge, x):
    """``base + half if edge < x else base`` (false for NaN), as an LLVM select marked
    unpredictable: LLVM otherwise compiles it as a branch, mispredicted as often as NumPy's."""
    sig = types.int64(types.int64, types.int64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        base, half, edge, x = args
        below = builder.fcmp_ordered("<", edge, x)
        chosen = builder.select(below, builder.add(base, half), base)
        chosen.set_metadata("unpredictable", builder.module.add_metadata([]))
        return chosen

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def _code(edges, first, base, x, missing):
    """The code of x whose search ended at base: base's edge below x adds one; NaN is missing."""
    code = base - first + (1 if edges[base] < x else 0)
    return missing if x != x else code


@njit(cache=True, nogil=True)
def bin_rows(X, lo, hi, edges, starts, counts, missing, out):
    """out[i, f] = the code of X[i, f] for the rows lo..hi-1 of X (float64 or float32, any
    order): the number of feature f's edges (``edges[starts[f]:starts[f] + counts[f]]``,
    increasing) below the value, or ``missing`` for NaN. A feature without edges has code 0.
    A search reads only its feature's edges (base + n stays at most first + counts[f])."""
    n_features = X.shape[1]
    for f0 in range(0, n_features, TILE_FEATURES):
        f1 = min(f0 + TILE_FEATURES, n_features)
        for i0 in range(lo, hi, TILE_ROWS):
            i1 = min(i0 + TILE_ROWS, hi)
            for f in range(f0, f1):
                first = starts[f]
                count = counts[f]
                if count == 0:
                    for i in range(i0, i1):
                        out[i, f] = missing if X[i, f] != X[i, f] else 0
                    continue
                i = i0
                while i + 8 <= i1:  # eight rows in lockstep (the module's note)
                    x0 = float(X[i, f])
                    x1 = float(X[i + 1, f])
                    x2 = float(X[i + 2, f])
                    x3 = float(X[i + 3, f])
                    x4 = float(X[i + 4, f])
                    x5 = float(X[i + 5, f])
                    x6 = float(X[i + 6, f])
                    x7 = float(X[i + 7, f])
                    b0 = b1 = b2 = b3 = b4 = b5 = b6 = b7 = first
                    n = count
                    while n > 1:
                        half = n >> 1
                        b0 = _step(b0, half, edges[b0 + half], x0)
                        b1 = _step(b1, half, edges[b1 + half], x1)
                        b2 = _step(b2, half, edges[b2 + half], x2)
                        b3 = _step(b3, half, edges[b3 + half], x3)
                        b4 = _step(b4, half, edges[b4 + half], x4)
                        b5 = _step(b5, half, edges[b5 + half], x5)
                        b6 = _step(b6, half, edges[b6 + half], x6)
                        b7 = _step(b7, half, edges[b7 + half], x7)
                        n -= half
                    out[i, f] = _code(edges, first, b0, x0, missing)
                    out[i + 1, f] = _code(edges, first, b1, x1, missing)
                    out[i + 2, f] = _code(edges, first, b2, x2, missing)
                    out[i + 3, f] = _code(edges, first, b3, x3, missing)
                    out[i + 4, f] = _code(edges, first, b4, x4, missing)
                    out[i + 5, f] = _code(edges, first, b5, x5, missing)
                    out[i + 6, f] = _code(edges, first, b6, x6, missing)
                    out[i + 7, f] = _code(edges, first, b7, x7, missing)
                    i += 8
                for i in range(i, i1):
                    x = float(X[i, f])
                    b = first
                    n = count
                    while n > 1:
                        half = n >> 1
                        b = _step(b, half, edges[b + half], x)
                        n -= half
                    out[i, f] = _code(edges, first, b, x, missing)


lock_cache_files(globals())  # (after the last kernel: saves and loads of the cache under its lock)
