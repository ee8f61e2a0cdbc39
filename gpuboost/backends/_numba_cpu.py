"""numba kernels of the compiled CPU backend (``cpu.py``): the stages, and a whole tree.

Each stage is the NumPy reference's formula written as loops, so that the tests can hold
every kernel to its NumPy twin; ``grow_tree`` composes them and runs the grower's best-first
logic for a whole tree in one compiled call (Python overhead per node would otherwise
dominate small data).

The kernels that call each other live in this one file: numba's on-disk cache (``cache=True``)
is keyed on the defining file, so a caller in another file would keep a stale copy of a
changed callee (or of a changed constant such as PARALLEL_CELLS).

Arithmetic notes. Sums are float64 and sequential in row order within a node (the histogram
and cross sums of a node of HALVES_ROWS rows or more: within each half, the halves then
added, as the NumPy reference defines them), so the result does not depend on the number of
threads. The one exception is the class sums that only pick a node's pair: a larger child's
are its parent's minus its sibling's, and two threads may sum a node's by halves; such a pair
is used only where rounding bounds prove it is the one the sequential sums give (see "class
sums of the larger child by subtraction"). Histograms of a split's larger child with its
parent's pair are differences, the parent's minus the smaller child's, as the reference's grower
takes them (base.derived_histogram; grow_tree keeps the histograms it subtracts from).
Histograms are laid out like the reference's:
``hist[feature, code, channel]``, the missing code last, channels (w g, w h, count); the
whole-tree ones have a fourth channel, 0 (LANES).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

from gpuboost._numba_cache import ensure_cache, lock_cache_files  # (absolute: the benchmarks and tests compile copies of this file)

ensure_cache(__file__)  # (before the first @njit(cache=True): where numba could not cache, none could be defined)

# Channels, as in base.py
GRAD, HESS, COUNT = 0, 1, 2
GAIN_NOISE = 8 * np.finfo(np.float64).eps  # as losses.GAIN_NOISE
SPLIT_TIE = 1e-10  # as losses.SPLIT_TIE
Z_MAX = 4.0  # as losses.Z_MAX

#: A node of at least this many rows has the sum of its two halves' cross sums, and from
#: _hist_halves_rows(n_codes) rows the sum of its two halves' histograms (as base.HALVES_ROWS
#: and base.hist_halves_rows; a test holds them equal): two threads sum a half each. (NumPy
#: integers: _share takes one as an argument, and numba would compile it again for each
#: Python int constant.)
HALVES_ROWS = np.int64(4096)
HIST_HALVES_MIN = np.int64(256)
HIST_HALVES_PER_CODE = np.int64(40)

#: The whole-tree histograms have a fourth channel, always 0, so that a row's three additions
#: to a bin are one 4-wide vector addition (_add_to_bin).
LANES = 4

#: The staged histogram (node_histogram, for the tests' stage-by-stage comparisons) is split
#: between the threads by features from this many (row, feature) cells.
PARALLEL_CELLS = 1 << 20

#: The two children of a split run on two threads (one each, all their passes in one parallel
#: region) from this many (row, class + feature) cells of the pair. (1 << 11 against 1 << 14:
#: grow_tree 2.2% faster on pendigits and optdigits, letter and covertype290k unchanged, in
#: alternated rounds in one process, 2026-11-26; 0, every split on two threads, 0.1%.)
SIBLING_CELLS = 1 << 11

#: Where a split's children go to two threads, the smaller child's class sums are summed by
#: halves on the two from this many (row, class) cells; below, on one (exact sums, whose pair
#: needs no check). (1 << 12 against every such child by halves: grow_tree 1.5-2.2% faster on
#: pendigits and optdigits, letter 0.4%, in alternated rounds in one process, 2026-11-26.)
SPLIT_SUMS_CELLS = 1 << 12

#: A histogram (the root's) is split between the threads by features from this many
#: (row, feature) cells.
HISTOGRAM_CELLS = 1 << 16

#: _histogram_block's with_sparse where a block has the sparse features (a NumPy boolean: numba
#: compiles a kernel again for each literal bool)
WITH_SPARSE = np.bool_(True)
#: _batch_class_stats' with_cross outside the stage BATCH (the stage CROSS follows there)
NO_CROSS = np.bool_(False)

#: A node of this many rows or more is partitioned by two threads (partition_halves), where
#: there are two. From 4096 rather than 32768 (2026-11-26, ab_grow_tree.py, the same trees,
#: median B/A of 40 alternated rounds): letter 0.957 and 0.958 (8192: 0.952, 0.938), pendigits
#: 0.998 and 1.013, covertype290k 1.007 (12 rounds of 3 trees). While one thread partitions,
#: the other waits: on letter the partition was 6% of the first thread's time in a sampled
#: profile (perf).
PARTITION_HALVES_ROWS = 1 << 12

#: set_scores splits its rows between the threads from this many (row, class) scores.
PARALLEL_SCORES = 1 << 16


@njit(cache=True)
def _hist_halves_rows(n_codes):
    """base.hist_halves_rows: the fewest rows of a node whose histogram is its halves' sum."""
    return max(HIST_HALVES_MIN, HIST_HALVES_PER_CODE * n_codes)


#: As base.DERIVE_MAX_BYTES (a test holds them equal)
DERIVE_MAX_BYTES = np.int64(1 << 28)


@njit(cache=True)
def _derivable(max_leaves, n_features, n_codes):
    """base.histograms_derivable for grow_tree's histograms (a pair of LANES channels a bin)."""
    return (max_leaves + 1) * n_features * n_codes * (2 * LANES) * 8 <= DERIVE_MAX_BYTES


# -- float64 vectors in registers ----------------------------------------------------------
# The per-class passes (class sums, cross sums) add a row's K values to K accumulators.
# Written as loops over k into arrays, numba leaves them scalar, the accumulators in memory:
# each row's addition waits for the last row's store (about 10 cycles a row and class block).
# _F64x8 is a numba type whose values are LLVM <VW x double> vectors, so a pass keeps its
# accumulators in registers and adds VW classes in one instruction (best_split computes VW
# candidates' gains with them too).
# Each lane is its own IEEE operation, with no contraction into fused multiply-adds (the
# intrinsics emit plain fmul / fadd / fsub / fdiv): every sum is the scalar loop's, term for
# term and in row order, whatever VW. Loads and stores are masked to the lanes that exist (a
# block's last vector may hold fewer than VW classes), so nothing outside an array is read or
# written.


def _has_avx512():
    """Whether numba compiles for AVX-512 here: its CPU features (NUMBA_CPU_FEATURES, else the
    host's, as numba's codegen takes them) include AVX-512F."""
    features = numba.config.CPU_FEATURES
    if features is None:
        try:
            from numba.core.codegen import get_host_cpu_features
        except ImportError:  # (a numba without it: LLVM's own reading of the host)
            from llvmlite.binding import get_host_cpu_features as llvm_features

            def get_host_cpu_features():
                return llvm_features().flatten()

        features = get_host_cpu_features()
    return "+avx512f" in str(features).split(",")


#: Lanes of a vector: 8 (one 512-bit register) with AVX-512, else 4 (one AVX2 register). With
#: AVX2's 16 registers, 8-lane vectors take two each, and the scoring pass's accumulators and
#: temporaries spilled to the stack on every row. On an AMD EPYC whose host hides AVX-512, 4
#: lanes made whole fits 0.87-0.99x (ab_fit.py, pendigits and letter, 2026-11-27: about even
#: where the host was fast, faster where it was slow; docs/benchmarks.md). numba's cache is keyed
#: by the CPU features too (its codegen's magic tuple), so a cached kernel has this VW.
VW = 8 if _has_avx512() else 4
#: Vectors of accumulators a class pass keeps in registers: a pass covers VW * VBLOCK classes,
#: more classes take more passes over the rows, but the last two blocks share one pass (2 VBLOCK
#: vectors of accumulators, some of which spill at 4 lanes: letter's 26 classes, grow_tree 0.98x
#: against two passes, 2026-11-27). (The passes, _vload_block and _vstore_block are written
#: out for four vectors: changing it means changing them.)
VBLOCK = 4


class _F64x8Type(types.Type):
    def __init__(self):
        super().__init__(name="F64x8")


F64X8 = _F64x8Type()
_VEC = ir.VectorType(ir.DoubleType(), VW)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


@register_model(_F64x8Type)
class _F64x8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VEC)


def _splat(builder, value, vector_type):
    v = builder.insert_element(ir.Constant(vector_type, ir.Undefined), value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(_I32, VW), [0] * VW))


def _lane_mask(builder, n):
    """<VW x i1>: lane < n."""
    lanes = ir.Constant(ir.VectorType(_I64, VW), list(range(VW)))
    return builder.icmp_signed("<", lanes, _splat(builder, n, ir.VectorType(_I64, VW)))


def _masked(builder, op):
    """llvm.masked.load / llvm.masked.store of <VW x double> (typed-pointer names, which LLVM
    versions with opaque pointers upgrade)."""
    mask = ir.VectorType(ir.IntType(1), VW)
    if op == "load":
        fnty = ir.FunctionType(_VEC, [_VEC.as_pointer(), _I32, mask, _VEC])
    else:
        fnty = ir.FunctionType(ir.VoidType(), [_VEC, _VEC.as_pointer(), _I32, mask])
    return cgutils.get_or_insert_function(builder.module, fnty, f"llvm.masked.{op}.v{VW}f64.p0v{VW}f64")


def _element_pointer(context, builder, arr_type, arr, index):
    """A pointer to element `index` of a C-contiguous array's flat data, as a vector pointer."""
    data = context.make_array(arr_type)(context, builder, arr).data
    return builder.bitcast(builder.gep(data, [index]), _VEC.as_pointer())


def _is_c_float64(arr, ndim):
    return isinstance(arr, types.Array) and arr.dtype == types.float64 and arr.layout == "C" and arr.ndim == ndim


@intrinsic
def _vsplat(typingctx, x):
    """A vector whose every lane is x."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return _splat(builder, args[0], _VEC)

    return F64X8(types.float64), codegen


def _vector_binary(op):
    def typer(typingctx, a, b):
        if a != F64X8 or b != F64X8:
            return None

        def codegen(context, builder, sig, args):
            return getattr(builder, op)(args[0], args[1])

        return F64X8(F64X8, F64X8), codegen

    typer.__name__ = f"_v{op[1:]}"
    typer.__doc__ = f"Lane by lane {op} (IEEE, no fast-math flags)."
    return intrinsic(typer)


_vadd = _vector_binary("fadd")
_vsub = _vector_binary("fsub")
_vmul = _vector_binary("fmul")
_vdiv = _vector_binary("fdiv")


def _lane_is(builder, lane):
    """<VW x i1>: lane index == lane (no lane where lane is outside 0..VW-1)."""
    lanes = ir.Constant(ir.VectorType(_I64, VW), list(range(VW)))
    return builder.icmp_signed("==", lanes, _splat(builder, lane, ir.VectorType(_I64, VW)))


@intrinsic
def _vset(typingctx, v, lane, x):
    """v with lane `lane` replaced by x (v itself where lane is outside 0..VW-1). A compare and
    a blend: an insertelement at a variable lane goes through the stack, and the vector load
    after the scalar store stalls."""
    if v != F64X8 or lane != types.int64 or x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.select(_lane_is(builder, args[1]), _splat(builder, args[2], _VEC), args[0])

    return F64X8(F64X8, types.int64, types.float64), codegen


@intrinsic
def _vpick(typingctx, v, lane, u):
    """v with lane `lane` taken from u (v itself where lane is outside 0..VW-1)."""
    if v != F64X8 or lane != types.int64 or u != F64X8:
        return None

    def codegen(context, builder, sig, args):
        return builder.select(_lane_is(builder, args[1]), args[2], args[0])

    return F64X8(F64X8, types.int64, F64X8), codegen


@intrinsic
def _vneg(typingctx, v):
    """-v lane by lane (the sign flipped, as Python's unary minus: -0.0 for 0.0)."""
    if v != F64X8:
        return None

    def codegen(context, builder, sig, args):
        return builder.fneg(args[0])

    return F64X8(F64X8), codegen


@intrinsic
def _vload(typingctx, arr, i, k0, n):
    """arr[i, k0:k0 + n] in the first n lanes (0 <= n <= VW; the others 0), of a C-contiguous
    2-d float64 array (a 1-d one with i = 0: arr[k0:k0 + n]): only those n elements are read."""
    if not (_is_c_float64(arr, 2) or _is_c_float64(arr, 1)):
        return None

    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], _flat_index(context, builder, sig, args))
        return builder.call(_masked(builder, "load"),
                            [ptr, ir.Constant(_I32, 8), _lane_mask(builder, args[3]), ir.Constant(_VEC, [0.0] * VW)])

    return F64X8(arr, types.int64, types.int64, types.int64), codegen


def _flat_index(context, builder, sig, args):
    """The flat index of arr[i, k0] (args: arr, i, k0, ...) of a C-contiguous array; k0 if 1-d."""
    if sig.args[0].ndim == 1:
        return args[2]
    a = context.make_array(sig.args[0])(context, builder, args[0])
    return builder.add(builder.mul(args[1], builder.extract_value(a.shape, 1)), args[2])


@intrinsic
def _vstore(typingctx, arr, i, k0, v, n):
    """arr[i, k0:k0 + n] = the first n lanes of v (0 <= n <= VW), a C-contiguous 2-d float64
    array; a 1-d one with i = 0: arr[k0:k0 + n]."""
    if not (_is_c_float64(arr, 2) or _is_c_float64(arr, 1)) or v != F64X8:
        return None

    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], _flat_index(context, builder, sig, args))
        builder.call(_masked(builder, "store"), [args[3], ptr, ir.Constant(_I32, 8), _lane_mask(builder, args[4])])
        return context.get_dummy_value()

    return types.void(arr, types.int64, types.int64, F64X8, types.int64), codegen


def _vector_select(op):
    def typer(typingctx, a, b, x, y):
        if not (a == b == x == y == F64X8):
            return None

        def codegen(context, builder, sig, args):
            return builder.select(builder.fcmp_ordered(op, args[0], args[1]), args[2], args[3])

        return F64X8(F64X8, F64X8, F64X8, F64X8), codegen

    typer.__name__ = "_vif_" + {">": "gt", ">=": "ge", "==": "eq"}[op]
    typer.__doc__ = f"Lane by lane: x where a {op} b (an ordered comparison: never where either is NaN), else y."
    return intrinsic(typer)


_vif_gt = _vector_select(">")
_vif_ge = _vector_select(">=")
_vif_eq = _vector_select("==")


@intrinsic
def _vfirst(typingctx, v, n, fill):
    """v in its first n lanes, fill in the others."""
    if v != F64X8 or n != types.int64 or fill != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.select(_lane_mask(builder, args[1]), args[0], _splat(builder, args[2], _VEC))

    return F64X8(F64X8, types.int64, types.float64), codegen


@intrinsic
def _vmax_lane(typingctx, v):
    """The largest lane of v (NaN lanes never win; -inf if all are NaN)."""
    if v != F64X8:
        return None

    def codegen(context, builder, sig, args):
        best = ir.Constant(ir.DoubleType(), float("-inf"))
        for lane in range(VW):
            x = builder.extract_element(args[0], ir.Constant(_I32, lane))
            best = builder.select(builder.fcmp_ordered(">", x, best), x, best)
        return best

    return types.float64(F64X8), codegen


@njit(cache=True, inline="always")
def _lanes(k0, k_hi):
    """The lanes of the vector that starts at class k0 of a block ending at k_hi (0 to VW)."""
    return min(max(k_hi - k0, 0), VW)


@njit(cache=True, inline="always")
def _vload_block(a, k0, k_end):
    """a[k0:k_end] of a 1-d array (at most VW * VBLOCK values) as VBLOCK vectors (0 past k_end)."""
    return (_vload(a, ZERO, k0, _lanes(k0, k_end)), _vload(a, ZERO, k0 + VW, _lanes(k0 + VW, k_end)),
            _vload(a, ZERO, k0 + 2 * VW, _lanes(k0 + 2 * VW, k_end)),
            _vload(a, ZERO, k0 + 3 * VW, _lanes(k0 + 3 * VW, k_end)))


@njit(cache=True, inline="always")
def _vstore_block(a, k0, k_end, v0, v1, v2, v3):
    """a[k0:k_end] = the VBLOCK vectors' lanes (the inverse of _vload_block)."""
    _vstore(a, ZERO, k0, v0, _lanes(k0, k_end))
    _vstore(a, ZERO, k0 + VW, v1, _lanes(k0 + VW, k_end))
    _vstore(a, ZERO, k0 + 2 * VW, v2, _lanes(k0 + 2 * VW, k_end))
    _vstore(a, ZERO, k0 + 3 * VW, v3, _lanes(k0 + 3 * VW, k_end))


def _unwrapped_pointer(context, builder, arr_type, arr, indices):
    """The address of arr's element at indices (llvm int64 values), for any layout, without
    the negative-index wraparound."""
    ary = context.make_array(arr_type)(context, builder, arr)
    return cgutils.get_item_pointer2(context, builder, ary.data, cgutils.unpack_tuple(builder, ary.shape),
                                     cgutils.unpack_tuple(builder, ary.strides), arr_type.layout, indices,
                                     wraparound=False)


def _unwrapped_load(context, builder, arr_type, arr, indices):
    """The element of arr at indices, as _unwrapped_pointer finds it."""
    return context.unpack_value(builder, arr_type.dtype, _unwrapped_pointer(context, builder, arr_type, arr, indices))


@intrinsic
def _at(typingctx, arr, i):
    """arr[i] of a 1-d array, without numba's negative-index wraparound (i >= 0 is the
    caller's; numba adds a compare and select to every index it cannot prove >= 0): for the
    per-row reads of the histogram, sums and partition passes and of the prediction's walk.
    With _at2 there, grow_tree was 9-10% faster on letter and pendigits, 8% on optdigits, the
    prediction 22% (2026-11-26)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)):
        return None
    sig = arr.dtype(arr, types.int64)

    def codegen(context, builder, signature, args):
        return _unwrapped_load(context, builder, signature.args[0], args[0], [args[1]])

    return sig, codegen


@intrinsic
def _at2(typingctx, arr, i, k):
    """arr[i, k] of a 2-d array, without the wraparound (i, k >= 0)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2
            and isinstance(i, types.Integer) and isinstance(k, types.Integer)):
        return None
    sig = arr.dtype(arr, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        return _unwrapped_load(context, builder, signature.args[0], args[0], [args[1], args[2]])

    return sig, codegen


@intrinsic
def _put(typingctx, arr, i, value):
    """arr[i] = value for a 1-d array, without the wraparound (i >= 0)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)):
        return None
    sig = types.void(arr, types.int64, arr.dtype)

    def codegen(context, builder, signature, args):
        arr_type = signature.args[0]
        at = _unwrapped_pointer(context, builder, arr_type, args[0], [args[1]])
        context.pack_value(builder, arr_type.dtype, args[2], at)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _atomic_add(typingctx, arr, i, value):
    """arr[i] += value as one sequentially consistent atomic operation (a full fence for both
    the compiler and the CPU); returns the old value. arr: a 1-d int64 array."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == types.int64):
        return None
    sig = types.int64(arr, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        at = _unwrapped_pointer(context, builder, signature.args[0], args[0], [args[1]])
        return builder.atomic_rmw("add", at, args[2], "seq_cst")

    return sig, codegen


@intrinsic
def _atomic_read(typingctx, arr, i):
    """arr[i] as a sequentially consistent atomic load (never kept in a register, and no
    memory access moves across it). arr: a 1-d int64 array."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == types.int64):
        return None
    sig = types.int64(arr, types.int64)

    def codegen(context, builder, signature, args):
        at = _unwrapped_pointer(context, builder, signature.args[0], args[0], [args[1]])
        return builder.load_atomic(at, "seq_cst", 8)

    return sig, codegen


@intrinsic
def _spin_pause(typingctx):
    """The CPU's spin-wait hint where it has one (x86's pause: a waiting loop leaves the other
    thread's core and the memory bus alone); nothing elsewhere."""
    def codegen(context, builder, signature, args):
        if builder.module.triple.startswith(("x86_64", "i386", "i686")):
            pause = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                   "llvm.x86.sse2.pause")
            builder.call(pause, [])
        return context.get_dummy_value()

    return types.void(), codegen


#: _barrier's int64 entries: the threads arrived (entry 0) and the barrier's generation (entry
#: BARRIER_GENERATION, a cache line further: the waiting thread reads it in a loop)
BARRIER_GENERATION = 8
BARRIER_SIZE = 16


@njit(cache=True)
def _barrier(bar):
    """Both threads of a two-thread region wait here for each other (bar: zeros(BARRIER_SIZE),
    shared): what either wrote before is then visible to the other. Only where the two run
    at the same time (_concurrent): a lone thread would wait for ever; and the stages between
    barriers must not raise (they do not: their only allocations are a few scratch arrays), or
    the thread left behind would wait for ever too."""
    generation = _atomic_read(bar, BARRIER_GENERATION)
    if _atomic_add(bar, ZERO, np.int64(1)) == 1:  # the second to arrive lets the first go
        _atomic_add(bar, ZERO, np.int64(-2))
        _atomic_add(bar, BARRIER_GENERATION, np.int64(1))
    else:
        while _atomic_read(bar, BARRIER_GENERATION) == generation:
            _spin_pause()


@njit(cache=True, parallel=True)
def _thread_ids(ids):
    for t in prange(2):
        ids[np.int64(t)] = numba.get_thread_id()


@njit(cache=True)
def _concurrent():
    """Whether a two-thread region here runs its two iterations on two threads at once (not
    where numba has one thread, or runs this region inside another one's)."""
    ids = np.full(2, -1, np.int64)
    _thread_ids(ids)
    return ids[0] != ids[1]


@njit(cache=True)
def _row_top(F, i):
    """Row i's largest score and its first class. Selects, not branches: which class is the
    largest is as unpredictable as the data (update_and_arguments 10-16% faster, pendigits and
    letter, 2026-11-26)."""
    m = F[i, 0]
    t = 0
    for k in range(1, F.shape[1]):
        v = F[i, k]
        larger = v > m
        t = k if larger else t
        m = v if larger else m
    return m, t


#: As losses.SHIFT_STEP (a test holds them equal)
SHIFT_STEP = 8.0


@njit(cache=True, inline="always")
def _shift(m):
    """losses.exponent_shift of a row maximum m: the exponentials' shift, m rounded down to a
    multiple of SHIFT_STEP (the same operations)."""
    return SHIFT_STEP * np.floor(m / SHIFT_STEP)


#: _row_arguments' flag (NumPy booleans: numba compiles a kernel again for each literal bool)
KEEP_LAST, DROP_LAST = np.bool_(True), np.bool_(False)


@njit(cache=True)
def _row_arguments(F, F_last, i, c, values, at, count, keep_last):
    """Every exponent argument of row i (its shift changed to c) from values[count]; keep_last:
    F_last[i] brought up to date. Returns the next count."""
    K = F.shape[1]
    for k in range(K):
        values[count] = F[i, k] - c
        at[count] = i * K + k
        count += 1
        if keep_last:
            F_last[i, k] = F[i, k]
    return count


@njit(cache=True)
def _exponent_arguments_rows(F, F_last, row_max, top, scored, values, at, y, margin, i_lo, i_hi):
    K = F.shape[1]
    count = i_lo * K  # this block's region of values and at
    for i in range(i_lo, i_hi):
        m, t = _row_top(F, i)
        top[i] = t
        margin[i] = m - F[i, y[i]]
        c = _shift(m)
        if not scored or c != _shift(row_max[i]):
            count = _row_arguments(F, F_last, i, c, values, at, count, KEEP_LAST)
        else:
            for k in range(K):
                if F[i, k] != F_last[i, k]:
                    values[count] = F[i, k] - c
                    at[count] = i * K + k
                    count += 1
                    F_last[i, k] = F[i, k]
        row_max[i] = m
    return count - i_lo * K


@njit(cache=True, parallel=True)
def exponent_arguments(F, F_last, row_max, top, scored, values, at, counts, y, margin):
    """The arguments of the exponentials that changed since the last scoring, by row blocks.

    ``E = exp(F - c)`` is kept between iterations (c: the row's shift, losses.exponent_shift
    of its maximum). An AOSO tree changes two classes of a row, so most of E stays valid: a
    row whose shift is unchanged needs exp only where its F changed, any other row all of its
    exponentials. Rows are split into len(counts) blocks (one per thread); block b, rows
    i_lo:i_hi (i_lo = b n // len(counts)), writes counts[b] entries at values[i_lo K:],
    at[i_lo K:]: F - c at those places, and their flat index i K + k (for ``np.exp`` and
    ``softmax_from_exponentials``). F_last and row_max (the F and row maxima of the last
    scoring) are brought up to date, top[i] is set to the first largest score's class and
    margin[i] to F_top - F_y (the loss's first term, here where the row's scores are read);
    scored False: nothing was scored yet, every exponential is new.

    Exponentials that are kept are the very values a full recomputation would give, since
    their arguments are bit for bit the same; rows are independent, so the blocks change
    nothing in the result.
    """
    n = F.shape[0]
    n_blocks = counts.shape[0]
    for block in prange(n_blocks):
        counts[block] = _exponent_arguments_rows(F, F_last, row_max, top, scored, values, at, y, margin,
                                                 block * n // n_blocks, (block + 1) * n // n_blocks)


@njit(cache=True)
def _leaves_of_rows(rows, seg_start, seg_stop, deltas, leaf_of, classes, n_changed):
    """leaf_of[i]: row i's leaf (-1 for rows in no segment); classes[j, :n_changed[j]]: the
    classes leaf j changes (its nonzero deltas)."""
    K = deltas.shape[1]
    for i in range(leaf_of.shape[0]):
        leaf_of[i] = -1
    for j in range(seg_start.shape[0]):
        m = 0
        for k in range(K):
            if deltas[j, k] != 0.0:
                classes[j, m] = k
                m += 1
        n_changed[j] = m
        for q in range(seg_start[j], seg_stop[j]):
            _put(leaf_of, _at(rows, q), j)


@njit(cache=True, parallel=True)
def update_and_arguments(F, rows, seg_start, seg_stop, deltas, leaf_of, row_max, top, values, at, counts, y,
                         margin):
    """update_scores and exponent_arguments in one pass, without comparing F with the last
    scored F: the scores that changed are the leaves' nonzero classes (a class whose score a
    tiny step left as it was is recomputed all the same: the same argument, the same
    exponential).

    F must be the array of the last scoring, unchanged since (row_max and top are its row
    maxima and first largest classes), which saves reading most of F: a row's new maximum is
    its old one or a changed score, unless the top class's score went down (then the row is
    scanned). The results are exponent_arguments' for the updated F, but exponent_arguments'
    copy of the last scored F is not kept up to date (n x K writes a tree): the caller's next
    exponent_arguments must rescore every exponential (scored False). margin and row blocks
    as in exponent_arguments.
    """
    n, K = F.shape
    n_leaves = seg_start.shape[0]
    classes = np.empty((n_leaves, K), np.int64)
    n_changed = np.empty(n_leaves, np.int64)
    _leaves_of_rows(rows, seg_start, seg_stop, deltas, leaf_of, classes, n_changed)
    n_blocks = counts.shape[0]
    for block in prange(n_blocks):
        i_lo = block * n // n_blocks
        i_hi = (block + 1) * n // n_blocks
        count = i_lo * K
        for i in range(i_lo, i_hi):  # (_at, _at2: reads without the index wraparound)
            j = _at(leaf_of, i)
            m = _at(row_max, i)
            t = _at(top, i)
            two = j >= 0 and _at(n_changed, j) == 2  # AOSO's leaf: its loops below written out for two
            k0 = k1 = 0
            v0 = v1 = 0.0
            if two:
                k0 = _at2(classes, j, 0)
                k1 = _at2(classes, j, 1)
                F[i, k0] += _at2(deltas, j, k0)
                F[i, k1] += _at2(deltas, j, k1)
                v0 = _at2(F, i, k0)
                v1 = _at2(F, i, k1)
                if ((k0 == t) & (v0 < m)) | ((k1 == t) & (v1 < m)):
                    m, t = _row_top(F, i)
                else:
                    passes = (v0 > m) | ((v0 == m) & (k0 < t))
                    t = k0 if passes else t
                    m = v0 if passes else m
                    passes = (v1 > m) | ((v1 == m) & (k1 < t))
                    t = k1 if passes else t
                    m = v1 if passes else m
            else:
                lowered = False  # the top class's score went down: the new maximum takes a scan
                if j >= 0:  # (selects and bitwise tests, not branches: as _row_top)
                    for c in range(_at(n_changed, j)):
                        k = _at2(classes, j, c)
                        F[i, k] += _at2(deltas, j, k)  # update_scores' addition
                        lowered |= (k == t) & (_at2(F, i, k) < m)
                if lowered:
                    m, t = _row_top(F, i)
                elif j >= 0:  # only the changed scores can pass the maximum (or equal it at a lower class)
                    for c in range(_at(n_changed, j)):
                        k = _at2(classes, j, c)
                        v = _at2(F, i, k)
                        passes = (v > m) | ((v == m) & (k < t))
                        t = k if passes else t
                        m = v if passes else m
            _put(top, i, t)
            _put(margin, i, m - _at2(F, i, _at(y, i)))
            shift = _shift(m)
            if shift != _shift(_at(row_max, i)):
                count = _row_arguments(F, F, i, shift, values, at, count, DROP_LAST)
            elif two:
                _put(values, count, v0 - shift)
                _put(at, count, i * K + k0)
                _put(values, count + 1, v1 - shift)
                _put(at, count + 1, i * K + k1)
                count += 2
            elif j >= 0:
                for c in range(_at(n_changed, j)):
                    k = _at2(classes, j, c)
                    _put(values, count, _at2(F, i, k) - shift)
                    _put(at, count, i * K + k)
                    count += 1
            _put(row_max, i, m)
        counts[block] = count - i_lo * K


@njit(cache=True, inline="always")
def _row_softmax_top(E, i, t, p):
    """Row i of p from its exponentials E = exp(F - c) (t: the top class): the others' sum r
    in class order, p = E / (E_t + r), as losses._softmax_parts computes them. Returns
    (r / E_t, r / (E_t + r)): the others' sum over the top's exponential (the loss's log1p
    argument) and 1 - p at t (pc elsewhere is 1 - p, which the kernels compute where they read
    it: writing it here was a third of the softmax pass's traffic)."""
    return _row_softmax_finish(E, i, t, _row_rest(E, i, t), p)


@njit(cache=True, inline="always")
def _row_rest(E, i, t):
    """The exponentials of row i but its top class t's, summed in class order."""
    r = 0.0
    for k in range(E.shape[1]):
        if k != t:
            r += E[i, k]
    return r


@njit(cache=True, inline="always")
def _row_softmax_finish(E, i, t, r, p):
    """_row_softmax_top of row i given r, the other exponentials' sum."""
    e_top = E[i, t]
    norm = e_top + r
    for k in range(E.shape[1]):
        p[i, k] = E[i, k] / norm
    return r / e_top, r / norm


#: softmax_from_exponentials sums four rows' exponentials at a time from this many classes
#: (_four_rows_rest): a row's sum is a chain of additions, and four chains in flight made
#: letter's (26 classes) pass 16.6% faster; pendigits' 10 were 10% slower (2026-11-26).
INTERLEAVED_CLASSES = 16


@njit(cache=True, inline="always")
def _four_rows_rest(E, i, top):
    """r of rows i .. i + 3 as _row_softmax_top sums them (the others' exponentials in class
    order), the four sums in one loop. Each row's top entry is 0.0 while it is summed (then
    put back), which adds nothing (r + 0.0 is r: every term is >= 0): the loop has no test."""
    t0, t1, t2, t3 = top[i], top[i + 1], top[i + 2], top[i + 3]
    e0, e1, e2, e3 = E[i, t0], E[i + 1, t1], E[i + 2, t2], E[i + 3, t3]
    E[i, t0] = 0.0
    E[i + 1, t1] = 0.0
    E[i + 2, t2] = 0.0
    E[i + 3, t3] = 0.0
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    for k in range(E.shape[1]):
        r0 += E[i, k]
        r1 += E[i + 1, k]
        r2 += E[i + 2, k]
        r3 += E[i + 3, k]
    E[i, t0] = e0
    E[i + 1, t1] = e1
    E[i + 2, t2] = e2
    E[i + 3, t3] = e3
    return r0, r1, r2, r3


@njit(cache=True, inline="always")
def _row_softmax(E, i, t, p, pc):
    """_row_softmax_top, and row i of pc: 1 - p, r / (E_t + r) at t. Returns r / E_t."""
    rest, pct = _row_softmax_top(E, i, t, p)
    for k in range(E.shape[1]):
        pc[i, k] = 1.0 - p[i, k]
    pc[i, t] = pct
    return rest


#: softmax_from_exponentials sums the root's class sums from the new p (the next tree's root,
#: see grow_tree's root_sums) where K is at most this many classes: its accumulators are
#: VBLOCK vectors in registers, as _class_block_sums'
ROOT_SUMS_CLASSES = VW * VBLOCK


@njit(cache=True, inline="always")
def _p_vector_terms(E, i, k0, n, nv, p, t, yi, pct_i, wv, weighted, g_acc, h_acc):
    """p[i, k0:k0 + n] = E / the row's norm (nv, every lane), and the accumulators plus those
    classes' terms of the class sums (_class_terms)."""
    a = _vdiv(_vload(E, i, k0, n), nv)
    _vstore(p, i, k0, a, n)
    g, h = _class_terms(a, k0, t, yi, pct_i, wv, weighted)
    return _vadd(g_acc, g), _vadd(h_acc, h)


@njit(cache=True, inline="always")
def _finish_with_terms(E, i, t, r, p, y, w, weighted, A, n0, n1, n2, n3, g0, g1, g2, g3, h0, h1, h2, h3):
    """_row_softmax_finish of row i (the same divisions, VW lanes at a time: the classes 0:K,
    K <= ROOT_SUMS_CLASSES), and the row's terms of the class sums added to the accumulators
    from those vectors, as _class_block_sums adds them (A_y into A). (Reading p back after
    the row's stores would stall: vector loads of scalar stores are not forwarded.)"""
    e_top = E[i, t]
    norm = e_top + r
    nv = _vsplat(norm)
    pct_i = r / norm
    yi = _at(y, i)
    wv = _vsplat(w[i]) if weighted else _vsplat(1.0)
    g0, h0 = _p_vector_terms(E, i, ZERO, n0, nv, p, t, yi, pct_i, wv, weighted, g0, h0)
    if n1 > 0:
        g1, h1 = _p_vector_terms(E, i, ZERO + VW, n1, nv, p, t, yi, pct_i, wv, weighted, g1, h1)
    if n2 > 0:
        g2, h2 = _p_vector_terms(E, i, ZERO + 2 * VW, n2, nv, p, t, yi, pct_i, wv, weighted, g2, h2)
    if n3 > 0:
        g3, h3 = _p_vector_terms(E, i, ZERO + 3 * VW, n3, nv, p, t, yi, pct_i, wv, weighted, g3, h3)
    by = pct_i if yi == t else 1.0 - E[i, yi] / norm  # 1 - p at the row's class
    A[yi] += w[i] * by if weighted else by
    return r / e_top, pct_i, g0, g1, g2, g3, h0, h1, h2, h3


@njit(cache=True)
def libm_exp_log1p(x, e, z, l):
    """e = exp(x) and l = log1p(z), one value at a time: the functions the kernels call (the C
    library's), for the backend to compare with NumPy's (see softmax_from_exponentials)."""
    for i in range(x.shape[0]):
        e[i] = math.exp(x[i])
    for i in range(z.shape[0]):
        l[i] = math.log1p(z[i])


#: As losses.PREDICTION_TIE (a test holds them equal)
PREDICTION_TIE = 1e-12


@njit(cache=True)
def eval_measures(F, y, per_sample):
    """An eval set's measures in one pass over F: per_sample[i] = row i's multinomial loss, as
    losses.multiclass_loss computes it (the exponentials exp(F - c) with c the row maximum's
    exponent shift, the others' sum in class order, (F_top - F_y) + log1p(rest / e_top)), and
    the number of rows whose predicted class (losses.predicted_class: the first score within
    PREDICTION_TIE x max(1, max |F|) of the maximum) is not y. The same values where math.exp
    and math.log1p are NumPy's (cpu.libm_matches_numpy). Returns -1 at a score that is not
    finite (NumPy's rules for NaN then: the caller's)."""
    n, K = F.shape
    errors = 0
    for i in range(n):
        top = 0
        m = F[i, 0]
        scale = 1.0
        for k in range(K):
            v = F[i, k]
            if not math.isfinite(v):
                return -1
            if v > m:
                m = v
                top = k
            scale = max(scale, abs(v))
        c = _shift(m)
        e_top = math.exp(F[i, top] - c)
        rest = 0.0
        for k in range(K):
            if k != top:
                rest += math.exp(F[i, k] - c)
        per_sample[i] = (F[i, top] - F[i, y[i]]) + math.log1p(rest / e_top)
        threshold = m - PREDICTION_TIE * scale
        predicted = 0
        while F[i, predicted] < threshold:
            predicted += 1
        errors += predicted != y[i]
    return errors


@njit(cache=True, parallel=True)
def softmax_from_exponentials(E, values, at, counts, p, pct, top, rest, y, w, weighted, root_sums, margin, libm):
    """p = softmax(F), and pct: 1 - p at each row's top class (see losses.softmax_with_loss; pc
    is 1 - p at the other classes), after E.flat[at] = exp(values).

    values, at and counts as exponent_arguments leaves them; top as exponent_arguments leaves
    it. Fills, per row, rest (the other exponentials' sum over the top's): the loss is
    margin + log1p(rest) (margin from exponent_arguments, which reads the row's scores; this
    pass reads none), times the row's weight where weighted, summed by the caller with NumPy's
    sum, as the reference does. Row blocks as in exponent_arguments.

    The exponentials and log1p must be the reference's (NumPy's) bit for bit. libm True: the
    caller has found NumPy's float64 exp and log1p to be the C library's (a scalar loop, as on
    CPUs without AVX-512: 8.2 ns a value on one thread), and this pass calls them itself, on
    every thread, as it scatters the exponentials and after the rows' sums: values holds the
    arguments, and margin becomes the rows' loss terms. libm False: values holds the
    exponentials (NumPy's, vectorised where NumPy has its own exp), and the caller adds
    log1p(rest) to margin.

    Where root_sums has a (3, K) entry for every block (K <= ROOT_SUMS_CLASSES), each block
    also sums its rows' class sums (G, Hd, A of node_class_sums, in row order, from the p just
    made) into root_sums[block]: the next tree's root has every row, and grow_tree takes its
    class sums from these instead of a pass over p.
    """
    n, K = E.shape
    flat = E.reshape(n * K)
    n_blocks = counts.shape[0]
    with_root = root_sums.shape[0] >= n_blocks and K <= ROOT_SUMS_CLASSES
    n0 = _lanes(ZERO, K)
    n1 = _lanes(ZERO + VW, K)
    n2 = _lanes(ZERO + 2 * VW, K)
    n3 = _lanes(ZERO + 3 * VW, K)
    for block in prange(n_blocks):
        i_lo = block * n // n_blocks
        i_hi = (block + 1) * n // n_blocks
        if libm:
            for j in range(i_lo * K, i_lo * K + counts[block]):
                flat[_at(at, j)] = math.exp(_at(values, j))
        else:
            for j in range(i_lo * K, i_lo * K + counts[block]):
                flat[_at(at, j)] = _at(values, j)
        A = np.zeros(K)  # the thread's own
        g0 = g1 = g2 = g3 = h0 = h1 = h2 = h3 = _vsplat(0.0)
        i = i_lo
        # each row's code inlined twice (four rows at a time, then the rest), not five times:
        # five copies made this kernel a third of a first fit's compilation (17 s of it)
        if K >= INTERLEAVED_CLASSES:
            while i + 4 <= i_hi:
                rest[i], rest[i + 1], rest[i + 2], rest[i + 3] = _four_rows_rest(E, i, top)
                for q in range(i, i + 4):  # (in row order: the class sums' terms are added in row order)
                    if with_root:
                        rest[q], pct[q], g0, g1, g2, g3, h0, h1, h2, h3 = _finish_with_terms(
                            E, q, top[q], rest[q], p, y, w, weighted, A, n0, n1, n2, n3, g0, g1, g2, g3, h0, h1, h2, h3)
                    else:
                        rest[q], pct[q] = _row_softmax_finish(E, q, top[q], rest[q], p)
                i += 4
        for q in range(i, i_hi):
            r = _row_rest(E, q, top[q])
            if with_root:
                rest[q], pct[q], g0, g1, g2, g3, h0, h1, h2, h3 = _finish_with_terms(
                    E, q, top[q], r, p, y, w, weighted, A, n0, n1, n2, n3, g0, g1, g2, g3, h0, h1, h2, h3)
            else:
                rest[q], pct[q] = _row_softmax_finish(E, q, top[q], r, p)
        if libm:  # the loss's terms, as the reference: (margin + log1p(rest)) * w
            for q in range(i_lo, i_hi):
                term = _at(margin, q) + math.log1p(_at(rest, q))
                _put(margin, q, term * w[q] if weighted else term)
        if with_root:
            _vstore_block(root_sums[block, 0], ZERO, K, g0, g1, g2, g3)
            _vstore_block(root_sums[block, 1], ZERO, K, h0, h1, h2, h3)
            for k in range(K):
                root_sums[block, 2, k] = A[k]


@njit(cache=True)
def _argmax_first(values):
    best = 0
    for k in range(1, values.shape[0]):
        if values[k] > values[best]:
            best = k
    return best


@njit(cache=True, inline="always")
def _class_terms(a, k0, ti, yi, pct, wv, weighted):
    """One row's terms of G and Hd for the classes k0:k0 + VW (a = p there): g = p, but -pc at
    the row's class; h = p pc, where pc = 1 - p but pct (the complement set_scores keeps) at
    the row's top class ti. Weighted: times the row's weight (wv, every lane)."""
    b = _vset(_vsub(_vsplat(1.0), a), ti - k0, pct)
    g = _vpick(a, yi - k0, _vneg(b))
    h = _vmul(a, b)
    if weighted:
        return _vmul(wv, g), _vmul(wv, h)
    return g, h


@njit(cache=True)
def _class_sums(rows, start, stop, p, pct, top, y, w, weighted, G, Hd, A, k_lo, k_hi):
    """G_k += sum w g_ik, Hd_k += sum w p_ik (1 - p_ik) over rows[start:stop] for the classes
    k_lo:k_hi, and A_k += sum |w g_ik| over the rows of class k (their own class's negative
    term: sum |w g_k| = G_k + 2 A_k), each in row order.

    pct[i] is row i's 1 - p at its top class, computed without cancellation (see
    softmax_from_exponentials); elsewhere 1 - p is computed here. The classes are summed VBLOCK
    vectors at a time (accumulators in registers), a pass over the rows for each VW * VBLOCK
    classes, the last two blocks in one pass (_two_class_blocks_sums).
    """
    for k0 in range(k_lo, k_hi, VW * VBLOCK):
        if VW * VBLOCK < k_hi - k0 <= 2 * VW * VBLOCK:
            _two_class_blocks_sums(rows, start, stop, p, pct, top, y, w, weighted, G, Hd, A, k0, k_hi, k0 == k_lo,
                                   k_lo, k_hi)
            break
        _class_block_sums(rows, start, stop, p, pct, top, y, w, weighted, G, Hd, A, k0, min(k_hi, k0 + VW * VBLOCK),
                          k0 == k_lo, k_lo, k_hi)


@njit(cache=True)
def _two_class_blocks_sums(rows, start, stop, p, pct, top, y, w, weighted, G, Hd, A, k0, k_end, with_a, k_lo, k_hi):
    """_class_block_sums of the classes k0:k_end (more than VW * VBLOCK, at most twice), in one
    pass over the rows: two blocks' accumulators. (Written out as _class_block_sums is: with the
    row's terms in a shared inline helper returning a block's eight vectors, grow_tree on letter
    took 1.19-1.31x as long, ab_grow_tree.py 2026-11-27.)"""
    kb = k0 + VW * VBLOCK
    n0 = _lanes(k0, kb)
    n1 = _lanes(k0 + VW, kb)
    n2 = _lanes(k0 + 2 * VW, kb)
    n3 = _lanes(k0 + 3 * VW, kb)
    n4 = _lanes(kb, k_end)
    n5 = _lanes(kb + VW, k_end)
    n6 = _lanes(kb + 2 * VW, k_end)
    n7 = _lanes(kb + 3 * VW, k_end)
    g0, g1, g2, g3 = _vload_block(G, k0, kb)
    h0, h1, h2, h3 = _vload_block(Hd, k0, kb)
    g4, g5, g6, g7 = _vload_block(G, kb, k_end)
    h4, h5, h6, h7 = _vload_block(Hd, kb, k_end)
    wv = _vsplat(1.0)
    for j in range(start, stop):
        i = _at(rows, j)
        yi = _at(y, i)
        ti = _at(top, i)
        pct_i = _at(pct, i)
        if weighted:
            wv = _vsplat(w[i])
        if with_a and k_lo <= yi < k_hi:
            by = pct_i if yi == ti else 1.0 - _at2(p, i, yi)
            A[yi] += w[i] * by if weighted else by
        g, h = _class_terms(_vload(p, i, k0, n0), k0, ti, yi, pct_i, wv, weighted)
        g0 = _vadd(g0, g)
        h0 = _vadd(h0, h)
        g, h = _class_terms(_vload(p, i, k0 + VW, n1), k0 + VW, ti, yi, pct_i, wv, weighted)
        g1 = _vadd(g1, g)
        h1 = _vadd(h1, h)
        g, h = _class_terms(_vload(p, i, k0 + 2 * VW, n2), k0 + 2 * VW, ti, yi, pct_i, wv, weighted)
        g2 = _vadd(g2, g)
        h2 = _vadd(h2, h)
        g, h = _class_terms(_vload(p, i, k0 + 3 * VW, n3), k0 + 3 * VW, ti, yi, pct_i, wv, weighted)
        g3 = _vadd(g3, g)
        h3 = _vadd(h3, h)
        g, h = _class_terms(_vload(p, i, kb, n4), kb, ti, yi, pct_i, wv, weighted)
        g4 = _vadd(g4, g)
        h4 = _vadd(h4, h)
        if n5 > 0:
            g, h = _class_terms(_vload(p, i, kb + VW, n5), kb + VW, ti, yi, pct_i, wv, weighted)
            g5 = _vadd(g5, g)
            h5 = _vadd(h5, h)
        if n6 > 0:
            g, h = _class_terms(_vload(p, i, kb + 2 * VW, n6), kb + 2 * VW, ti, yi, pct_i, wv, weighted)
            g6 = _vadd(g6, g)
            h6 = _vadd(h6, h)
        if n7 > 0:
            g, h = _class_terms(_vload(p, i, kb + 3 * VW, n7), kb + 3 * VW, ti, yi, pct_i, wv, weighted)
            g7 = _vadd(g7, g)
            h7 = _vadd(h7, h)
    _vstore_block(G, k0, kb, g0, g1, g2, g3)
    _vstore_block(Hd, k0, kb, h0, h1, h2, h3)
    _vstore_block(G, kb, k_end, g4, g5, g6, g7)
    _vstore_block(Hd, kb, k_end, h4, h5, h6, h7)


@njit(cache=True)
def _class_block_sums(rows, start, stop, p, pct, top, y, w, weighted, G, Hd, A, k0, k_end, with_a, k_lo, k_hi):
    """_class_sums of the classes k0:k_end (at most VW * VBLOCK); with_a: A too (of k_lo:k_hi)."""
    n0 = _lanes(k0, k_end)
    n1 = _lanes(k0 + VW, k_end)
    n2 = _lanes(k0 + 2 * VW, k_end)
    n3 = _lanes(k0 + 3 * VW, k_end)
    g0, g1, g2, g3 = _vload_block(G, k0, k_end)
    h0, h1, h2, h3 = _vload_block(Hd, k0, k_end)
    wv = _vsplat(1.0)
    for j in range(start, stop):
        i = _at(rows, j)
        yi = _at(y, i)
        ti = _at(top, i)
        pct_i = _at(pct, i)
        if weighted:
            wv = _vsplat(w[i])
        if with_a and k_lo <= yi < k_hi:
            by = pct_i if yi == ti else 1.0 - _at2(p, i, yi)
            A[yi] += w[i] * by if weighted else by
        g, h = _class_terms(_vload(p, i, k0, n0), k0, ti, yi, pct_i, wv, weighted)
        g0 = _vadd(g0, g)
        h0 = _vadd(h0, h)
        if n1 > 0:
            g, h = _class_terms(_vload(p, i, k0 + VW, n1), k0 + VW, ti, yi, pct_i, wv, weighted)
            g1 = _vadd(g1, g)
            h1 = _vadd(h1, h)
        if n2 > 0:
            g, h = _class_terms(_vload(p, i, k0 + 2 * VW, n2), k0 + 2 * VW, ti, yi, pct_i, wv, weighted)
            g2 = _vadd(g2, g)
            h2 = _vadd(h2, h)
        if n3 > 0:
            g, h = _class_terms(_vload(p, i, k0 + 3 * VW, n3), k0 + 3 * VW, ti, yi, pct_i, wv, weighted)
            g3 = _vadd(g3, g)
            h3 = _vadd(h3, h)
    _vstore_block(G, k0, k_end, g0, g1, g2, g3)
    _vstore_block(Hd, k0, k_end, h0, h1, h2, h3)


@njit(cache=True)
def _cross_sums(rows, start, stop, p, w, weighted, r, C, k_lo, k_hi):
    """C_k += sum w p_ir p_ik over rows[start:stop], classes k_lo:k_hi, in row order (vectors
    in registers, as _class_sums; as there, the last two blocks in one pass)."""
    for k0 in range(k_lo, k_hi, VW * VBLOCK):
        if VW * VBLOCK < k_hi - k0 <= 2 * VW * VBLOCK:
            _two_block_cross_sums(rows, start, stop, p, w, weighted, r, C, k0, k_hi)
            break
        k_end = min(k_hi, k0 + VW * VBLOCK)
        n0 = _lanes(k0, k_end)
        n1 = _lanes(k0 + VW, k_end)
        n2 = _lanes(k0 + 2 * VW, k_end)
        n3 = _lanes(k0 + 3 * VW, k_end)
        c0, c1, c2, c3 = _vload_block(C, k0, k_end)
        for j in range(start, stop):
            i = _at(rows, j)
            pr = _vsplat(w[i] * _at2(p, i, r) if weighted else _at2(p, i, r))
            c0 = _vadd(c0, _vmul(pr, _vload(p, i, k0, n0)))
            if n1 > 0:
                c1 = _vadd(c1, _vmul(pr, _vload(p, i, k0 + VW, n1)))
            if n2 > 0:
                c2 = _vadd(c2, _vmul(pr, _vload(p, i, k0 + 2 * VW, n2)))
            if n3 > 0:
                c3 = _vadd(c3, _vmul(pr, _vload(p, i, k0 + 3 * VW, n3)))
        _vstore_block(C, k0, k_end, c0, c1, c2, c3)


@njit(cache=True)
def _two_block_cross_sums(rows, start, stop, p, w, weighted, r, C, k0, k_end):
    """_cross_sums of the classes k0:k_end (more than VW * VBLOCK, at most twice) in one pass."""
    kb = k0 + VW * VBLOCK
    n4 = _lanes(kb, k_end)
    n5 = _lanes(kb + VW, k_end)
    n6 = _lanes(kb + 2 * VW, k_end)
    n7 = _lanes(kb + 3 * VW, k_end)
    c0, c1, c2, c3 = _vload_block(C, k0, kb)
    c4, c5, c6, c7 = _vload_block(C, kb, k_end)
    for j in range(start, stop):
        i = _at(rows, j)
        pr = _vsplat(w[i] * _at2(p, i, r) if weighted else _at2(p, i, r))
        c0 = _vadd(c0, _vmul(pr, _vload(p, i, k0, VW)))
        c1 = _vadd(c1, _vmul(pr, _vload(p, i, k0 + VW, VW)))
        c2 = _vadd(c2, _vmul(pr, _vload(p, i, k0 + 2 * VW, VW)))
        c3 = _vadd(c3, _vmul(pr, _vload(p, i, k0 + 3 * VW, VW)))
        c4 = _vadd(c4, _vmul(pr, _vload(p, i, kb, n4)))
        if n5 > 0:
            c5 = _vadd(c5, _vmul(pr, _vload(p, i, kb + VW, n5)))
        if n6 > 0:
            c6 = _vadd(c6, _vmul(pr, _vload(p, i, kb + 2 * VW, n6)))
        if n7 > 0:
            c7 = _vadd(c7, _vmul(pr, _vload(p, i, kb + 3 * VW, n7)))
    _vstore_block(C, k0, kb, c0, c1, c2, c3)
    _vstore_block(C, kb, k_end, c4, c5, c6, c7)


@njit(cache=True)
def pick_r(G):
    """The node's first class r: the largest -G_k (the first of equals)."""
    r = 0
    for k in range(1, G.shape[0]):
        if -G[k] > -G[r]:
            r = k
    return r


@njit(cache=True)
def pick_s(G, Hd, C, r, rule_eq32):
    """The node's second class s given r: eq (33) from the cross sums C_rk, or eq (32).

    C is overwritten by the scores.
    """
    K = G.shape[0]
    score = C  # reuse the scratch: C_rk first, then the score
    if rule_eq32:
        for k in range(K):
            score[k] = G[k]
    else:
        for k in range(K):
            den = Hd[r] + Hd[k] + 2.0 * C[k]
            if den == 0.0:
                den = 1.0
            diff = G[r] - G[k]
            score[k] = diff * diff / den
    score[r] = -np.inf
    return _argmax_first(score)


@njit(cache=True)
def node_pair(rows, start, stop, p, pct, top, y, w, weighted, rule_eq32, G, Hd, C):
    """Class pair (r, s) of the node rows[start:stop] by eq (33), or eq (32) if rule_eq32.

    G, Hd, C are scratch arrays of length K; p, pct, top as set_scores leaves them.
    """
    node_class_sums(rows, start, stop, p, pct, top, y, w, weighted, G, Hd, np.empty(p.shape[1]))
    return pair_from_class_sums(rows, start, stop, p, w, weighted, rule_eq32, G, Hd, C)


@njit(cache=True)
def node_class_sums(rows, start, stop, p, pct, top, y, w, weighted, G, Hd, A):
    """G_k = sum w g_ik, Hd_k = sum w p_ik (1 - p_ik) over the node rows[start:stop], every
    class, and A_k = sum |w g_ik| over the node's rows of class k (see _class_sums)."""
    K = p.shape[1]
    G[:] = 0.0
    Hd[:] = 0.0
    A[:] = 0.0
    _class_sums(rows, start, stop, p, pct, top, y, w, weighted, G, Hd, A, 0, K)


@njit(cache=True)
def pair_from_class_sums(rows, start, stop, p, w, weighted, rule_eq32, G, Hd, C):
    """The node's pair (r, s) given its class sums: r, then the cross sums C_rk and s."""
    r = pick_r(G)
    node_cross_sums(rows, start, stop, p, w, weighted, rule_eq32, r, C)
    return r, pick_s(G, Hd, C, r, rule_eq32)


@njit(cache=True)
def node_cross_sums(rows, start, stop, p, w, weighted, rule_eq32, r, C):
    """C_rk = sum w p_ir p_ik over the node's rows (all 0 for eq (32), which does not use them);
    a node of HALVES_ROWS rows or more: the sum of its halves' sums."""
    K = p.shape[1]
    C[:] = 0.0
    if rule_eq32:
        return
    if stop - start >= HALVES_ROWS:  # the sum of its halves' (as the reference's)
        mid = start + (stop - start) // 2
        second = np.zeros(K)
        _cross_sums(rows, start, mid, p, w, weighted, r, C, 0, K)
        _cross_sums(rows, mid, stop, p, w, weighted, r, second, 0, K)
        for k in range(K):
            C[k] += second[k]
    else:
        _cross_sums(rows, start, stop, p, w, weighted, r, C, 0, K)


# -- class sums of the larger child by subtraction --------------------------------------------
# A split's larger child takes its class sums as its parent's minus its sibling's (saving one
# pass over most of the rows), and picks its pair from them only where that pair is certainly
# the one its own sums would give: every sum carries a bound on its distance from the exact
# sum of its (rounded) terms, and where two candidates' intervals meet, the child sums its
# rows after all. So the tree is the NumPy reference's, bit for bit.
#
# Bounds (u = eps / 2): a sum of n terms computed in order is within 2 n u sum|terms| of the
# exact sum (the recursive summation bound, doubled to cover the rounded products w g); the
# terms of Hd are >= 0, and sum |w g_k| = G_k + 2 A_k (A_k: the rows of class k, whose term is
# the negative one). A difference a - b is within E_a + E_b + u |a - b| of the exact one. The
# larger child's own sums would be within 2 n u S of the exact sums, S <= its parent's S.

STAT_G, STAT_HD, STAT_SG, STAT_SH, STAT_EG, STAT_EH = 0, 1, 2, 3, 4, 5
#: What a node of a batch has of its class sums: summed from its rows, derived, or nothing yet.
#: PAIRED: its pair is chosen already. (NumPy integers, as the stages below: numba compiles a
#: kernel again for every Python int constant passed to it, a "literal" type of its own.)
SUMMED, DERIVED, TO_SUM, PAIRED = np.int64(0), np.int64(1), np.int64(2), np.int64(3)
ZERO, NONE = np.int64(0), np.int64(-1)  # 0 and -1 as arguments
N_STATS = 6
UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2


@njit(cache=True)
def summed_stats(G, Hd, A, n, stats):
    """stats (N_STATS, K) of a node whose class sums G, Hd, A were summed over its n rows."""
    u = UNIT_ROUNDOFF
    for k in range(G.shape[0]):
        sg = abs(G[k]) + 2.0 * A[k]
        stats[STAT_G, k] = G[k]
        stats[STAT_HD, k] = Hd[k]
        stats[STAT_SG, k] = sg
        stats[STAT_SH, k] = Hd[k]
        stats[STAT_EG, k] = 2.0 * n * u * sg
        stats[STAT_EH, k] = 2.0 * n * u * Hd[k]


@njit(cache=True)
def derived_stats(parent, small, stats):
    """stats of the larger child: the parent's sums minus the smaller sibling's, with bounds."""
    u = UNIT_ROUNDOFF
    for k in range(parent.shape[1]):
        g = parent[STAT_G, k] - small[STAT_G, k]
        h = parent[STAT_HD, k] - small[STAT_HD, k]
        stats[STAT_G, k] = g
        stats[STAT_HD, k] = h
        stats[STAT_SG, k] = parent[STAT_SG, k]
        stats[STAT_SH, k] = parent[STAT_SH, k]
        stats[STAT_EG, k] = parent[STAT_EG, k] + small[STAT_EG, k] + u * abs(g)
        stats[STAT_EH, k] = parent[STAT_EH, k] + small[STAT_EH, k] + u * abs(h)


@njit(cache=True)
def _copy2(src, dst):
    """dst[:] = src for 2-d arrays, as loops: numba compiles array assignment slowly (seconds
    for each kernel that uses it, at the first fit on a machine)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True)
def _half_class_sums(half, rows, start, stop, p, pct, top, y, w, weighted, halves):
    """halves[half] = (G, Hd, A) of the first (half 0) or second half of rows[start:stop]."""
    mid = (start + stop) // 2
    own = np.zeros((3, p.shape[1]))  # the thread's own accumulators
    if half == 0:
        _class_sums(rows, start, mid, p, pct, top, y, w, weighted, own[0], own[1], own[2], 0, p.shape[1])
    else:
        _class_sums(rows, mid, stop, p, pct, top, y, w, weighted, own[0], own[1], own[2], 0, p.shape[1])
    _copy2(own, halves[half])


@njit(cache=True, parallel=True)
def _class_sums_by_halves(rows, start, stop, p, pct, top, y, w, weighted, halves):
    for half in prange(2):
        _half_class_sums(np.int64(half), rows, start, stop, p, pct, top, y, w, weighted, halves)


@njit(cache=True)
def split_stats(rows, start, stop, p, pct, top, y, w, weighted, stats):
    """stats of a node whose class sums are summed by two threads, each over half of its rows,
    and added (_halves_stats)."""
    halves = np.empty((2, 3, p.shape[1]))
    _class_sums_by_halves(rows, start, stop, p, pct, top, y, w, weighted, halves)
    _halves_stats(halves, stop - start, stats)


@njit(cache=True)
def _halves_stats(halves, n, stats):
    """stats of a node of n rows from its halves' class sums (halves[h] = G, Hd, A), added:
    within the bounds of the halves' sums plus u |G| (see summed_stats). The pair they give
    must be checked (certain_r, certain_s) like a derived one's."""
    u = UNIT_ROUNDOFF
    for k in range(halves.shape[2]):
        g = halves[0, 0, k] + halves[1, 0, k]
        h = halves[0, 1, k] + halves[1, 1, k]
        sg = abs(halves[0, 0, k]) + abs(halves[1, 0, k]) + 2.0 * (halves[0, 2, k] + halves[1, 2, k])
        stats[STAT_G, k] = g
        stats[STAT_HD, k] = h
        stats[STAT_SG, k] = sg
        stats[STAT_SH, k] = h
        stats[STAT_EG, k] = 2.0 * n * u * sg + u * abs(g)
        stats[STAT_EH, k] = 2.0 * n * u * h + u * h


@njit(cache=True)
def block_stats(block_sums, m, n, stats):
    """stats of a node of n rows whose class sums are the sums of m row blocks' (block_sums[b]
    = G, Hd, A of block b, each summed in row order), added in block order: within the blocks'
    bounds (2 n u S) plus the m - 1 additions' (u times a partial sum, at most S each; here
    2 m u S). The pair they give must be checked (certain_r, certain_s)."""
    u = UNIT_ROUNDOFF
    for k in range(stats.shape[1]):
        g = 0.0
        h = 0.0
        sg = 0.0
        for b in range(m):
            g += block_sums[b, 0, k]
            h += block_sums[b, 1, k]
            sg += abs(block_sums[b, 0, k]) + 2.0 * block_sums[b, 2, k]
        stats[STAT_G, k] = g
        stats[STAT_HD, k] = h
        stats[STAT_SG, k] = sg
        stats[STAT_SH, k] = h
        stats[STAT_EG, k] = 2.0 * (n + m) * u * sg
        stats[STAT_EH, k] = 2.0 * (n + m) * u * h


@njit(cache=True)
def certain_r(stats, n):
    """r by the derived sums (the largest -G_k, first of equals), or -1 where the node's own
    sums (n rows) might pick another class."""
    K = stats.shape[1]
    u = UNIT_ROUNDOFF
    G = stats[STAT_G]
    r = pick_r(G)
    for k in range(K):
        if k != r:
            spread = (stats[STAT_EG, r] + 2.0 * n * u * stats[STAT_SG, r] + stats[STAT_EG, k]
                      + 2.0 * n * u * stats[STAT_SG, k])
            if (G[k] - G[r]) * (1.0 - 4.0 * u) <= spread:  # -G_r - (-G_k) within reach
                return -1
    return r


@njit(cache=True)
def certain_s(stats, n, C, r, rule_eq32):
    """s given r and the node's cross sums C_rk (summed from its rows), by eq (33) (or (32))
    from the derived sums, or -1 where the node's own sums might pick another class."""
    K = stats.shape[1]
    u = UNIT_ROUNDOFF
    G = stats[STAT_G]
    Hd = stats[STAT_HD]
    lo = np.empty(K)
    hi = np.empty(K)
    dg_r = stats[STAT_EG, r] + 2.0 * n * u * stats[STAT_SG, r]
    for k in range(K):
        dg_k = stats[STAT_EG, k] + 2.0 * n * u * stats[STAT_SG, k]
        if rule_eq32:
            lo[k] = G[k] - dg_k - 4.0 * u * abs(G[k])
            hi[k] = G[k] + dg_k + 4.0 * u * abs(G[k])
            continue
        dh = (stats[STAT_EH, r] + 2.0 * n * u * stats[STAT_SH, r] + stats[STAT_EH, k]
              + 2.0 * n * u * stats[STAT_SH, k])
        den = Hd[r] + Hd[k] + 2.0 * C[k]
        diff = abs(G[r] - G[k])
        reach = (dg_r + dg_k) + 4.0 * u * diff
        den_reach = dh + 8.0 * u * abs(den)
        if den - den_reach <= 0.0 or den == 0.0:
            if k != r:
                return -1  # a zero (or near zero) denominator: pick_s's special case, leave it to the rows
            lo[k] = -np.inf
            hi[k] = -np.inf
            continue
        num_lo = max(diff - reach, 0.0)
        num_hi = diff + reach
        lo[k] = num_lo * num_lo / (den + den_reach) * (1.0 - 16.0 * u)
        hi[k] = num_hi * num_hi / (den - den_reach) * (1.0 + 16.0 * u)
    s = pick_s(G, Hd, C.copy(), r, rule_eq32)  # (pick_s overwrites its C)
    for k in range(K):
        if k != r and k != s and hi[k] >= lo[s]:
            return -1
    return s


@njit(cache=True)
def s_without_cross(stats, n, r):
    """s given r by eq (33) without the cross sums C_rk, where the bounds that hold for any of
    them decide it, or -1 (then the node sums its cross sums from its rows). Unweighted nodes of
    n rows; stats summed or derived (the bounds of certain_s), r certain.

    Each C_rk = sum p_ir p_ik is >= 0 and at most min(Hd_r, Hd_k): in exact arithmetic p_ir <=
    1 - p_ik, so p_ir p_ik <= p_ik (1 - p_ik), and the same with r and k swapped. The stored p
    and 1 - p (pc, pct) are rounded, so the bound here is padded: a row's p_ir exceeds its
    pc_ik by at most (K + 4) u (the row's sum of exponentials is rounded in K additions), which
    the pad's (K + 8) u n covers over n rows; then the sums' own rounding ((n + 4) u). Each
    class's score (G_r - G_k)^2 / (Hd_r + Hd_k + 2 C_rk) then lies between the one at the
    largest C and the one at C = 0 (with certain_s's rounding guards), and s is decided where
    one class's lowest score is above every other class's highest: the class pick_s would
    pick from the node's own cross sums, whatever they are. On letter and pendigits this
    decides about a third of the nodes' pairs (by rows), whose cross-sum pass is then skipped.
    """
    K = stats.shape[1]
    u = UNIT_ROUNDOFF
    G = stats[STAT_G]
    Hd = stats[STAT_HD]
    pad = (K + 8) * u * n
    grow = 1.0 + (n + 4) * u
    dg_r = stats[STAT_EG, r] + 2.0 * n * u * stats[STAT_SG, r]
    dh_r = stats[STAT_EH, r] + 2.0 * n * u * stats[STAT_SH, r]
    hd_hi_r = (Hd[r] + dh_r) * grow
    s = -1
    lo_s = -np.inf
    hi = np.empty(K)
    for k in range(K):
        hi[k] = -np.inf
        if k == r:
            continue
        dg_k = stats[STAT_EG, k] + 2.0 * n * u * stats[STAT_SG, k]
        dh_k = stats[STAT_EH, k] + 2.0 * n * u * stats[STAT_SH, k]
        c_hi = (min(hd_hi_r, (Hd[k] + dh_k) * grow) + pad) * grow
        den_lo = (Hd[r] + Hd[k] - dh_r - dh_k) * (1.0 - 8.0 * u)
        den_hi = (Hd[r] + Hd[k] + dh_r + dh_k + 2.0 * c_hi) * (1.0 + 8.0 * u)
        if den_lo <= 0.0:
            return -1  # a zero (or near zero) denominator: pick_s's special case, leave it to the rows
        diff = abs(G[r] - G[k])
        reach = (dg_r + dg_k) + 4.0 * u * diff
        num_lo = max(diff - reach, 0.0)
        num_hi = diff + reach
        lo_k = num_lo * num_lo / den_hi * (1.0 - 16.0 * u)
        hi[k] = num_hi * num_hi / den_lo * (1.0 + 16.0 * u)
        if not (lo_k >= 0.0 and hi[k] >= 0.0):
            return -1  # NaN sums (scores that diverged): the rows decide, as pick_s does with them
        if lo_k > lo_s:
            s = k
            lo_s = lo_k
    if s < 0:
        return -1
    for k in range(K):
        if k != r and k != s and hi[k] >= lo_s:
            return -1
    return s


@njit(cache=True)
def _pair_stat(i, r, s, p, pct, top, y):
    """Eqs (25), (26) for row i; s = -1: the single class r (g_ir, p_ir (1 - p_ir));
    s = -2: LogitBoost's clipped working response (see losses.pair_statistics). 1 - p is
    pct[i] at the row's top class, else computed (the value set_scores' pc holds there).

    The pair case comes first and reads each value once: this runs for every row of every
    node, and the branchy form it replaced was several times slower.
    """
    yi = _at(y, i)
    ti = _at(top, i)
    pt = _at(pct, i)  # read whether or not it is used: a select of two values, not a branch to a load
    p_r = _at2(p, i, r)
    pc_r = pt if r == ti else 1.0 - p_r
    if s >= 0:
        p_s = _at2(p, i, s)
        pc_s = pt if s == ti else 1.0 - p_s
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
def node_sums(rows, start, stop, r, s, p, pct, top, y, w, weighted, out):
    """out[:] = (sum w g, sum w h, count) of the node under the pair (r, s)."""
    G = 0.0
    H = 0.0
    for j in range(start, stop):
        i = _at(rows, j)
        g, h = _pair_stat(i, r, s, p, pct, top, y)
        if weighted:
            g *= w[i]
            h *= w[i]
        G += g
        H += h
    out[GRAD] = G
    out[HESS] = H
    out[COUNT] = stop - start


@njit(cache=True)
def _row_channels(i, r, s, p, pct, top, y, wi, weighted, first_order):
    """The histogram channels (w g, w h) of row i under the pair (r, s); (w g, w) first_order.

    wi: the row's weight, read by the caller (``_at(w, i) if weighted else 1.0``). Given the
    weights' array, numba counted a reference to it for every row (NRT_incref and NRT_decref
    calls in the histograms' row loops, which LLVM cannot remove): grow_tree of weighted AOSO
    fits was 4-11% slower on letter, and of MART fits 4.5% on pendigits (in-process A/B)."""
    g, h = _pair_stat(i, r, s, p, pct, top, y)
    if first_order:
        h = 1.0
    if weighted:
        g *= wi
        h *= wi
    return g, h


@njit(cache=True)
def _node_channels(rows, start, stop, r, s, p, pct, top, y, w, weighted, first_order, gh):
    """gh[j - start] = _row_channels of row rows[j]."""
    for j in range(start, stop):
        i = rows[j]
        g, h = _row_channels(i, r, s, p, pct, top, y, _at(w, i) if weighted else 1.0, weighted, first_order)
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
        f_lo = block * D // n_blocks
        f_hi = (block + 1) * D // n_blocks
        own = np.zeros(hist.shape)
        _accumulate(rows, start, stop, codes, gh, own, f_lo, f_hi)
        hist[f_lo:f_hi] = own[f_lo:f_hi]


@njit(cache=True)
def node_histogram(rows, start, stop, r, s, codes, sparse, p, pct, top, y, w, weighted, first_order, hist, gh,
                   n_threads):
    """hist[f, code, :] = sums of (w g, w h, 1) of the node's rows, per feature and code
    ((w g, w, 1) with first_order), each block (a half, or the node) with its sparse features'
    default bins folded (``sparse``: base.sparse_features' rows; _fold_defaults): the
    reference's halved_histogram.

    gh is scratch of shape (>= stop - start, 2).
    """
    _node_channels(rows, start, stop, r, s, p, pct, top, y, w, weighted, first_order, gh)
    if stop - start >= _hist_halves_rows(hist.shape[1]):  # the sum of the halves' histograms
        mid = start + (stop - start) // 2
        second = np.empty(hist.shape)
        _staged_accumulate(rows, start, mid, codes, gh, hist, n_threads)
        _fold_staged(hist, sparse, gh, mid - start)
        _staged_accumulate(rows, mid, stop, codes, gh[mid - start:], second, n_threads)
        _fold_staged(second, sparse, gh[mid - start:], stop - mid)
        _add_into(hist, second)
    else:
        _staged_accumulate(rows, start, stop, codes, gh, hist, n_threads)
        _fold_staged(hist, sparse, gh, stop - start)


@njit(cache=True)
def _fold_staged(hist, sparse, gh, n):
    """_fold_defaults of a block's dense histogram, its totals summed from gh[:n] in row order."""
    total_g = 0.0
    total_h = 0.0
    for j in range(n):
        total_g += gh[j, 0]
        total_h += gh[j, 1]
    _fold_pair_defaults(hist, sparse, total_g, total_h, n)


@njit(cache=True)
def _staged_accumulate(rows, start, stop, codes, gh, hist, n_threads):
    hist[:] = 0.0
    D = codes.shape[1]
    if n_threads > 1 and (stop - start) * D >= PARALLEL_CELLS:
        _accumulate_parallel(rows, start, stop, codes, gh, hist, min(n_threads, D))
    else:
        _accumulate(rows, start, stop, codes, gh, hist, ZERO, D)


@njit(cache=True)
def _add_into(hist, other):
    """hist += other, for 3-d histograms, as loops."""
    for f in range(hist.shape[0]):
        for c in range(hist.shape[1]):
            for q in range(hist.shape[2]):
                hist[f, c, q] += other[f, c, q]


@njit(cache=True)
def _derive_histogram(parent, small, small_second, small_halved, out):
    """out = base.derived_histogram(parent, the smaller child's histogram): that histogram is
    small, or small + small_second (its halves, added first, as the reference's
    halved_histogram) where small_halved. out may be small or small_second (each bin's values
    are read before it is written)."""
    for f in range(parent.shape[0]):
        for b in range(parent.shape[1]):
            n = parent[f, b, COUNT] - _bin(small, small_second, small_halved, f, b, COUNT)
            if n == 0.0:  # no row of the child: 0.0, not the difference's rounding residue
                g = 0.0
                h = 0.0
            else:
                g = parent[f, b, GRAD] - _bin(small, small_second, small_halved, f, b, GRAD)
                h = parent[f, b, HESS] - _bin(small, small_second, small_halved, f, b, HESS)
            out[f, b, GRAD] = g
            out[f, b, HESS] = h
            out[f, b, COUNT] = n
            out[f, b, LANES - 1] = 0.0


@njit(cache=True)
def _is_pair(pair, node, r, s):
    return pair[node, 0] == r and pair[node, 1] == s


@njit(cache=True)
def _hguard(H):
    return 1.0 if H == 0.0 else H


@njit(cache=True, inline="always")
def _vgain(GL, HL, GR, HR, parent):
    """losses.split_gain lane by lane, the same operations in the same order (a zero Hessian sum
    counts as 1; noise-level gains are 0)."""
    one = _vsplat(1.0)
    zero = _vsplat(0.0)
    two = _vsplat(2.0)
    left = _vdiv(_vmul(GL, GL), _vmul(two, _vif_eq(HL, zero, one, HL)))
    right = _vdiv(_vmul(GR, GR), _vmul(two, _vif_eq(HR, zero, one, HR)))
    pv = _vsplat(parent)
    gain = _vsub(_vadd(left, right), pv)
    return _vif_gt(gain, _vmul(_vsplat(GAIN_NOISE), _vadd(_vadd(left, right), pv)), gain, zero)


@njit(cache=True, inline="always")
def _vmissing_gains(pre, suf, b0, n, shift_left, mg, mh, mc, msl, mcw, parent):
    """The gains of the split candidates b0:b0 + n of one feature, missing values right
    (shift_left False) or left, -inf where a side would hold fewer than msl rows or, where
    mcw > 0, a Hessian sum below mcw (and in the lanes past n)."""
    pg = _vload(pre, GRAD, b0, n)
    ph = _vload(pre, HESS, b0, n)
    pc = _vload(pre, COUNT, b0, n)
    sg = _vload(suf, GRAD, b0, n)
    sh = _vload(suf, HESS, b0, n)
    sc = _vload(suf, COUNT, b0, n)
    if shift_left:
        pg = _vadd(pg, _vsplat(mg))
        ph = _vadd(ph, _vsplat(mh))
        pc = _vadd(pc, _vsplat(mc))
    else:
        sg = _vadd(sg, _vsplat(mg))
        sh = _vadd(sh, _vsplat(mh))
        sc = _vadd(sc, _vsplat(mc))
    gain = _vgain(pg, ph, sg, sh, parent)
    least = _vsplat(msl)
    none = _vsplat(-np.inf)
    if mcw > 0.0:
        lightest = _vsplat(mcw)
        gain = _vif_ge(ph, lightest, _vif_ge(sh, lightest, gain, none), none)
    return _vfirst(_vif_ge(pc, least, _vif_ge(sc, least, gain, none), none), n, -np.inf)


@njit(cache=True, inline="always")
def _bin(hist, second, halved, f, b, c):
    """Channel c of bin b of feature f: of the histogram, or of the sum of the halves' (hist +
    second, the reference's halved_histogram) where the node was halved."""
    return hist[f, b, c] + second[f, b, c] if halved else hist[f, b, c]


@njit(cache=True)
def best_split(hist, second, halved, min_samples_leaf, min_child_weight, allowed, sums, prefix, suffix, cand_gain):
    """Best split of one node by eq (30), as backends.numpy.best_splits does it. Its histogram
    is hist, or hist + second (the halves', added here bin by bin) where halved. A candidate
    whose side holds fewer than min_samples_leaf rows, or (min_child_weight > 0) a Hessian sum
    below min_child_weight, is no candidate; so are the features f where allowed[f] is False
    (colsample_bytree's).

    Fills sums (the node totals, from feature 0's bins). prefix / suffix are scratch arrays of
    shape (n_codes, 3); cand_gain (float64) of length >= 2 D (n_codes - 1). Returns (gain,
    feature, bin, missing_left); gain -inf when no split (also where the largest gain is +inf:
    the node's sums broke down, as extreme weights can make them). Gains within SPLIT_TIE
    (relative) of the largest are ties: the first candidate (feature, bin, missing right then
    left) wins.

    A feature's prefix and suffix sums are scanned in bin order, channel by channel (as the
    reference's cumsum), the two scans in one loop (six chains of additions in flight instead
    of three); its candidates' gains are computed VW bins at a time (_vgain: the same
    operations per candidate). A value bin b > 0 that holds no row of the node has the prefix
    and suffix sums of bin b - 1 (adding an empty bin adds 0.0), so its gains equal the earlier
    candidate's and it can never be the first best: computing it changes nothing. The bins past
    a feature's last one that holds a row are not scanned at all (their g and h are 0.0 where
    their count is, in direct, folded and derived histograms alike): covertype's one-hot
    features have 3 live bins of 255.
    """
    D, W, _ = hist.shape
    nb = W - 1
    for c in range(3):
        t = 0.0
        for b in range(W):
            t += _bin(hist, second, halved, 0, b, c)
        sums[c] = t
    G = sums[GRAD]
    H = sums[HESS]
    n = sums[COUNT]
    parent = G * G / (2.0 * _hguard(H))
    pre = prefix.reshape(3, W)  # channel-major: VW bins of a channel are one vector
    suf = suffix.reshape(3, W)
    msl = float(min_samples_leaf)
    mcw = float(min_child_weight)
    feature_top = np.empty(D)
    live = np.empty(D, np.int64)  # each feature's value bins up to its last that holds a row
    top = -np.inf
    for f in range(D):
        nf = nb if allowed[f] else 0  # a feature the tree may not split on: no live bin, no candidate
        while nf > 0 and _bin(hist, second, halved, f, nf - 1, COUNT) == 0.0:
            nf -= 1
        live[f] = nf
        pg = 0.0
        ph = 0.0
        pn = 0.0
        sg = 0.0
        sh = 0.0
        sn = 0.0
        if nf > 0:
            suf[GRAD, nf - 1] = 0.0
            suf[HESS, nf - 1] = 0.0
            suf[COUNT, nf - 1] = 0.0
        for b in range(nf):
            pg += _bin(hist, second, halved, f, b, GRAD)
            ph += _bin(hist, second, halved, f, b, HESS)
            pn += _bin(hist, second, halved, f, b, COUNT)
            pre[GRAD, b] = pg
            pre[HESS, b] = ph
            pre[COUNT, b] = pn
            q = nf - 1 - b  # suffix[q - 1] = bins q..nf - 1, summed from the last
            if q > 0:
                sg += _bin(hist, second, halved, f, q, GRAD)
                sh += _bin(hist, second, halved, f, q, HESS)
                sn += _bin(hist, second, halved, f, q, COUNT)
                suf[GRAD, q - 1] = sg
                suf[HESS, q - 1] = sh
                suf[COUNT, q - 1] = sn
        mg = _bin(hist, second, halved, f, nb, GRAD)
        mh = _bin(hist, second, halved, f, nb, HESS)
        mc = _bin(hist, second, halved, f, nb, COUNT)
        best = _vsplat(-np.inf)
        for b0 in range(0, nf, VW):
            m = _lanes(b0, nf)
            gain = _vmissing_gains(pre, suf, b0, m, False, mg, mh, mc, msl, mcw, parent)
            _vstore(cand_gain, ZERO, f * nb + b0, gain, m)
            best = _vif_gt(gain, best, gain, best)
            if mc > 0:  # missing values in the node: the candidates that send them left
                gain = _vmissing_gains(pre, suf, b0, m, True, mg, mh, mc, msl, mcw, parent)
                _vstore(cand_gain, ZERO, (D + f) * nb + b0, gain, m)
                best = _vif_gt(gain, best, gain, best)
        feature_top[f] = _vmax_lane(best)
        if feature_top[f] > top:
            top = feature_top[f]
    if not np.isfinite(top):  # -inf: no candidate; +inf: the sums broke down (H < 0, G^2 overflowing): no split
        return -np.inf, 0, 0, False
    threshold = top - SPLIT_TIE * abs(top)
    best_f = 0
    best_b = 0
    best_dir = 0
    best_gain = top
    for f in range(D):  # the first candidate at or above the threshold, in the reference's order
        if not feature_top[f] >= threshold:
            continue
        with_left = _bin(hist, second, halved, f, nb, COUNT) > 0
        for b in range(live[f]):
            if cand_gain[f * nb + b] >= threshold:
                best_f, best_b, best_dir, best_gain = f, b, 0, cand_gain[f * nb + b]
                break
            if with_left and cand_gain[(D + f) * nb + b] >= threshold:
                best_f, best_b, best_dir, best_gain = f, b, 1, cand_gain[(D + f) * nb + b]
                break
        break
    if _bin(hist, second, halved, best_f, nb, COUNT) > 0:  # the chosen feature has missing values here
        missing_left = best_dir == 1
    else:
        left_rows = 0.0
        for b in range(best_b + 1):
            left_rows += _bin(hist, second, halved, best_f, b, COUNT)
        missing_left = left_rows >= n - left_rows
    return best_gain, best_f, best_b, missing_left


@njit(cache=True)
def partition(rows, start, stop, codes, columns, feature, bin_, missing_left, missing_code, scratch):
    """Stable partition of rows[start:stop] into [left | right] by the split's feature; returns
    the left count. columns: the codes' feature-major copy, shape (D, N), read where it was made
    (shape (0, N) where not: then the row-major codes): a row's code is a byte of a contiguous
    column, not one of the row-major codes' cache lines a row (Covertype290k's partitions
    2.5-3x faster, 2026-11-23)."""
    if columns.shape[0] > 0:
        return _partition_column(rows, start, stop, columns[feature], bin_, missing_left, missing_code, scratch)
    return _partition_column(rows, start, stop, codes[:, feature], bin_, missing_left, missing_code, scratch)


@njit(cache=True, inline="always")
def _split_rows(rows, lo, hi, column, bin_, missing_left, missing_code, lefts, left_at, rights, right_at):
    """The rows rows[lo:hi] in order, those going left (column[i] <= bin_, or missing_left for
    the missing code) to lefts[left_at:], the others to rights[right_at:]; returns the left
    count. Without branches on the side (a row's side is as unpredictable as the data): each
    row is written to both places, and only its side's count moves on. lefts may be rows
    itself with left_at = lo (a row is written where one was already read)."""
    n_left = 0
    n_right = 0
    for j in range(lo, hi):
        i = _at(rows, j)
        c = _at(column, i)
        left = missing_left if c == missing_code else c <= bin_
        _put(lefts, left_at + n_left, i)
        _put(rights, right_at + n_right, i)
        n_left += 1 if left else 0
        n_right += 0 if left else 1
    return n_left


@njit(cache=True, parallel=True)
def partition_halves(rows, start, stop, column, bin_, missing_left, missing_code, lefts, rights, counts):
    """_partition_column by two threads: each scans half of the rows into its own places of
    lefts and rights (its half's offsets), then each moves its own into rows: the left rows of
    the first half, then the second's, then the right rows likewise. The same stable order as
    the one-thread pass, so the same rows. counts: scratch of 2. Returns the left count."""
    mid = start + (stop - start) // 2
    for t in prange(2):
        lo = start if t == 0 else mid
        hi = mid if t == 0 else stop
        counts[t] = _split_rows(rows, lo, hi, column, bin_, missing_left, missing_code, lefts, lo, rights, lo)
    left_0 = counts[0]
    left_1 = counts[1]
    right_0 = (mid - start) - left_0
    for t in prange(2):
        if t == 0:
            for k in range(left_0):
                rows[start + k] = lefts[start + k]
            for k in range(right_0):
                rows[start + left_0 + left_1 + k] = rights[start + k]
        else:
            for k in range(left_1):
                rows[start + left_0 + k] = lefts[mid + k]
            for k in range((stop - mid) - left_1):
                rows[start + left_0 + left_1 + right_0 + k] = rights[mid + k]
    return left_0 + left_1


@njit(cache=True)
def _partition_column(rows, start, stop, column, bin_, missing_left, missing_code, scratch):
    """partition with the feature's codes given (column[i]: row i's code): the left rows moved
    forward in place, the right ones through scratch (_split_rows)."""
    n_left = _split_rows(rows, start, stop, column, bin_, missing_left, missing_code, rows, start, scratch, ZERO)
    n_right = (stop - start) - n_left
    for k in range(n_right):
        rows[start + n_left + k] = scratch[k]
    return n_left


@njit(cache=True)
def pair_steps(pair, value, leaf_ids, learning_rate, out):
    """out (len(leaf_ids), K) = learning_rate x Tree.node_vectors of the leaves, where every
    one has a pair (s >= 0): learning_rate (t + 0.0) at r, learning_rate (0.0 - t) at s and
    learning_rate 0.0 elsewhere, the operations of node_vectors' flat path and the product.
    Returns False (out unfinished) if a leaf has no second class (the caller's node_vectors
    has other rules for those)."""
    K = out.shape[1]
    for q in range(leaf_ids.shape[0]):
        j = leaf_ids[q]
        if pair[j, 1] < 0:
            return False
        for k in range(K):
            out[q, k] = learning_rate * 0.0
        t = value[j]
        out[q, pair[j, 0]] = learning_rate * (t + 0.0)
        out[q, pair[j, 1]] = learning_rate * (0.0 - t)
    return True


@njit(cache=True)
def update_scores(F, rows, seg_start, seg_stop, deltas):
    """F[rows of leaf j] += deltas[j] for each leaf segment.

    Only the nonzero entries of a leaf's vector are added (an AOSO leaf changes two classes):
    adding 0.0 would leave F as it is (F is never -0.0).
    """
    K = F.shape[1]
    classes = np.empty(K, np.int64)
    for j in range(seg_start.shape[0]):
        n_nonzero = 0
        for k in range(K):
            if deltas[j, k] != 0.0:
                classes[n_nonzero] = k
                n_nonzero += 1
        for q in range(seg_start[j], seg_stop[j]):
            i = rows[q]
            for m in range(n_nonzero):
                k = classes[m]
                F[i, k] += deltas[j, k]


# -- one whole tree ------------------------------------------------------------------------
# One whole tree in one compiled call: the grower's best-first logic on the stage kernels.
#
# ``grow_tree`` runs what ``grower.TreeGrower`` runs with the NumPy backend, node for node, but
# without Python between the stages (its overhead per node would dominate small data). The two
# children of a split are evaluated as one batch: the smaller child sums its class sums, the
# larger derives them (parent minus sibling, used where the pair is certain: see "class sums of
# the larger child by subtraction" above). With two threads or more:
#
# - the two children run on one thread each, all their passes in one parallel region
#   (_siblings_parallel, stage WHOLE), from SIBLING_CELLS; the smaller child's class sums before
#   it, by two threads over half of its rows each (split_stats, checked like derived sums);
# - the root's class sums run on two threads over half of its rows each (split_stats), its
#   histogram by halves (from _hist_halves_rows) or else by feature blocks (from
#   HISTOGRAM_CELLS); a batch below SIBLING_CELLS runs on one thread.
#
# - a split with a child of HALVES_ROWS rows or more (and the root, if it has as many): the
#   pairs' cross sums by halves (stage CROSS: a large node's halves a thread each, the first
#   classes r and then s picked around it, _pairs_r and _pairs_s);
# - a split with a child of _hist_halves_rows rows or more: the pairs (a child a thread, where
#   CROSS did not choose them), then each such child's histogram by halves, then the splits a
#   child a thread, which add the halves bin by bin where they scan them (no pass of its own).
#   The larger child no longer sets the pace (2026-11-23, 2 threads, A/B of the whole-tree
#   kernel: the histograms by halves 1.25x on letter, 1.5x on covertype290k; the cross sums by
#   halves another 1.17-1.20x on letter, 1.09x on covertype290k; 2026-11-25, halves from 680
#   rows instead of 4096 on letter's 17 codes, the halves added in the split scan: grow_tree
#   1.35-1.41 -> 1.26-1.32 ms; from 4080 on pendigits' 102 codes, as before: each half's
#   histogram to clear and scan costs what halving gains there).
#
# Measured on the 2-core machine (2026-11-23, letter, 2 threads): the siblings in parallel and
# the root's histogram by features take a tree from 5.6 to 4.4 ms, the derived class sums to
# 3.8 ms. Splitting the class and cross sums by class blocks was slower than one thread (each
# thread still reads every row): they are not split. Threads never sum into a shared array:
# each has its own accumulators. Each parallel kernel costs seconds of compilation at the first
# fit on a machine (about 25 s in all on the 2-core machine; 0.3 s to load them from numba's
# cache later), so the kernels called inside a parallel region are sequential ones, and they
# copy arrays with loops (_copy2). numba also compiles a kernel again for each Python int
# constant passed to it (a literal type) and for a prange index (unsigned): the constants passed
# to kernels are NumPy integers (SUMMED, WHOLE, ZERO, ...) and prange indices are cast to
# int64 (each copy of _siblings_parallel cost 5-6 s; 36 -> 25 s in all). The literal 0s that
# start the feature ranges of _histogram_block and the class ranges of _class_sums are kept:
# their loops compiled with them were 1.1-1.4x faster in A/B runs (letter, pendigits);
# _histogram_block has a second copy for _histogram_parallel's feature blocks.
#
# Every sum that decides something is the sequential one over the node's rows in row order, so
# the tree is the same whatever the number of threads (and the NumPy reference's).


@intrinsic
def _add_to_bin(typingctx, hist, cell, g, h):
    """hist.flat[LANES cell:][:LANES] += (g, h, 1, 0), as one 4-wide vector addition.

    hist: a C-contiguous float64 array whose last axis has LANES entries (the caller checks).
    Each lane is its own IEEE addition, so the sums are those of three scalar additions; but
    numba compiles those as three loads, adds and stores (it leaves LLVM's SLP vectoriser off),
    and a row's stores bound the histogram pass: this one is 1.6x faster on letter and
    pendigits (2026-11-23).
    """
    if not (isinstance(hist, types.Array) and hist.dtype == types.float64 and hist.layout == "C"):
        return None
    sig = types.void(hist, types.int64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        lanes = ir.VectorType(ir.DoubleType(), LANES)
        at = builder.gep(data, [builder.mul(args[1], ir.Constant(ir.IntType(64), LANES))])
        at = builder.bitcast(at, lanes.as_pointer())
        step = ir.Constant(lanes, [0.0, 0.0, 1.0, 0.0])
        step = builder.insert_element(step, args[2], ir.Constant(ir.IntType(32), GRAD))
        step = builder.insert_element(step, args[3], ir.Constant(ir.IntType(32), HESS))
        builder.store(builder.fadd(builder.load(at, align=8), step), at, align=8)
        return context.get_dummy_value()

    return sig, codegen


#: A histogram pass over exactly this many features has its row's additions unrolled (a loop
#: of a constant count): 16-22% faster a row in a microbenchmark (16 features), where the
#: loop over a variable count sets up its unrolled additions again for every row
FEATURE_BLOCK = 16


@njit(cache=True)
def _histogram_block(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted, first_order,
                     hist, w_lo, w_hi, with_sparse):
    """The node's histogram for the features wide[w_lo:w_hi], and where with_sparse for the
    sparse features (``sparse[q] = (feature, default code)``, see base.sparse_features).

    Wide features: one pass over the rows, channels computed on the fly, every feature of a
    row added to its bin. Sparse features: in the same pass, only a row's codes other than
    its feature's default are added (cells: their flat bins f * n_codes + code, row i's at
    cells[cells[i]:cells[i + 1]]), and each default bin is then the block's totals minus its
    feature's other bins (_fold_defaults, the reference's fold_default_bins). Covertype's 44
    one-hot features cost a row its two codes that are 1, not 44 additions. Every other bin is
    summed in row order, as the reference sums it.
    """
    if hist.shape[2] != LANES:
        raise ValueError("_histogram_block: the histogram needs LANES channels")
    W = hist.shape[1]
    for q in range(w_lo, w_hi):
        hist[wide[q]] = 0.0
    if w_hi - w_lo > _features_per_pass(W) and stop > start:
        # (np.int64: one compiled copy, whether w_lo is the literal 0 or not)
        _histogram_by_passes(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                             first_order, hist, np.int64(w_lo), w_hi, with_sparse)
        return
    if sparse.shape[0] == 0:  # wide is every feature in order (no indirection: 10% faster on letter)
        if (weighted or first_order) and w_hi - w_lo == FEATURE_BLOCK:  # (FEATURE_BLOCK's note)
            for j in range(start, stop):
                i = _at(rows, j)
                g, h = _row_channels(i, r, s, p, pct, top, y, _at(w, i) if weighted else 1.0, weighted, first_order)
                for f in range(FEATURE_BLOCK):
                    _add_to_bin(hist, (w_lo + f) * W + _at2(codes, i, w_lo + f), g, h)
        elif weighted or first_order:
            for j in range(start, stop):
                i = _at(rows, j)
                g, h = _row_channels(i, r, s, p, pct, top, y, _at(w, i) if weighted else 1.0, weighted, first_order)
                for f in range(w_lo, w_hi):  # (_at2: the wraparound cost 6-26% in a microbenchmark)
                    _add_to_bin(hist, f * W + _at2(codes, i, f), g, h)
        elif w_hi - w_lo == FEATURE_BLOCK:  # (FEATURE_BLOCK's note)
            for j in range(start, stop):
                i = _at(rows, j)
                g, h = _pair_stat(i, r, s, p, pct, top, y)
                for f in range(FEATURE_BLOCK):
                    _add_to_bin(hist, (w_lo + f) * W + _at2(codes, i, w_lo + f), g, h)
        else:  # the same without the flags in the loop, which LLVM leaves there: 1.2-1.4x faster
            for j in range(start, stop):
                i = _at(rows, j)
                g, h = _pair_stat(i, r, s, p, pct, top, y)
                for f in range(w_lo, w_hi):
                    _add_to_bin(hist, f * W + _at2(codes, i, f), g, h)
        return
    if with_sparse:
        for q in range(sparse.shape[0]):
            hist[sparse[q, 0]] = 0.0
    total_g = 0.0
    total_h = 0.0
    for j in range(start, stop):
        i = _at(rows, j)
        g, h = _row_channels(i, r, s, p, pct, top, y, _at(w, i) if weighted else 1.0, weighted, first_order)
        for q in range(w_lo, w_hi):
            f = wide[q]
            _add_to_bin(hist, f * W + _at2(codes, i, f), g, h)
        if with_sparse:
            total_g += g
            total_h += h
            for q in range(cells[i], cells[i + 1]):
                _add_to_bin(hist, cells[q], g, h)
    if with_sparse:
        _fold_pair_defaults(hist, sparse, total_g, total_h, stop - start)


#: _histogram_block adds more features than fill this many bytes of histogram a few at a time:
#: a pass over the node's rows for each block of them, so that the bins one pass adds to stay in
#: the core's cache (2000 features of 256 codes are 16 MB of bins, and a row's additions went to
#: 2000 cache lines far apart)
HIST_PASS_BYTES = 1 << 18


@njit(cache=True)
def _features_per_pass(n_codes):
    """How many features of n_codes bins _histogram_block adds in one pass over the rows (a
    multiple of FEATURE_BLOCK, at least one block)."""
    fit = HIST_PASS_BYTES // (n_codes * LANES * 8)
    return max(FEATURE_BLOCK, fit // FEATURE_BLOCK * FEATURE_BLOCK)


@njit(cache=True)
def _histogram_by_passes(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                         first_order, hist, w_lo, w_hi, with_sparse):
    """_histogram_block of many features (the caller zeroed their bins): the rows' channels
    once, then a pass over the rows for each _features_per_pass features, and the sparse
    features' cells in a last pass. Every bin gets the same additions in the same row order as
    in one pass, so the histogram is the same bit for bit."""
    W = hist.shape[1]
    n = stop - start
    gh = np.empty((n, 2))
    for j in range(start, stop):
        i = _at(rows, j)
        g, h = _row_channels(i, r, s, p, pct, top, y, _at(w, i) if weighted else 1.0, weighted, first_order)
        gh[j - start, 0] = g
        gh[j - start, 1] = h
    dense = sparse.shape[0] == 0  # wide is every feature in order
    per_pass = _features_per_pass(W)
    for b_lo in range(w_lo, w_hi, per_pass):
        b_hi = min(b_lo + per_pass, w_hi)
        if dense:
            full = b_lo + (b_hi - b_lo) // FEATURE_BLOCK * FEATURE_BLOCK
            for j in range(start, stop):
                i = _at(rows, j)
                g = gh[j - start, 0]
                h = gh[j - start, 1]
                for f0 in range(b_lo, full, FEATURE_BLOCK):  # (the unrolled block of FEATURE_BLOCK's note)
                    for f in range(FEATURE_BLOCK):
                        _add_to_bin(hist, (f0 + f) * W + _at2(codes, i, f0 + f), g, h)
                for f in range(full, b_hi):
                    _add_to_bin(hist, f * W + _at2(codes, i, f), g, h)
        else:
            for j in range(start, stop):
                i = _at(rows, j)
                g = gh[j - start, 0]
                h = gh[j - start, 1]
                for q in range(b_lo, b_hi):
                    f = wide[q]
                    _add_to_bin(hist, f * W + _at2(codes, i, f), g, h)
    if with_sparse and not dense:
        for q in range(sparse.shape[0]):
            hist[sparse[q, 0]] = 0.0
        total_g = 0.0
        total_h = 0.0
        for j in range(start, stop):
            i = _at(rows, j)
            g = gh[j - start, 0]
            h = gh[j - start, 1]
            total_g += g
            total_h += h
            for q in range(cells[i], cells[i + 1]):
                _add_to_bin(hist, cells[q], g, h)
        _fold_pair_defaults(hist, sparse, total_g, total_h, n)


@njit(cache=True)
def _fold_defaults(hist, sparse, totals, n):
    """Each sparse feature's default bin of a block's histogram (value channels 0..C-1, C =
    len(totals), then the count; any channels after it are 0): the block's totals (its channels
    summed in row order, from 0.0; n rows) minus the feature's other bins in code order, and 0
    in every channel where no row has the default code. Bins that hold no row are 0.0 and
    skipped (subtracting 0.0 changes nothing). As numpy.fold_default_bins."""
    W = hist.shape[1]
    C = totals.shape[0]
    acc = np.empty(C + 1)
    for q in range(sparse.shape[0]):
        f = sparse[q, 0]
        d = sparse[q, 1]
        for c in range(C):
            acc[c] = totals[c]
        acc[C] = float(n)
        for b in range(W):
            if b != d and hist[f, b, C] != 0.0:
                for c in range(C + 1):
                    acc[c] -= hist[f, b, c]
        empty = acc[C] == 0.0
        for c in range(C + 1):
            hist[f, d, c] = 0.0 if empty else acc[c]
        for c in range(C + 1, hist.shape[2]):
            hist[f, d, c] = 0.0


@njit(cache=True)
def _fold_pair_defaults(hist, sparse, total_g, total_h, n):
    """_fold_defaults of a pair histogram, its totals (w g, w h) given."""
    totals = np.empty(2)
    totals[0] = total_g
    totals[1] = total_h
    _fold_defaults(hist, sparse, totals, n)


# The parallel kernels give every thread its own accumulators (a block of features, or half of
# a node's rows), zero like the shared ones, copied out at the end: threads summing into one
# shared array would write to the same cache lines at every row (false sharing), which made
# two threads several times slower than one.


@njit(cache=True, parallel=True)
def _histogram_parallel(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted, first_order,
                        hist, n_blocks):
    """_histogram_block of one node by n_blocks threads, each with a block of the wide
    features and its own histogram (copied out); the first block also has the sparse ones."""
    n_wide = wide.shape[0]
    for block in prange(n_blocks):
        w_lo = block * n_wide // n_blocks
        w_hi = (block + 1) * n_wide // n_blocks
        own = np.empty(hist.shape)
        _histogram_block(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                         first_order, own, w_lo, w_hi, block == 0)
        for q in range(w_lo, w_hi):
            _copy2(own[wide[q]], hist[wide[q]])
        if block == 0:
            for q in range(sparse.shape[0]):
                _copy2(own[sparse[q, 0]], hist[sparse[q, 0]])


@njit(cache=True)
def _node_histogram(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted, first_order,
                    hist, second):
    """The node's histogram on one thread; of _hist_halves_rows rows or more, its halves' into
    hist and second (best_split adds them bin by bin, as the reference's sum of the halves).
    Returns whether it was halved."""
    if stop - start >= _hist_halves_rows(hist.shape[1]):
        mid = start + (stop - start) // 2
        _histogram_block(rows, start, mid, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                         first_order, hist, 0, wide.shape[0], WITH_SPARSE)
        _histogram_block(rows, mid, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                         first_order, second, 0, wide.shape[0], WITH_SPARSE)
        return True
    _histogram_block(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted, first_order,
                     hist, 0, wide.shape[0], WITH_SPARSE)
    return False


@njit(cache=True, parallel=True)
def _histogram_halves_parallel(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                               first_order, hist, second):
    """The halves of a node of _hist_halves_rows rows or more on two threads: the first into
    hist, the second into second."""
    for half in prange(2):
        lo, hi = _share(np.int64(half), start, stop, _hist_halves_rows(hist.shape[1]))
        if half == 0:
            _histogram_block(rows, lo, hi, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                             first_order, hist, 0, wide.shape[0], WITH_SPARSE)
        else:
            _histogram_block(rows, lo, hi, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                             first_order, second, 0, wide.shape[0], WITH_SPARSE)


@njit(cache=True)
def _node_histogram_threads(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                            first_order, hist, second, n_threads):
    """The node's histogram: its halves on two threads (_hist_halves_rows rows or more), or by
    feature blocks on n_threads threads where it is large enough, or on one thread. Returns
    whether it was halved (the halves in hist and second)."""
    if n_threads > 1 and stop - start >= _hist_halves_rows(hist.shape[1]):
        _histogram_halves_parallel(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                                   first_order, hist, second)
        return True
    if n_threads > 1 and (stop - start) * codes.shape[1] >= HISTOGRAM_CELLS and wide.shape[0] > 1:
        _histogram_parallel(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                            first_order, hist, min(n_threads, wide.shape[0]))
        return False
    return _node_histogram(rows, start, stop, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted,
                           first_order, hist, second)


@njit(cache=True)
def _choose_pair(node, sums_state, rows, start, stop, p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s, pair,
                 node_stats):
    """pair[node]: AOSO's by eq (33) (or (32)), else (fixed_r, fixed_s).

    AOSO, sums_state: TO_SUM, the node sums its class sums from its rows (into
    node_stats[node]); SUMMED, node_stats[node] holds them; DERIVED, it holds derived ones
    (derived_stats, split_stats), used where the pair they give is certain (certain_r,
    certain_s), else the node sums its rows after all. With summed or derived sums, s is taken
    without the cross sums where their bounds decide it (s_without_cross, unweighted rows).
    """
    if sums_state == PAIRED:
        return
    K = p.shape[1]
    lo = start[node]
    hi = stop[node]
    if fixed_r < 0:
        # the thread's own accumulators: rows of one shared (nodes, K) array would share a
        # cache line, written by both threads at every row (false sharing made two threads
        # slower than one)
        stats = np.empty((N_STATS, K))
        C_own = np.empty(K)
        n = hi - lo
        r = -1
        s = -1
        if sums_state == SUMMED or sums_state == DERIVED:
            _copy2(node_stats[node], stats)
            r = pick_r(stats[STAT_G]) if sums_state == SUMMED else certain_r(stats, n)
            if r >= 0 and not (rule_eq32 or weighted):  # s by the bounds alone, where they decide it
                s = s_without_cross(stats, n, r)
            if r >= 0 and s < 0:
                node_cross_sums(rows, lo, hi, p, w, weighted, rule_eq32, r, C_own)
                if sums_state == SUMMED:
                    s = pick_s(stats[STAT_G], stats[STAT_HD], C_own, r, rule_eq32)
                else:
                    s = certain_s(stats, n, C_own, r, rule_eq32)
        if s < 0:  # the class sums from the node's rows
            G_own = np.empty(K)
            Hd_own = np.empty(K)
            A_own = np.empty(K)
            node_class_sums(rows, lo, hi, p, pct, top, y, w, weighted, G_own, Hd_own, A_own)
            summed_stats(G_own, Hd_own, A_own, n, stats)
            _copy2(stats, node_stats[node])
            r_own = pick_r(G_own)
            if r_own != r:
                node_cross_sums(rows, lo, hi, p, w, weighted, rule_eq32, r_own, C_own)
            r = r_own
            s = pick_s(G_own, Hd_own, C_own, r, rule_eq32)
        pair[node, 0] = r
        pair[node, 1] = s
    else:
        pair[node, 0] = fixed_r
        pair[node, 1] = fixed_s


@njit(cache=True)
def _keep_split(slot, node, hist, second, halved, min_samples_leaf, min_child_weight, allowed, sums, split_gain,
                feature, bin_, missing_left, prefix, suffix, cand_gain):
    """The node's best split from its histogram hist[slot] (halved: hist[slot] + second[slot]),
    and its sums, kept if its gain is > 0."""
    g, f, bb, ml = best_split(hist[slot], second[slot], halved, min_samples_leaf, min_child_weight, allowed, sums[node],
                              prefix[slot], suffix[slot], cand_gain[slot])
    if g > 0.0:
        split_gain[node] = g
        feature[node] = f
        bin_[node] = bb
        missing_left[node] = ml


@njit(cache=True)
def _evaluate_node(slot, node, can_grow, sums_state, rows, start, stop, codes, wide, sparse, cells, p, pct, top,
                   y, w, weighted, rule_eq32, fixed_r, fixed_s, first_order, min_samples_leaf, min_child_weight,
                   allowed, pair, sums, split_gain, feature, bin_, missing_left, node_stats, hist, second, prefix,
                   suffix, cand_gain, n_threads, derive, small_slot, small_node, reuse, pp_r, pp_s, parent_hist):
    """One node of a batch: its pair, then its histogram (by halves or feature blocks on
    n_threads threads where it is large enough) and best split, or only its sums if it cannot
    be split; with the batch slot's scratch arrays.

    derive: the node is a split's larger child, whose parent's pair is (pp_r, pp_s) and whose
    parent's histogram is parent_hist; if it has that pair, its histogram is derived
    (_derive_histogram) from the smaller child's under it: the one in slot small_slot where
    reuse (the smaller child, evaluated before, has the pair too), else summed here."""
    _choose_pair(node, sums_state, rows, start, stop, p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s, pair,
                 node_stats)
    lo = start[node]
    hi = stop[node]
    if can_grow and hi - lo >= 2 * min_samples_leaf:
        if derive and _is_pair(pair, node, pp_r, pp_s):
            src = small_slot if reuse else slot
            if reuse:
                halved = stop[small_node] - start[small_node] >= _hist_halves_rows(hist.shape[2])
            else:
                halved = _node_histogram_threads(rows, start[small_node], stop[small_node], pp_r, pp_s, codes, wide,
                                                 sparse, cells, p, pct, top, y, w, weighted, first_order, hist[slot],
                                                 second[slot], n_threads)
            _derive_histogram(parent_hist, hist[src], second[src], halved, hist[slot])
            halved = False
        else:
            halved = _node_histogram_threads(rows, lo, hi, pair[node, 0], pair[node, 1], codes, wide, sparse, cells,
                                             p, pct, top, y, w, weighted, first_order, hist[slot], second[slot],
                                             n_threads)
        _keep_split(slot, node, hist, second, halved, min_samples_leaf, min_child_weight, allowed, sums, split_gain,
                    feature, bin_, missing_left, prefix, suffix, cand_gain)
    else:
        node_sums(rows, lo, hi, pair[node, 0], pair[node, 1], p, pct, top, y, w, weighted, sums[node])


@njit(cache=True)
def _evaluate_node_alone(slot, node, can_grow, sums_state, rows, start, stop, codes, wide, sparse, cells, p, pct,
                         top, y, w, weighted, rule_eq32, fixed_r, fixed_s, first_order, min_samples_leaf,
                         min_child_weight, allowed, pair, sums, split_gain, feature, bin_, missing_left, node_stats,
                         hist, second, prefix, suffix, cand_gain, derive, small_node, pp_r, pp_s, parent_hist):
    """_evaluate_node on one thread, for a parallel region: it calls no parallel kernel, which
    keeps the region's compilation short (a parallel kernel compiled inside a region cost
    seconds at the first fit). A derived histogram's smaller child is summed here (the other
    thread sums its own)."""
    _choose_pair(node, sums_state, rows, start, stop, p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s, pair,
                 node_stats)
    lo = start[node]
    hi = stop[node]
    if can_grow and hi - lo >= 2 * min_samples_leaf:
        if derive and _is_pair(pair, node, pp_r, pp_s):
            halved = _node_histogram(rows, start[small_node], stop[small_node], pp_r, pp_s, codes, wide, sparse,
                                     cells, p, pct, top, y, w, weighted, first_order, hist[slot], second[slot])
            _derive_histogram(parent_hist, hist[slot], second[slot], halved, hist[slot])
            halved = False
        else:
            halved = _node_histogram(rows, lo, hi, pair[node, 0], pair[node, 1], codes, wide, sparse, cells, p, pct,
                                     top, y, w, weighted, first_order, hist[slot], second[slot])
        _keep_split(slot, node, hist, second, halved, min_samples_leaf, min_child_weight, allowed, sums, split_gain,
                    feature, bin_, missing_left, prefix, suffix, cand_gain)
    else:
        node_sums(rows, lo, hi, pair[node, 0], pair[node, 1], p, pct, top, y, w, weighted, sums[node])


#: The stages of _siblings_parallel
WHOLE, PAIRS, HALVES, SPLITS, CROSS, LARGE, BATCH = (np.int64(0), np.int64(1), np.int64(2), np.int64(3), np.int64(4),
                                                     np.int64(5), np.int64(6))


@njit(cache=True)
def _share(thread, lo, hi, halves_rows):
    """The rows [lo, hi) of a node that thread 0 or 1 sums by the halves rule (HALVES_ROWS for
    cross sums, _hist_halves_rows for histograms): of a node of halves_rows rows or more, its
    half; of a smaller one, all (thread 0) or none (thread 1)."""
    if hi - lo < halves_rows:
        return (lo, hi) if thread == 0 else (hi, hi)
    mid = lo + (hi - lo) // 2
    return (lo, mid) if thread == 0 else (mid, hi)


@njit(cache=True)
def _sibling_cross(thread, n_slots, batch, pair_r, rows, start, stop, p, w, weighted, cross):
    """Thread `thread`'s share of the cross sums C_rk of the batch's nodes whose r is known
    (pair_r[slot] >= 0): thread 1 sums the second half of each node of HALVES_ROWS rows or
    more into cross[1, slot], thread 0 the first half into cross[0, slot], and a smaller node
    whole."""
    K = p.shape[1]
    for slot in range(n_slots):
        node = batch[slot]
        lo, hi = _share(thread, start[node], stop[node], HALVES_ROWS)
        if pair_r[slot] < 0 or (thread == 1 and hi == lo):
            continue
        own = np.zeros(K)
        _cross_sums(rows, lo, hi, p, w, weighted, pair_r[slot], own, 0, K)
        for k in range(K):
            cross[thread, slot, k] = own[k]


#: Entries of grow_tree's plan of a batch's histogram subtraction (an int64 array): the slot of
#: the larger child whose histogram is derived (-1: none), the parent's pair, and whether the
#: smaller child's own histogram is the one to subtract (it grows and has the parent's pair)
DERIVED_SLOT, PARENT_R, PARENT_S, REUSE = 0, 1, 2, 3
#: and, for the stage BATCH: the smaller child's slot, whether its class sums are summed by
#: halves (1) or on one thread (0), whether the batch's cross sums are summed by halves in the
#: stage (1: the stage CROSS's), and the parent node
SMALL_SLOT, SPLIT_SUMS, CROSS_SUMS, PARENT_NODE = 4, 5, 6, 7
PLAN_SIZE = 8


@njit(cache=True)
def _sibling_halves(thread, batch, grows, rows, start, stop, pair, codes, wide, sparse, cells, p, pct, top, y, w,
                    weighted, first_order, hist, second, plan):
    """Thread `thread`'s share of the histograms of a split's two children (slots 0 and 1 of the
    batch, those that grow): thread 1 sums the second half of each child of _hist_halves_rows
    rows or more into second[slot], thread 0 the first half into hist[slot], and a smaller child
    whole. A derived child (plan) has none of its own: in its slot, the smaller child's under
    the parent's pair (a small one whole on thread 1, while thread 0 sums the smaller child's
    own), unless plan reuses the smaller child's own."""
    for slot in range(2):
        node = batch[slot]
        r = pair[node, 0]
        s = pair[node, 1]
        whole_on = 0  # the thread that sums a child below the halves rule whole
        if slot == plan[DERIVED_SLOT]:
            if plan[REUSE]:
                continue
            node = batch[1 - slot]  # the smaller child's rows under the parent's pair
            r = plan[PARENT_R]
            s = plan[PARENT_S]
            whole_on = 1  # (thread 0 sums the smaller child's own)
        if not grows[slot]:
            continue
        lo, hi = start[node], stop[node]
        target = hist[slot]
        if hi - lo >= _hist_halves_rows(hist.shape[2]):
            lo, hi = _share(thread, lo, hi, _hist_halves_rows(hist.shape[2]))
            if thread == 1:
                target = second[slot]
        elif thread != whole_on:
            continue
        _histogram_block(rows, lo, hi, r, s, codes, wide, sparse, cells, p, pct, top, y, w, weighted, first_order,
                         target, 0, wide.shape[0], WITH_SPARSE)


@njit(cache=True)
def _sibling_split(slot, batch, grows, rows, start, stop, pair, p, pct, top, y, w, weighted, min_samples_leaf,
                   min_child_weight, allowed, sums, split_gain, feature, bin_, missing_left, hist, second, prefix,
                   suffix, cand_gain, plan, parent_hist):
    """A child's best split (of the sum of its halves, after _sibling_halves, where it has
    _hist_halves_rows rows or more; of its derived histogram, made here, where plan derives
    it) or, if it does not grow, its sums."""
    node = batch[slot]
    if grows[slot]:
        halved = stop[node] - start[node] >= _hist_halves_rows(hist.shape[2])
        if slot == plan[DERIVED_SLOT]:
            small = batch[1 - slot]
            src = 1 - slot if plan[REUSE] else slot
            small_halved = stop[small] - start[small] >= _hist_halves_rows(hist.shape[2])
            _derive_histogram(parent_hist, hist[src], second[src], small_halved, hist[slot])
            halved = False
        _keep_split(slot, node, hist, second, halved, min_samples_leaf, min_child_weight, allowed, sums, split_gain,
                    feature, bin_, missing_left, prefix, suffix, cand_gain)
    else:
        node_sums(rows, start[node], stop[node], pair[node, 0], pair[node, 1], p, pct, top, y, w, weighted, sums[node])


@njit(cache=True, parallel=True)
def _siblings_parallel(stage, batch, can_grow, grows, sums_state, rows, start, stop, codes, wide, sparse, cells,
                       p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s, first_order, min_samples_leaf,
                       min_child_weight, allowed, pair, sums, split_gain, feature, bin_, missing_left, node_stats, hist,
                       second, prefix, suffix, cand_gain, n_slots, pair_r, cross, plan, parent_hist, bar, halves):
    """A split's two children on two threads, one stage: WHOLE, a child a thread, all its passes;
    PAIRS, a child's pair a thread; HALVES, the histograms, the large children's halves a thread
    each (_sibling_halves); SPLITS, a child's split a thread (_sibling_split); CROSS, the cross
    sums of the first n_slots nodes of the batch whose r is known, large ones a half a thread
    (_sibling_cross); LARGE, PAIRS (unless both are paired), _settle_plan, HALVES and SPLITS in
    one region, the threads meeting at bar between them (_barrier: only where grow_tree found
    them _concurrent); BATCH, an AOSO split's whole batch in one such region: the smaller
    child's class sums (by halves into halves, or on the first thread; plan's BATCH entries),
    _batch_class_stats, the stage CROSS and _pairs_s where plan says (unless both nodes
    were PAIRED by the bounds of their class sums, in _pairs_r), then LARGE's stages. plan
    and parent_hist: the histogram subtraction (grow_tree; in the stage WHOLE, plan's slot is
    derived if its pair turns out to be the parent's).

    numba hoists the body's loop-invariant reads out of the loop (such as sums_state[0]: its
    writes are in the functions called): an entry that a stage writes before another reads it
    is read at an index that depends on the thread (sums_state[t], sums_state[1 - t])."""
    for thread in prange(2):
        t = np.int64(thread)  # (a prange index is unsigned: the helpers are compiled for int64)
        if stage == CROSS:
            _sibling_cross(t, n_slots, batch, pair_r, rows, start, stop, p, w, weighted, cross)
        elif stage == WHOLE:
            _evaluate_node_alone(t, batch[t], can_grow, sums_state[t], rows, start, stop, codes, wide, sparse, cells,
                                 p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s, first_order,
                                 min_samples_leaf, min_child_weight, allowed, pair, sums, split_gain, feature, bin_,
                                 missing_left, node_stats, hist, second, prefix, suffix, cand_gain,
                                 t == plan[DERIVED_SLOT], batch[1 - t], plan[PARENT_R], plan[PARENT_S], parent_hist)
        elif stage == PAIRS:
            _choose_pair(batch[t], sums_state[t], rows, start, stop, p, pct, top, y, w, weighted, rule_eq32, fixed_r,
                         fixed_s, pair, node_stats)
        elif stage == HALVES:
            _sibling_halves(t, batch, grows, rows, start, stop, pair, codes, wide, sparse, cells, p, pct, top, y,
                            w, weighted, first_order, hist, second, plan)
        elif stage == LARGE or stage == BATCH:  # one region, the threads meeting between the stages
            if stage == BATCH:
                small = plan[SMALL_SLOT]
                node = batch[small]
                if plan[SPLIT_SUMS] == 1:
                    _half_class_sums(t, rows, start[node], stop[node], p, pct, top, y, w, weighted, halves)
                    _barrier(bar)
                if t == 0:
                    _batch_class_stats(batch, small, plan[PARENT_NODE], plan[SPLIT_SUMS] == 1, plan[CROSS_SUMS] == 1,
                                       rows, start, stop, p, pct, top, y, w, weighted, halves, node_stats, sums_state,
                                       pair_r, pair)
                _barrier(bar)
                if plan[CROSS_SUMS] == 1 and not (sums_state[t] == PAIRED and sums_state[1 - t] == PAIRED):
                    _sibling_cross(t, np.int64(2), batch, pair_r, rows, start, stop, p, w, weighted, cross)
                    _barrier(bar)
                    if t == 0:
                        _pairs_s(np.int64(2), batch, sums_state, rows, start, stop, p, pct, top, y, w, weighted,
                                 rule_eq32, node_stats, pair, pair_r, cross)
                    _barrier(bar)
            if not (sums_state[t] == PAIRED and sums_state[1 - t] == PAIRED):  # (BATCH's _pairs_s may pair both)
                _choose_pair(batch[t], sums_state[t], rows, start, stop, p, pct, top, y, w, weighted, rule_eq32,
                             fixed_r, fixed_s, pair, node_stats)
                _barrier(bar)
            if t == 0:
                _settle_plan(plan, batch, grows, pair)
            _barrier(bar)
            _sibling_halves(t, batch, grows, rows, start, stop, pair, codes, wide, sparse, cells, p, pct, top, y,
                            w, weighted, first_order, hist, second, plan)
            _barrier(bar)
            _sibling_split(t, batch, grows, rows, start, stop, pair, p, pct, top, y, w, weighted, min_samples_leaf,
                           min_child_weight, allowed, sums, split_gain, feature, bin_, missing_left, hist, second,
                           prefix, suffix, cand_gain, plan, parent_hist)
        else:
            _sibling_split(t, batch, grows, rows, start, stop, pair, p, pct, top, y, w, weighted, min_samples_leaf,
                           min_child_weight, allowed, sums, split_gain, feature, bin_, missing_left, hist, second,
                           prefix, suffix, cand_gain, plan, parent_hist)


@njit(cache=True)
def _pairs_r(n_slots, batch, sums_state, start, stop, node_stats, pair_r, pair, weighted):
    """pair_r[slot]: the first class r of each of the batch's first n_slots nodes, as
    _choose_pair picks it from summed or derived class sums (-1: not certain, or no sums). A
    node whose s the bounds decide (s_without_cross, unweighted) gets its pair here, PAIRED,
    and no r in pair_r: it needs no cross sums (eq (33): the stage CROSS is for it)."""
    for slot in range(n_slots):
        node = batch[slot]
        n = stop[node] - start[node]
        if sums_state[slot] == SUMMED:
            pair_r[slot] = pick_r(node_stats[node, STAT_G])
        elif sums_state[slot] == DERIVED:
            pair_r[slot] = certain_r(node_stats[node], n)
        else:
            pair_r[slot] = -1
        if pair_r[slot] >= 0 and not weighted:
            s = s_without_cross(node_stats[node], n, pair_r[slot])
            if s >= 0:
                pair[node, 0] = pair_r[slot]
                pair[node, 1] = s
                sums_state[slot] = PAIRED
                pair_r[slot] = -1


@njit(cache=True)
def _combined_cross(cross, slot, n, C):
    """C = a node's cross sums from its threads' shares (stage CROSS): the halves' sum for a
    node of n >= HALVES_ROWS rows, as node_cross_sums adds them."""
    for k in range(C.shape[0]):
        C[k] = (cross[0, slot, k] + cross[1, slot, k]) if n >= HALVES_ROWS else cross[0, slot, k]


@njit(cache=True)
def _pairs_s(n_slots, batch, sums_state, rows, start, stop, p, pct, top, y, w, weighted, rule_eq32, node_stats, pair,
             pair_r, cross):
    """The pairs of the batch's first n_slots nodes, after _pairs_r and the stage CROSS (their
    cross sums, large nodes' by halves on two threads: the sums node_cross_sums gives): s as
    _choose_pair picks it; a node whose pair is not certain chooses it from its rows. Leaves
    sums_state PAIRED."""
    K = p.shape[1]
    for slot in range(n_slots):
        if sums_state[slot] == PAIRED:  # (by _pairs_r)
            continue
        node = batch[slot]
        n = stop[node] - start[node]
        r = pair_r[slot]
        s = -1
        if r >= 0:
            C = np.empty(K)
            _combined_cross(cross, slot, n, C)
            if sums_state[slot] == SUMMED:
                s = pick_s(node_stats[node, STAT_G], node_stats[node, STAT_HD], C, r, rule_eq32)
            else:
                s = certain_s(node_stats[node], n, C, r, rule_eq32)
        if s >= 0:
            pair[node, 0] = r
            pair[node, 1] = s
        else:  # not certain: from the node's rows, as _choose_pair does
            _choose_pair(node, TO_SUM, rows, start, stop, p, pct, top, y, w, weighted, rule_eq32, NONE, NONE, pair,
                         node_stats)
        sums_state[slot] = PAIRED


@njit(cache=True)
def _batch_class_stats(batch, small, parent, by_halves, with_cross, rows, start, stop, p, pct, top, y, w, weighted,
                       halves, node_stats, sums_state, pair_r, pair):
    """A split's class sums: the smaller child's from its rows (from its halves' sums, summed
    into halves by two threads, where by_halves: checked like derived sums), the larger's as the
    parent's minus the smaller's (used where the pair they give is certain: _choose_pair); and
    where with_cross, pair_r for the stage CROSS (_pairs_r)."""
    node = batch[small]
    n = stop[node] - start[node]
    if by_halves:
        _halves_stats(halves, n, node_stats[node])
        sums_state[small] = DERIVED
    else:
        K = p.shape[1]
        G_small = np.empty(K)
        Hd_small = np.empty(K)
        A_small = np.empty(K)
        node_class_sums(rows, start[node], stop[node], p, pct, top, y, w, weighted, G_small, Hd_small, A_small)
        summed_stats(G_small, Hd_small, A_small, n, node_stats[node])
        sums_state[small] = SUMMED
    derived_stats(node_stats[parent], node_stats[node], node_stats[batch[1 - small]])
    sums_state[1 - small] = DERIVED
    if with_cross:
        _pairs_r(np.int64(2), batch, sums_state, start, stop, node_stats, pair_r, pair, weighted)


@njit(cache=True)
def _settle_plan(plan, batch, grows, pair):
    """After a batch's pairs: plan derives its larger child's histogram only if that child
    grows and has the parent's pair, and reuses the smaller child's own if it grows and has it
    too."""
    b = plan[DERIVED_SLOT]
    if b < 0:
        return
    if not (grows[b] and _is_pair(pair, batch[b], plan[PARENT_R], plan[PARENT_S])):
        plan[DERIVED_SLOT] = -1
        return
    plan[REUSE] = 1 if grows[1 - b] and _is_pair(pair, batch[1 - b], plan[PARENT_R], plan[PARENT_S]) else 0


@njit(cache=True)
def grow_tree(codes, wide, columns, sparse, cells, y, w, weighted, p, pct, top, rows, n_codes, max_leaves,
              min_samples_leaf, min_child_weight, allowed, rule_eq32, n_threads, fixed_r, fixed_s, first_order,
              derive_histograms, leaf_clip, value_scale, root_sums, root_blocks, may_wait, n_root, max_depth):
    """Grow one tree best-first, as grower.TreeGrower does with the NumPy backend.

    The features are split into wide and sparse ones (wide: feature ids; sparse: (feature,
    default code) rows, cells: their codes other than the defaults; see _histogram_block and
    CpuBackend). columns, of shape (D, N), is the codes' feature-major copy (the partition
    reads it), or of shape (0, N) where it was not made. allowed (D booleans): the features the
    tree may split on (colsample_bytree's; best_split).

    fixed_r < 0: every node picks its pair (AOSO); else the tree's pair is (fixed_r, fixed_s).
    p, pct, top as CpuBackend.set_scores leaves them. derive_histograms: a split's larger child
    takes its histogram by subtraction where it has its parent's pair, as grower.TreeGrower
    does (where _derivable). root_blocks > 0: root_sums[:root_blocks] are the class sums of
    p's row blocks (softmax_from_exponentials made them with p): the root's class sums are
    theirs, exactly its own where one block has every row, else checked like derived ones.
    may_wait: numba's threading layer runs a two-iteration region on two threads at once where
    it has two (CpuBackend: OpenMP, workqueue), so that a large batch's stages can run in one
    region whose threads wait for each other between them (LARGE), where _concurrent.
    n_root < 0: the root has every row (rows is set to 0 .. N - 1 here); else its first n_root
    entries of rows as the caller arranged them (subsample's rows; root_blocks must be 0).
    max_depth >= 0: a node at that depth (the root's is 0) is not split; < 0: no limit.

    Returns n_nodes, the leaves' ids and segments (rows[start:stop], shape (n_leaves, 2)), in
    node order, the split nodes' ids, and node arrays in Tree's dtypes (n_nodes entries each,
    ids int32): pair (n, 2), value (eq 27 from the node's sums, as losses.node_value with
    leaf_clip and value_scale), n_samples, and per node the split (gain, feature, bin,
    missing_left) and children (-1 for leaves).
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

    # the histograms of a batch's nodes (hist = store[pool_pair]): a pair of store's slots a
    # batch, kept while a node of the batch may still be split (its larger child's histogram
    # is derived from it), then reused; derive False: one pair, every batch's
    derive = derive_histograms and _derivable(max_leaves, D, n_codes)
    n_pairs = max_leaves + 1 if derive else 1
    store = np.empty((n_pairs, 2, D, n_codes, LANES))
    free_pairs = np.arange(n_pairs)[::-1].copy()  # a stack: the last entry is the next pair
    n_free = n_pairs
    pool_pair = np.full(max_nodes, -1, np.int64)  # the pair of store that holds a node's histogram
    pool_slot = np.zeros(max_nodes, np.int64)  # and its slot there
    pool_live = np.zeros(n_pairs, np.int64)  # nodes of a pair that may still be split
    plan = np.full(PLAN_SIZE, -1, np.int64)  # the batch's subtraction (DERIVED_SLOT, ...), BATCH's entries
    prefix = np.empty((2, n_codes, 3))
    suffix = np.empty((2, n_codes, 3))
    cand_gain = np.empty((2, 2 * D * n_codes))
    node_stats = np.zeros((max_nodes, N_STATS, K))  # every node's class sums and their bounds (AOSO)
    sums_state = np.empty(2, np.int64)
    batch = np.empty(2, np.int64)
    grows = np.empty(2, np.bool_)  # which nodes of a batch get a histogram (the others only sums)
    pair_r = np.empty(2, np.int64)  # the batch's first classes r, before their cross sums
    cross = np.zeros((2, 2, K))  # [half, slot]: the batch's cross sums by halves
    second = np.empty((2, D, n_codes, LANES))  # the second halves' histograms of halved nodes
    scratch = np.empty(N, rows.dtype)
    scratch_right = np.empty(N if n_threads > 1 and N >= PARTITION_HALVES_ROWS else 0, rows.dtype)
    partition_counts = np.zeros(2, np.int64)

    bar = np.zeros(BARRIER_SIZE, np.int64)
    barriers = NONE  # whether a large batch's stages run in one region (BATCH, LARGE); -1: not known yet
    halves = np.empty((2, 3, K))  # a smaller child's class sums by halves
    if n_root < 0:
        for j in range(N):
            rows[j] = j
        n_root = N
    start[0] = 0
    stop[0] = n_root
    depth = np.zeros(max_nodes, np.int64)  # each node's depth, the root's 0
    n_nodes = 1
    n_leaves = 1
    batch[0] = 0  # evaluate the root
    n_batch = 1
    parent = -1
    while True:
        # the batch (the root, or a split's two children: one depth) may be split
        can_grow = n_leaves < max_leaves and (max_depth < 0 or depth[batch[0]] < max_depth)
        sums_state[:] = TO_SUM
        if n_free == 0:
            raise RuntimeError("grow_tree: no free histogram pair (a bug)")
        n_free -= 1
        at = free_pairs[n_free]
        hist = store[at]
        small = 0  # the smaller child's slot
        if n_batch == 2:
            small = 0 if stop[batch[0]] - start[batch[0]] <= stop[batch[1]] - start[batch[1]] else 1
        for b in range(n_batch):  # the nodes that get a histogram (the others only sums)
            grows[b] = can_grow and stop[batch[b]] - start[batch[b]] >= 2 * min_samples_leaf
        plan[:] = -1
        parent_hist = hist[0]  # (not read where no child is derived)
        if derive and parent >= 0:
            plan[DERIVED_SLOT] = 1 - small  # if its pair is the parent's (known after the pairs)
            plan[PARENT_R] = pair[parent, 0]
            plan[PARENT_S] = pair[parent, 1]
            plan[REUSE] = 0
            parent_hist = store[pool_pair[parent], pool_slot[parent]]
        siblings_parallel = (n_batch == 2 and n_threads > 1
                             and (stop[batch[1]] - start[batch[0]]) * (K + D) >= SIBLING_CELLS)
        if fixed_r < 0 and n_batch == 1 and root_blocks == 1:
            # the root's class sums as the softmax summed them: every row in row order, the sums
            # node_class_sums would make
            summed_stats(root_sums[0, 0], root_sums[0, 1], root_sums[0, 2], n_root, node_stats[0])
            sums_state[0] = SUMMED
        elif fixed_r < 0 and n_batch == 1 and root_blocks > 1:
            block_stats(root_sums, root_blocks, n_root, node_stats[0])  # checked like derived sums
            sums_state[0] = DERIVED
        elif fixed_r < 0 and n_batch == 1 and n_threads > 1 and n_root * K >= SIBLING_CELLS:
            # the root's class sums by halves on two threads, checked like derived sums
            split_stats(rows, ZERO, n_root, p, pct, top, y, w, weighted, node_stats[0])
            sums_state[0] = DERIVED
        largest = max(stop[batch[0]] - start[batch[0]], stop[batch[n_batch - 1]] - start[batch[n_batch - 1]])
        large = n_threads > 1 and largest >= HALVES_ROWS
        # a batch of _hist_halves_rows rows or more on two threads that may wait for each other:
        # its class sums, cross sums, pairs, histograms and splits in one region (BATCH, LARGE)
        one_region = siblings_parallel and largest >= _hist_halves_rows(n_codes) and may_wait
        if one_region and barriers < 0:  # found at the first such batch of the tree
            barriers = 1 if _concurrent() else 0
        one_region = one_region and barriers == 1
        if fixed_r < 0 and n_batch == 2:
            # the smaller child's class sums from its rows (by halves on two threads from
            # SPLIT_SUMS_CELLS cells: checked like derived sums), the larger's as the parent's minus
            # the smaller's (used where the pair they give is certain: _evaluate_node)
            node = batch[small]
            plan[SMALL_SLOT] = small
            plan[SPLIT_SUMS] = 1 if siblings_parallel and (stop[node] - start[node]) * K >= SPLIT_SUMS_CELLS else 0
            plan[CROSS_SUMS] = 1 if not rule_eq32 and large else 0
            plan[PARENT_NODE] = parent
            if not one_region:  # (else the stage BATCH does the same)
                if plan[SPLIT_SUMS] == 1:
                    _class_sums_by_halves(rows, start[node], stop[node], p, pct, top, y, w, weighted, halves)
                _batch_class_stats(batch, small, plan[PARENT_NODE], plan[SPLIT_SUMS] == 1, NO_CROSS, rows, start, stop,
                                   p, pct, top, y, w, weighted, halves, node_stats, sums_state, pair_r, pair)
        if fixed_r < 0 and not rule_eq32 and large and (n_batch == 1 or siblings_parallel) and not one_region:
            # a large node: its cross sums by halves on two threads (the pair then PAIRED)
            _pairs_r(n_batch, batch, sums_state, start, stop, node_stats, pair_r, pair, weighted)
            if pair_r[0] >= 0 or (n_batch == 2 and pair_r[1] >= 0):  # (else none needs cross sums)
                _siblings_parallel(CROSS, batch, can_grow, grows, sums_state, rows, start, stop, codes, wide,
                                   sparse, cells, p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s,
                                   first_order, min_samples_leaf, min_child_weight, allowed, pair, sums, split_gain,
                                   feature, bin_, missing_left, node_stats, hist, second, prefix, suffix, cand_gain,
                                   n_batch, pair_r, cross, plan, parent_hist, bar, halves)
            _pairs_s(n_batch, batch, sums_state, rows, start, stop, p, pct, top, y, w, weighted, rule_eq32, node_stats,
                     pair, pair_r, cross)
        if siblings_parallel and largest >= _hist_halves_rows(n_codes):
            # a child of _hist_halves_rows rows or more: the pairs (a child a thread; PAIRED
            # already where the stage CROSS chose them), every such child's histogram halves on
            # two threads (a smaller child whole on the first), then the splits (a child a
            # thread), which add the halves where they scan them (and derive a histogram)
            if one_region:  # the stages in one region, its threads meeting in between
                stages = BATCH if fixed_r < 0 else LARGE
                _siblings_parallel(stages, batch, can_grow, grows, sums_state, rows, start, stop, codes, wide, sparse,
                                   cells, p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s, first_order,
                                   min_samples_leaf, min_child_weight, allowed, pair, sums, split_gain, feature, bin_,
                                   missing_left, node_stats, hist, second, prefix, suffix, cand_gain, ZERO, pair_r,
                                   cross, plan, parent_hist, bar, halves)
            else:
                for stage in (PAIRS, HALVES, SPLITS):
                    if stage == PAIRS and sums_state[0] == PAIRED and sums_state[1] == PAIRED:
                        continue  # the stage CROSS chose both: no region to launch
                    if stage == HALVES:
                        _settle_plan(plan, batch, grows, pair)
                    _siblings_parallel(stage, batch, can_grow, grows, sums_state, rows, start, stop, codes, wide,
                                       sparse, cells, p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s,
                                       first_order, min_samples_leaf, min_child_weight, allowed, pair, sums, split_gain,
                                       feature, bin_, missing_left, node_stats, hist, second, prefix, suffix,
                                       cand_gain, ZERO, pair_r, cross, plan, parent_hist, bar, halves)
        elif siblings_parallel:
            _siblings_parallel(WHOLE, batch, can_grow, grows, sums_state, rows, start, stop, codes, wide, sparse,
                               cells, p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s, first_order,
                               min_samples_leaf, min_child_weight, allowed, pair, sums, split_gain, feature, bin_,
                               missing_left, node_stats, hist, second, prefix, suffix, cand_gain, ZERO, pair_r, cross,
                               plan, parent_hist, bar, halves)
        else:
            for q in range(n_batch):
                b = q if small == 0 else 1 - q  # the smaller child first: the larger may reuse its histogram
                if b == plan[DERIVED_SLOT]:
                    plan[REUSE] = grows[1 - b] and _is_pair(pair, batch[1 - b], plan[PARENT_R], plan[PARENT_S])
                _evaluate_node(b, batch[b], can_grow, sums_state[b], rows, start, stop, codes, wide, sparse, cells,
                               p, pct, top, y, w, weighted, rule_eq32, fixed_r, fixed_s, first_order,
                               min_samples_leaf, min_child_weight, allowed, pair, sums, split_gain, feature, bin_,
                               missing_left, node_stats, hist, second, prefix, suffix, cand_gain, n_threads,
                               b == plan[DERIVED_SLOT], 1 - b, batch[1 - b], plan[REUSE] == 1, plan[PARENT_R],
                               plan[PARENT_S], parent_hist)
        # the batch's histograms stay in their pair while a node may be split (a halved one's
        # made whole: its halves' sum, as its best split added them), the parent's pair is
        # released once its last such node has its children
        _settle_plan(plan, batch, grows, pair)  # the derived child, now that the pairs are known
        for b in range(n_batch):
            node = batch[b]
            pool_pair[node] = at
            pool_slot[node] = b
            if derive and split_gain[node] > 0.0:
                pool_live[at] += 1
                if b != plan[DERIVED_SLOT] and stop[node] - start[node] >= _hist_halves_rows(n_codes):
                    _add_into(hist[b], second[b])
        if parent >= 0 and derive:
            held = pool_pair[parent]
            pool_live[held] -= 1
            if pool_live[held] == 0:
                free_pairs[n_free] = held
                n_free += 1
        if pool_live[at] == 0:
            free_pairs[n_free] = at
            n_free += 1
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
        if n_threads > 1 and stop[best] - start[best] >= PARTITION_HALVES_ROWS and columns.shape[0] > 0:
            n_left = partition_halves(rows, start[best], stop[best], columns[feature[best]], bin_[best],
                                      missing_left[best], missing_code, scratch, scratch_right, partition_counts)
        else:
            n_left = partition(rows, start[best], stop[best], codes, columns, feature[best], bin_[best],
                               missing_left[best], missing_code, scratch)
        lo = n_nodes
        start[lo] = start[best]
        stop[lo] = start[best] + n_left
        start[lo + 1] = start[best] + n_left
        stop[lo + 1] = stop[best]
        left[best] = lo
        right[best] = lo + 1
        depth[lo] = depth[lo + 1] = depth[best] + 1
        n_nodes += 2
        n_leaves += 1
        batch[0] = lo
        batch[1] = lo + 1
        n_batch = 2
        parent = best
    if first_order:  # the histograms summed weights: the values need the Hessian sums
        for node in range(n_nodes):
            node_sums(rows, start[node], stop[node], pair[node, 0], pair[node, 1], p, pct, top, y, w, weighted,
                      sums[node])
    # nodes that stayed leaves carry no split
    for node in range(n_nodes):
        if left[node] < 0:
            feature[node] = -1
            bin_[node] = -1
            missing_left[node] = False
            gain[node] = 0.0
    # the tree's arrays in Tree's dtypes (int32 ids), and its leaves' segments in node order
    n_leaves_out = 0
    for node in range(n_nodes):
        if left[node] < 0:
            n_leaves_out += 1
    leaf_ids = np.empty(n_leaves_out, np.int64)
    segments = np.empty((n_leaves_out, 2), np.int64)
    q = 0
    for node in range(n_nodes):
        if left[node] < 0:
            leaf_ids[q] = node
            segments[q, 0] = start[node]
            segments[q, 1] = stop[node]
            q += 1
    splits = np.empty(n_nodes - n_leaves_out, np.int64)
    value = np.empty(n_nodes)
    n_samples = np.empty(n_nodes, np.int64)
    q = 0
    for node in range(n_nodes):
        value[node] = _node_value(sums[node, GRAD], sums[node, HESS], leaf_clip, value_scale)
        n_samples[node] = np.int64(sums[node, COUNT])
        if left[node] >= 0:
            splits[q] = node
            q += 1
    return (n_nodes, leaf_ids, segments, splits, pair[:n_nodes].astype(np.int32), value, n_samples, gain[:n_nodes],
            feature[:n_nodes].astype(np.int32), bin_[:n_nodes].astype(np.int32), missing_left[:n_nodes],
            left[:n_nodes].astype(np.int32), right[:n_nodes].astype(np.int32))


#: softmax_from_exponentials' libm flag from grow_rounds (a NumPy bool: a literal True would
#: compile the kernel again, see KEEP_LAST)
LIBM = np.bool_(True)


@njit(cache=True)
def grow_rounds(codes, wide, columns, sparse, cells, y, w, weighted, p, pct, top, rows, n_codes, max_leaves,
                min_samples_leaf, min_child_weight, allowed, rule_eq32, n_threads, fixed_r, fixed_s, first_order,
                derive_histograms, leaf_clip, value_scale, root_sums, root_blocks, may_wait, n_root, max_depth,
                learning_rate, F, E, leaf_of, row_max, values, at, counts, margin, rest, tol, n_nodes, pair, value,
                n_samples, gain, feature, bin_, missing_left, left, right, losses):
    """Up to R = losses.shape[0] boosting iterations of one tree each in one call. Each grows
    its tree (grow_tree), then, where every leaf has a pair (pair_steps), adds the tree's steps
    to F, makes the next p (update_and_arguments, then softmax_from_exponentials with the C
    library's exp and log1p: libm True) and sums the loss's terms as NumPy sums them
    (_numpy_sum). The same kernels as the backend's separate calls, with the same arguments, so
    the same results, without the Python calls and the NumPy glue between them, which ran on
    caches the kernels had just emptied (0.37 ms a tree on pendigits, 0.53 ms on letter,
    2026-11-28). F, E, leaf_of ... rest as CpuBackend._score passes them (F the last scored,
    unchanged since). (A compiled caller of grow_tree links grow_tree's code into its own and
    optimises it again: a machine's first fit compiled in 122 s before this kernel, 148 s
    with it, one run each. numba's compile events and timers put this kernel's own part at
    12-20 s of a first fit's 163 s; grow_tree inlined here instead, one function, compiled no
    faster: 162 and 173 s against 168 and 173, alternated new processes, 2026-11-28.)

    Tree t has allowed[t] as its features (allowed[0] for every tree where allowed has one
    row), its nodes in row t of the node arrays (the first n_nodes[t] entries, Tree's dtypes)
    and its loss in losses[t]. Each tree's root takes its class sums from the scoring before it
    (root_blocks: the caller's for the first tree, then every block's, as CpuBackend._score
    leaves them). Stops after a tree whose loss is <= tol or not finite (where the boosting
    loop stops or raises), or whose leaves do not all have a pair (its loss NaN, F and p as
    before it: the caller finishes it). Returns the number of trees grown, whether the last
    one was scored, and its leaf segments and ids."""
    R = losses.shape[0]
    segments = np.empty((0, 2), np.int64)
    leaf_ids = np.empty(0, np.int64)
    blocks = root_blocks
    for t in range(R):
        mask = allowed[min(t, allowed.shape[0] - 1)]
        grown = grow_tree(codes, wide, columns, sparse, cells, y, w, weighted, p, pct, top, rows, n_codes,
                          max_leaves, min_samples_leaf, min_child_weight, mask, rule_eq32, n_threads, fixed_r,
                          fixed_s, first_order, derive_histograms, leaf_clip, value_scale, root_sums, blocks,
                          may_wait, n_root, max_depth)
        segments = grown[2]
        leaf_ids = grown[1]
        steps = np.empty((leaf_ids.shape[0], F.shape[1]))
        scored = pair_steps(grown[4], grown[5], leaf_ids, learning_rate, steps)
        loss = np.nan
        if scored:
            update_and_arguments(F, rows, segments[:, 0].copy(), segments[:, 1].copy(), steps, leaf_of, row_max,
                                 top, values, at, counts, y, margin)
            softmax_from_exponentials(E, values, at, counts, p, pct, top, rest, y, w, weighted, root_sums, margin,
                                      LIBM)
            loss = _numpy_sum(margin, ZERO, margin.shape[0])
        m = grown[0]
        n_nodes[t] = m
        pair[t, :m] = grown[4]
        value[t, :m] = grown[5]
        n_samples[t, :m] = grown[6]
        gain[t, :m] = grown[7]
        feature[t, :m] = grown[8]
        bin_[t, :m] = grown[9]
        missing_left[t, :m] = grown[10]
        left[t, :m] = grown[11]
        right[t, :m] = grown[12]
        losses[t] = loss
        if not scored:
            return t + 1, False, segments, leaf_ids
        blocks = counts.shape[0] if root_sums.shape[0] > 0 else 0
        if loss <= tol or not np.isfinite(loss):
            return t + 1, True, segments, leaf_ids
    return R, True, segments, leaf_ids


@njit(cache=True, inline="always")
def _node_value(G, H, clip, scale):
    """losses.node_value of one node with NumPy's operations: t = (-scale) G / H (an H of 0.0
    counts as 1.0), then np.clip's rule: NaN stays, else max with -clip, then min with clip."""
    t = -scale * G / (1.0 if H == 0.0 else H)
    if t != t:
        return t
    t = t if t > -clip else -clip
    return t if t < clip else clip


@njit(cache=True, parallel=True)
def vector_histogram(codes, idx, values, hist, n_blocks):
    """hist (n_features, n_codes, C + 1), zero on entry, += the rows idx's channel values
    (values[j] for row idx[j], C channels) and a count, per (feature, code): numpy's
    build_histogram, each bin summed in row order (the same sums). Features are split into
    n_blocks blocks, one per thread: a bin's sum never depends on them."""
    D = codes.shape[1]
    C = values.shape[1]
    for block in prange(n_blocks):
        f_lo = np.int64(block) * D // n_blocks
        f_hi = (np.int64(block) + 1) * D // n_blocks
        for j in range(idx.shape[0]):
            i = idx[j]
            for f in range(f_lo, f_hi):
                cell = hist[f, codes[i, f]]
                for c in range(C):
                    cell[c] += values[j, c]
                cell[C] += 1.0


@njit(cache=True, parallel=True)
def vector_histogram_rows(codes, idx, A, B, w, weighted, single, wide, sparse, cells, hist, n_blocks):
    """vector_histogram of the channel values the NumPy reference's _vector_channels would pass
    for the rows idx, read from the rows themselves (no gathered copy): single (AdaBoost.MH)
    the K channels A (W Y, as set_scores computes it); else (K-LogitBoost) the 2K channels A
    then B (g then the Hessian h), each times w[i] where weighted. The same values, summed in
    the same order: the same hist. The wide features are split into n_blocks blocks, a thread
    each; the first block also sums the sparse features' codes other than their defaults
    (cells, as _histogram_block) and folds their default bins (the reference's
    fold_default_bins). hist need not be zero on entry: each thread zeroes its features' part
    first (in parallel, and in its own cache). A thread's features go a few at a time, a pass
    over the rows each, where their bins are more than HIST_PASS_BYTES."""
    n_codes = hist.shape[1]
    K = A.shape[1]
    C = K if single else 2 * K
    n_wide = wide.shape[0]
    flat = hist.reshape(hist.shape[0] * n_codes, hist.shape[2])
    per_pass = max(1, HIST_PASS_BYTES // (n_codes * hist.shape[2] * 8))
    for block in prange(n_blocks):
        q_lo = np.int64(block) * n_wide // n_blocks
        q_hi = (np.int64(block) + 1) * n_wide // n_blocks
        with_sparse = block == 0 and sparse.shape[0] > 0
        for q in range(q_lo, q_hi):
            hist[wide[q]] = 0.0
        if with_sparse:
            for q in range(sparse.shape[0]):
                hist[sparse[q, 0]] = 0.0
        values = np.empty(C)
        totals = np.zeros(C)
        # a pass over the rows for each per_pass features (HIST_PASS_BYTES: the bins of one pass
        # stay in the core's cache), the sparse cells in the last; each bin's additions are in
        # row order, as in one pass
        n_passes = max(1, -(-(q_hi - q_lo) // per_pass))
        for a_pass in range(n_passes):
            p_lo = q_lo + a_pass * per_pass
            p_hi = min(p_lo + per_pass, q_hi)
            sparse_here = with_sparse and a_pass == n_passes - 1
            for j in range(idx.shape[0]):
                i = idx[j]
                if single:
                    for k in range(K):
                        values[k] = A[i, k]
                elif weighted:
                    for k in range(K):
                        values[k] = A[i, k] * w[i]
                        values[K + k] = B[i, k] * w[i]
                else:
                    for k in range(K):
                        values[k] = A[i, k]
                        values[K + k] = B[i, k]
                for q in range(p_lo, p_hi):
                    f = wide[q]
                    cell = hist[f, codes[i, f]]
                    for c in range(C):
                        cell[c] += values[c]
                    cell[C] += 1.0
                if sparse_here:
                    for c in range(C):
                        totals[c] += values[c]
                    for q in range(cells[i], cells[i + 1]):
                        cell = flat[cells[q]]
                        for c in range(C):
                            cell[c] += values[c]
                        cell[C] += 1.0
        if with_sparse:
            _fold_defaults(hist, sparse, totals, idx.shape[0])


# -- AdaBoost.MH's weights, for CpuVectorBackend ---------------------------------------------
@njit(cache=True)
def adaboost_arguments(F, Y, log_W0, W0, a, hamming_terms):
    """The steps of losses.adaboost_weights before its exponential, in one pass and the same
    values: a = log W0 - Y F, then minus its maximum top (NaN if any is, as NumPy's max);
    hamming_terms[:m] = W0 where Y F <= 0, in row-major order (as W0[Y F <= 0]). Returns
    (top, m)."""
    n, K = F.shape
    top = -np.inf
    m = 0
    for i in range(n):
        for k in range(K):
            yf = Y[i, k] * F[i, k]
            v = log_W0[i, k] - yf
            a[i, k] = v
            if v > top or v != v:
                if top == top:  # not NaN yet
                    top = v
            if yf <= 0.0:
                hamming_terms[m] = W0[i, k]
                m += 1
    for i in range(n):
        for k in range(K):
            a[i, k] -= top
    return top, m


# -- multi-label targets (paper 004), for CpuVectorBackend ----------------------------------
@njit(cache=True)
def _target_gradient(p, pc, eta):
    """losses.target_gradient of one value: p - eta, or -pc where eta is 1."""
    return -pc if eta == 1.0 else p - eta


@njit(cache=True, parallel=True)
def softmax_arguments(F, top, a, n_blocks):
    """The steps of losses._scaled_exponentials before its exponential: top[i] = the first
    largest score's class, a = F - c (c: the shift of the row maximum F[i, top[i]]). Rows in
    n_blocks blocks, a thread each."""
    n = F.shape[0]
    for block in prange(n_blocks):
        block = np.int64(block)
        for i in range(block * n // n_blocks, (block + 1) * n // n_blocks):
            m, t = _row_top(F, i)
            top[i] = t
            c = _shift(m)
            for k in range(F.shape[1]):
                a[i, k] = F[i, k] - c


@njit(cache=True, parallel=True)
def libm_exp(a, n_blocks):
    """a = exp(a) in place (a C-contiguous array), the C library's exp (numba's math.exp), in
    n_blocks blocks of its values, a thread each: NumPy's np.exp(a, out=a) where NumPy's exp is
    the C library's (cpu.libm_matches_numpy), on every thread."""
    flat = a.reshape(a.size)
    n = flat.shape[0]
    for block in prange(n_blocks):
        block = np.int64(block)
        for i in range(block * n // n_blocks, (block + 1) * n // n_blocks):
            flat[i] = math.exp(flat[i])


@njit(cache=True, parallel=True)
def softmax_parts(E, top, p, pc, rest, n_blocks):
    """losses._softmax_parts after its exponentials E = exp(F - c): with r the other classes'
    exponentials summed in class order, p = E / (E_top + r), pc = 1 - p (r / (E_top + r) at the
    top class), and rest = r / E_top. The same values."""
    n, K = E.shape
    for block in prange(n_blocks):
        block = np.int64(block)
        for i in range(block * n // n_blocks, (block + 1) * n // n_blocks):
            rest[i] = _row_softmax(E, i, top[i], p, pc)


@njit(cache=True)
def multilabel_losses(F, top, eta, log1p_rest, w, weighted, per_sample):
    """losses.multilabel_loss's per-row losses: sum over classes (as NumPy's sum rounds it) of
    eta_ik ((F_i,top - F_ik) + log1p(rest_i)) where eta_ik > 0, times w_i where weighted."""
    K = F.shape[1]
    terms = np.empty(K)
    for i in range(F.shape[0]):
        ft = F[i, top[i]]
        for k in range(K):
            terms[k] = eta[i, k] * ((ft - F[i, k]) + log1p_rest[i]) if eta[i, k] > 0 else 0.0
        loss = _numpy_sum(terms, ZERO, K)
        per_sample[i] = loss * w[i] if weighted else loss


@njit(cache=True)
def eta_class_sums(rows, start, stop, p, pc, eta, w, weighted, G, Hd):
    """G_k = sum w g_ik (g = p - eta, target_gradient's) and Hd_k = sum w p_ik pc_ik over the
    node rows[start:stop], in row order: the column sums of the reference's select_pairs."""
    K = p.shape[1]
    G[:] = 0.0
    Hd[:] = 0.0
    for j in range(start, stop):
        i = rows[j]
        for k in range(K):
            g = _target_gradient(p[i, k], pc[i, k], eta[i, k])
            hd = p[i, k] * pc[i, k]
            if weighted:
                g = g * w[i]
                hd = hd * w[i]
            G[k] += g
            Hd[k] += hd


@njit(cache=True)
def eta_pair_channels(rows, start, stop, r, s, p, pc, eta, w, weighted, first_order, out):
    """out[j - start] = (w g, w h) of row rows[j] under the pair (r, s), s = -1 the single
    class r, as losses.pair_statistics with multi-label targets (then times the weight; h = 1
    first_order): the reference's _channels, the same operations in the same order."""
    for j in range(start, stop):
        i = rows[j]
        p_r = p[i, r]
        pc_r = pc[i, r]
        if s >= 0:
            p_s = p[i, s]
            pc_s = pc[i, s]
            g = _target_gradient(p_r, pc_r, eta[i, r]) - _target_gradient(p_s, pc_s, eta[i, s])
            h = p_r * pc_r + p_s * pc_s + 2.0 * p_r * p_s
        else:
            g = _target_gradient(p_r, pc_r, eta[i, r])
            h = p_r * pc_r
        if first_order:
            h = 1.0
        if weighted:
            g = g * w[i]
            h = h * w[i]
        out[j - start, 0] = g
        out[j - start, 1] = h


#: vector_best_split's gains: K-LogitBoost's (backends.numpy.vector_gain), AdaBoost.MH's
#: Hamming tree (edge_gain) and factorized stump (stump_edge_gain).
VECTOR_GAIN, EDGE_GAIN, STUMP_GAIN = np.int64(0), np.int64(1), np.int64(2)


@njit(cache=True)
def _block_sum(a, lo, n):
    """NumPy's sum of a run of at most 128 values: eight accumulators from 8 values up."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def _numpy_sum(a, lo, n):
    """a[lo:lo + n].sum() as NumPy sums a contiguous run, the same rounding: its pairwise
    summation, blocks of up to 128 values (_block_sum), a longer run the sum of its two halves
    (the first half a multiple of 8). A test holds it to NumPy's. The halving runs on an
    explicit stack: numba's cache cannot load a recursive function (it crashes)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    at = np.empty(64, np.int64)  # a run's start, length and how far it has got
    size = np.empty(64, np.int64)
    state = np.empty(64, np.int64)
    values = np.empty(64)
    depth = 1
    at[0] = lo
    size[0] = n
    state[0] = 0
    count = 0
    while depth > 0:
        top = depth - 1
        m = size[top]
        if m <= 128:
            values[count] = _block_sum(a, at[top], m)
            count += 1
            depth -= 1
            continue
        half = m // 2
        half -= half % 8
        if state[top] == 0:  # its first half next
            state[top] = 1
            at[depth], size[depth], state[depth] = at[top], half, 0
            depth += 1
        elif state[top] == 1:  # then its second half
            state[top] = 2
            at[depth], size[depth], state[depth] = at[top] + half, m - half, 0
            depth += 1
        else:  # both done: their sum
            values[count - 2] = values[count - 2] + values[count - 1]
            count -= 1
            depth -= 1
    return values[0]


@njit(cache=True)
def _vector_gain(mode, L, R, K, parent, node_terms, terms):
    """The gain of one candidate (side sums L, R) as the reference's gain functions compute it,
    the same operations in the same order; the node's own terms, which every candidate shares,
    computed once by vector_best_split: parent (AdaBoost.MH's gains), node_terms[k] (eq (30)'s
    G_k^2 / 2 H_k of class k, K-LogitBoost's). terms: scratch of length K."""
    if mode == VECTOR_GAIN:  # sum over classes of eq (30), class by class
        total = 0.0
        for k in range(K):
            left = L[k] * L[k] / (2.0 * _hguard(L[K + k]))
            right = R[k] * R[k] / (2.0 * _hguard(R[K + k]))
            p = node_terms[k]
            gain = left + right - p
            total = total + (gain if gain > GAIN_NOISE * (left + right + p) else 0.0)
        return total
    if mode == EDGE_GAIN:
        for k in range(K):
            terms[k] = abs(L[k])
        left = _numpy_sum(terms, ZERO, K)
        for k in range(K):
            terms[k] = abs(R[k])
        right = _numpy_sum(terms, ZERO, K)
        gain = left + right - parent
        return gain if gain > GAIN_NOISE * (left + right + parent) else 0.0
    for k in range(K):  # STUMP_GAIN
        terms[k] = abs(L[k] - R[k])
    edge = _numpy_sum(terms, ZERO, K)
    gain = edge - parent
    return gain if gain > GAIN_NOISE * (edge + parent) else 0.0


@njit(cache=True)
def _vector_candidates(hist, f_lo, f_hi, min_samples_leaf, mode, K, parent, node_terms, prefix, suffix, cand_gain,
                       cand_at, m, allowed):
    """vector_best_split's candidates of the features f_lo..f_hi - 1 that are allowed, stored
    from cand_gain[m] on. Returns (the end of the stored candidates, their largest gain)."""
    nb = hist.shape[1] - 1
    C = hist.shape[2]
    terms = np.empty(K)
    L = np.empty(C)  # the candidate's sides
    R = np.empty(C)
    acc = np.empty(C)
    top = -np.inf
    for f in range(f_lo, f_hi):
        if not allowed[f]:
            continue
        # prefix[b] = bins 0..b, suffix[b] = bins b + 1..nb - 1, each channel summed in bin
        # order (the reference's cumulative sums), row by row
        for c in range(C):
            acc[c] = 0.0
        for b in range(nb):
            for c in range(C):
                acc[c] += hist[f, b, c]
                prefix[b, c] = acc[c]
        for c in range(C):
            acc[c] = 0.0
            suffix[nb - 1, c] = 0.0
        for b in range(nb - 1, 0, -1):
            for c in range(C):
                acc[c] += hist[f, b, c]
                suffix[b - 1, c] = acc[c]
        mc = hist[f, nb, C - 1]
        for b in range(nb):
            if b > 0 and hist[f, b, C - 1] == 0.0:
                continue
            gain = -np.inf  # missing values right
            if prefix[b, C - 1] >= min_samples_leaf and suffix[b, C - 1] + mc >= min_samples_leaf:
                for c in range(C):
                    L[c] = prefix[b, c]
                    R[c] = suffix[b, c] + hist[f, nb, c]
                gain = _vector_gain(mode, L, R, K, parent, node_terms, terms)
            cand_gain[m] = gain
            cand_at[m] = (f * nb + b) * 2
            m += 1
            if gain > top:
                top = gain
            if mc == 0:  # no missing values of this feature in the node: no missing-left candidate
                continue
            gain = -np.inf
            if prefix[b, C - 1] + mc >= min_samples_leaf and suffix[b, C - 1] >= min_samples_leaf:
                for c in range(C):
                    L[c] = prefix[b, c] + hist[f, nb, c]
                    R[c] = suffix[b, c]
                gain = _vector_gain(mode, L, R, K, parent, node_terms, terms)
            cand_gain[m] = gain
            cand_at[m] = (f * nb + b) * 2 + 1
            m += 1
            if gain > top:
                top = gain
    return m, top


@njit(cache=True, parallel=True)
def vector_best_split(hist, min_samples_leaf, mode, sums, prefix, suffix, cand_gain, cand_at, n_blocks, allowed):
    """Best split of one node from its vector histogram (channels: K-LogitBoost's g_0..g_K-1,
    h_0..h_K-1, count; AdaBoost.MH's K edges, count), as backends.numpy.best_splits does it
    with the gain function ``mode`` names; best_split's candidate order, tie rule and
    skipping of empty bins. Fills sums (the node totals, from feature 0's bins).

    The features are split into n_blocks blocks, one per thread, each storing its candidates
    in its own part of cand_gain and cand_at (from 2 f_lo (n_codes - 1), in the reference's
    order); then the largest gain, and the first candidate in that order within SPLIT_TIE of it:
    the blocks change nothing in the result. prefix, suffix: scratch of shape (n_blocks,
    n_codes, C); cand_gain (float64) and cand_at (int64) of length >= 2 D (n_codes - 1).
    Returns (gain, feature, bin, missing_left); gain -inf when no split. Only the features f
    where allowed[f] (colsample_bytree's) have candidates.
    """
    D, W, C = hist.shape
    nb = W - 1
    K = C - 1 if mode != VECTOR_GAIN else (C - 1) // 2
    for c in range(C):
        t = 0.0
        for b in range(W):
            t += hist[0, b, c]
        sums[c] = t
    n = sums[C - 1]
    parent = 0.0
    node_terms = np.empty(K)
    if mode != VECTOR_GAIN:
        for k in range(K):
            node_terms[k] = abs(sums[k])
        parent = _numpy_sum(node_terms, ZERO, K)
    else:  # eq (30)'s parent term of every class, the reference's operations
        for k in range(K):
            node_terms[k] = sums[k] * sums[k] / (2.0 * _hguard(sums[K + k]))
    ends = np.empty(n_blocks, np.int64)
    tops = np.empty(n_blocks)
    for block in prange(n_blocks):
        block = np.int64(block)
        f_lo = block * D // n_blocks
        f_hi = (block + 1) * D // n_blocks
        ends[block], tops[block] = _vector_candidates(hist, f_lo, f_hi, min_samples_leaf, mode, K, parent,
                                                      node_terms, prefix[block], suffix[block], cand_gain, cand_at,
                                                      2 * f_lo * nb, allowed)
    top = -np.inf
    for block in range(n_blocks):
        if tops[block] > top:
            top = tops[block]
    if not np.isfinite(top):  # -inf: no candidate; +inf: the sums broke down (H < 0, G^2 overflowing): no split
        return -np.inf, 0, 0, False
    threshold = top - SPLIT_TIE * abs(top)
    at = -1
    best_gain = top
    for block in range(n_blocks):
        for j in range(2 * (block * D // n_blocks) * nb, ends[block]):
            if cand_gain[j] >= threshold:
                best_gain = cand_gain[j]
                at = cand_at[j]
                break
        if at >= 0:
            break
    best_dir = at % 2
    best_b = (at // 2) % nb
    best_f = at // 2 // nb
    if hist[best_f, nb, C - 1] > 0:  # the chosen feature has missing values in the node
        missing_left = best_dir == 1
    else:
        left_rows = 0.0
        for b in range(best_b + 1):
            left_rows += hist[best_f, b, C - 1]
        missing_left = left_rows >= n - left_rows
    return best_gain, best_f, best_b, missing_left


@njit(cache=True, inline="always")
def _leaf_of_row(codes, i, feature, bin_, missing_left, left, right, missing_code):
    """The leaf id of row i (each step's side by add_trees' rule, _walk_child: at a split, the
    walk arrays are the tree's own children)."""
    node = 0
    while feature[node] >= 0:
        node = _walk_child(node, codes[i, feature[node]], missing_code, bin_, missing_left, left, right)
    return node


@njit(cache=True)
def apply_tree(codes, feature, bin_, missing_left, left, right, missing_code, out):
    """out[i] = leaf id of row i (_leaf_of_row)."""
    for i in range(codes.shape[0]):
        out[i] = _leaf_of_row(codes, i, feature, bin_, missing_left, left, right, missing_code)


@njit(cache=True)
def spread_rows(rows, n_sampled, seg_start, seg_stop, leaf_ids, codes, feature, bin_, missing_left, left, right,
                missing_code, scratch, leaf_of, out_segments):
    """Backend.spread_leaves after a tree grown on rows[:n_sampled] (its leaves' segments
    seg_start, seg_stop, ids leaf_ids): each leaf's segment becomes its grown rows, in their
    order, then the other rows (rows[n_sampled:], in their order) that the tree puts in it
    (apply_tree's walk). Writes the new segments into out_segments (n_leaves, 2); scratch
    and leaf_of: N entries each."""
    N = rows.shape[0]
    n_leaves = leaf_ids.shape[0]
    index = np.full(feature.shape[0], -1, np.int64)  # a leaf node's index in leaf_ids
    for j in range(n_leaves):
        index[leaf_ids[j]] = j
    counts = np.zeros(n_leaves, np.int64)
    for q in range(n_sampled, N):
        j = index[_leaf_of_row(codes, rows[q], feature, bin_, missing_left, left, right, missing_code)]
        leaf_of[q] = j
        counts[j] += 1
    at = 0
    for j in range(n_leaves):
        out_segments[j, 0] = at
        for q in range(seg_start[j], seg_stop[j]):
            scratch[at] = rows[q]
            at += 1
        out_segments[j, 1] = at + counts[j]  # the other rows follow
        counts[j] = at  # now the next free place of leaf j
        at = out_segments[j, 1]
    for q in range(n_sampled, N):
        j = leaf_of[q]
        scratch[counts[j]] = rows[q]
        counts[j] += 1
    for q in range(N):
        rows[q] = scratch[q]


@njit(cache=True, nogil=True)  # (boosting._RowSamples draws on other threads)
def selection_sample(u, i0, n, m, taken, out):
    """Knuth's selection sampling (Algorithm S) of m of n rows, each subset as likely, in
    increasing order, over rows i0 .. i0 + len(u) - 1 (u: their uniforms in [0, 1)), ``taken``
    of them taken before: row i is taken where (rows left) x u < (rows still wanted). Returns
    the rows taken so far (out[:taken]); the caller feeds the uniforms chunk by chunk.

    The test is written as taken < m - floor(x), x = (n - i) u (for integers, t < m - x exactly
    when t < ceil(m - x) = m - floor(x)): the same rows, with no float conversion and no branch
    in the chain from one row's count to the next (about 4x faster; the plain form is
    tests/test_sampling.py's reference)."""
    for j in range(u.shape[0]):
        if taken == m:
            break
        i = i0 + j
        out[taken] = i  # overwritten by the next row taken, unless row i is taken
        taken += taken + int(math.floor((n - i) * u[j])) < m
    return taken


#: Trees added to a block of rows before the next block of trees: the block's nodes stay in
#: cache while every row walks them.
TREE_BLOCK = 64


@njit(cache=True)
def _walks(feature, left, right, node_offset):
    """The trees' children as add_trees walks them (a leaf its own left and right child: a walk
    that reached it stays there) and each tree's depth (its longest root-to-leaf path):
    depth[t] steps from the root reach every row's leaf."""
    n_trees = node_offset.shape[0] - 1
    walk_left = np.empty(feature.shape[0], np.int64)
    walk_right = np.empty(feature.shape[0], np.int64)
    depth = np.zeros(n_trees, np.int64)
    for t in range(n_trees):
        base = node_offset[t]
        size = node_offset[t + 1] - base
        for j in range(base, base + size):
            walk_left[j] = left[j] if feature[j] >= 0 else j - base
            walk_right[j] = right[j] if feature[j] >= 0 else j - base
        stack = np.empty(size + 1, np.int64)  # (node, its depth) pairs of an explicit search
        at_depth = np.empty(size + 1, np.int64)
        stack[0] = 0
        at_depth[0] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            d = at_depth[top]
            if feature[base + node] < 0:
                depth[t] = max(depth[t], d)
            elif top + 2 <= size + 1:  # (always, in a tree: the guard keeps a damaged one finite)
                stack[top] = left[base + node]
                at_depth[top] = d + 1
                stack[top + 1] = right[base + node]
                at_depth[top + 1] = d + 1
                top += 2
    return walk_left, walk_right, depth


@njit(cache=True, inline="always")
def _walk_child(at, c, missing_code, bin_, missing_left, walk_left, walk_right):
    """The child (local id) that a row whose code is c goes to from node at: left where c is
    the missing code and missing values go left, or c is another code <= bin_[at]. In
    arithmetic, without a branch: which side a row takes is as unpredictable as the data, and
    the mispredicted branches made the walk 1.4-1.6x slower (letter, pendigits; 2026-11-25)."""
    # c <= the bin read as at most the last code below the missing one (the largest code),
    # which the missing code never is: then the missing code's rule
    below = np.int64(c <= min(_at(bin_, at), missing_code - 1))
    go_left = below | (np.int64(c == missing_code) & np.int64(_at(missing_left, at)))
    right = _at(walk_right, at)
    return right + (_at(walk_left, at) - right) * go_left


@njit(cache=True, inline="always")
def _add_leaf_step(F, i, at, leaf_start, classes, steps):
    for q in range(leaf_start[at], leaf_start[at + 1]):
        F[i, classes[q]] += steps[q]


@njit(cache=True, parallel=True)
def add_trees(F, codes, missing_code, feature, bin_, missing_left, walk_left, walk_right, depth, leaf_start, classes,
              steps, node_offset, n_blocks):
    """F[i] += the step vector of row i's leaf, for every tree of an ensemble, tree by tree.

    The trees are concatenated: tree t's nodes are node_offset[t]:node_offset[t + 1] (child
    ids local to the tree). Node j's step vector (learning_rate x its node vector) is sparse:
    steps[leaf_start[j]:leaf_start[j + 1]] at classes[...] (zero elsewhere: adding 0.0 would
    change nothing). Each score gets one addition per tree, in tree order, as in
    Backend.add_trees; rows are independent, so n_blocks (the threads' row blocks) changes
    nothing in the result. One parallel region a call: each thread walks its rows through a
    block of trees (TREE_BLOCK) before the next block (_add_trees_rows). add_trees_serial is
    the same walk without a region, for small work: a region whose second thread waits for
    a CPU that another process holds costs milliseconds (one row through 1000 trees took
    124 ms against 0.8 beside a busy process, with a region every 64 trees, 2026-11-27).

    Rows walk a tree four at a time, until all four are at their leaves (at most the tree's
    depth), a row at its leaf staying there (walk_left, walk_right and depth as _walks gives
    them), each step's child chosen in arithmetic (_walk_child): no branch depends on one
    row's side, and the four rows' loads overlap. Against a walk of one row at a time with a
    branch on its side: pendigits' 3498 test rows through 1000 trees 58 -> 29 ms, letter's
    4000 through 2000 trees 111 -> 70 ms (2 threads, 2026-11-25). The last rows (fewer than
    four: a prediction of one row) walk four trees at a time instead, their steps added in tree
    order.
    """
    n = F.shape[0]
    for block in prange(n_blocks):
        b = np.int64(block)
        _add_trees_rows(F, codes, missing_code, feature, bin_, missing_left, walk_left, walk_right, depth, leaf_start,
                        classes, steps, node_offset, b * n // n_blocks, (b + 1) * n // n_blocks)


@njit(cache=True)
def add_trees_serial(F, codes, missing_code, feature, bin_, missing_left, walk_left, walk_right, depth, leaf_start,
                     classes, steps, node_offset):
    """add_trees on the calling thread (no parallel region): the same sums."""
    _add_trees_rows(F, codes, missing_code, feature, bin_, missing_left, walk_left, walk_right, depth, leaf_start,
                    classes, steps, node_offset, np.int64(0), np.int64(F.shape[0]))


@njit(cache=True)
def _add_trees_rows(F, codes, missing_code, feature, bin_, missing_left, walk_left, walk_right, depth, leaf_start,
                    classes, steps, node_offset, i_start, i_end):
    """add_trees for rows i_start .. i_end - 1: every tree, a block of trees at a time."""
    n_trees = node_offset.shape[0] - 1
    for t0 in range(0, n_trees, TREE_BLOCK):
        t1 = min(n_trees, t0 + TREE_BLOCK)
        i = i_start
        while i + 4 <= i_end:
            for t in range(t0, t1):
                base = node_offset[t]
                a0 = base
                a1 = base
                a2 = base
                a3 = base
                for _ in range(depth[t]):  # the four rows' codes first, then their steps
                    f0 = _at(feature, a0)  # (node ids are >= 0: no wraparound, _at)
                    f1 = _at(feature, a1)
                    f2 = _at(feature, a2)
                    f3 = _at(feature, a3)
                    if (f0 & f1 & f2 & f3) < 0:  # all four at leaves (feature -1)
                        break
                    c0 = _at2(codes, i, max(f0, 0))  # (a row at a leaf reads feature 0, and stays)
                    c1 = _at2(codes, i + 1, max(f1, 0))
                    c2 = _at2(codes, i + 2, max(f2, 0))
                    c3 = _at2(codes, i + 3, max(f3, 0))
                    a0 = base + _walk_child(a0, c0, missing_code, bin_, missing_left, walk_left, walk_right)
                    a1 = base + _walk_child(a1, c1, missing_code, bin_, missing_left, walk_left, walk_right)
                    a2 = base + _walk_child(a2, c2, missing_code, bin_, missing_left, walk_left, walk_right)
                    a3 = base + _walk_child(a3, c3, missing_code, bin_, missing_left, walk_left, walk_right)
                _add_leaf_step(F, i, a0, leaf_start, classes, steps)
                _add_leaf_step(F, i + 1, a1, leaf_start, classes, steps)
                _add_leaf_step(F, i + 2, a2, leaf_start, classes, steps)
                _add_leaf_step(F, i + 3, a3, leaf_start, classes, steps)
            i += 4
        while i < i_end:  # the last rows, one at a time: four trees in lockstep
            t = t0
            while t + 4 <= t1:  # (the four walks' loads overlap, as the four rows' above; their
                # steps are added in tree order: the same sums. One row through 1000 trees walked
                # one tree at a time waited for each load in turn)
                b0 = node_offset[t]
                b1 = node_offset[t + 1]
                b2 = node_offset[t + 2]
                b3 = node_offset[t + 3]
                a0 = b0
                a1 = b1
                a2 = b2
                a3 = b3
                for _ in range(max(max(depth[t], depth[t + 1]), max(depth[t + 2], depth[t + 3]))):
                    f0 = _at(feature, a0)
                    f1 = _at(feature, a1)
                    f2 = _at(feature, a2)
                    f3 = _at(feature, a3)
                    if (f0 & f1 & f2 & f3) < 0:  # all four at leaves
                        break
                    c0 = _at2(codes, i, max(f0, 0))
                    c1 = _at2(codes, i, max(f1, 0))
                    c2 = _at2(codes, i, max(f2, 0))
                    c3 = _at2(codes, i, max(f3, 0))
                    a0 = b0 + _walk_child(a0, c0, missing_code, bin_, missing_left, walk_left, walk_right)
                    a1 = b1 + _walk_child(a1, c1, missing_code, bin_, missing_left, walk_left, walk_right)
                    a2 = b2 + _walk_child(a2, c2, missing_code, bin_, missing_left, walk_left, walk_right)
                    a3 = b3 + _walk_child(a3, c3, missing_code, bin_, missing_left, walk_left, walk_right)
                _add_leaf_step(F, i, a0, leaf_start, classes, steps)
                _add_leaf_step(F, i, a1, leaf_start, classes, steps)
                _add_leaf_step(F, i, a2, leaf_start, classes, steps)
                _add_leaf_step(F, i, a3, leaf_start, classes, steps)
                t += 4
            for t in range(t, t1):
                base = node_offset[t]
                at = base
                for _ in range(depth[t]):
                    if feature[at] < 0:
                        break
                    at = base + _walk_child(at, codes[i, feature[at]], missing_code, bin_, missing_left, walk_left,
                                            walk_right)
                _add_leaf_step(F, i, at, leaf_start, classes, steps)
            i += 1


lock_cache_files(globals())  # (after the last kernel: saves and loads of the cache under its lock)
