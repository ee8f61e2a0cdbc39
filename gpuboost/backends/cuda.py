"""The CUDA backend: AOSO-LogitBoost on an NVIDIA GPU.

Everything a tree needs lives on the device: the binned data, the labels and weights, F, p
and 1 - p, the row partition and the tree's node table. ``grow_tree`` launches the whole tree
(J - 1 best-first steps, each a fixed sequence of kernels that reads the step's chosen leaf
from device memory) without reading anything back, optionally as one captured CUDA graph;
the host then reads the node table once. Kernels (see DESIGN.md, "Kernels"):

* CUDA C++, ``kernels/aoso.cu`` through CuPy ``RawModule``: class statistics and the pair of
  eq (33), fixed-point histograms, split gains and the best split, the stable row partition,
  the leaf pick, the leaf vectors, the update of F with p and the loss, prediction;
* numba.cuda, ``_numba_kernels``: each row's leaf in the tree just grown (for the update of F).

Host round trips per tree (``HOST_SYNCS_PER_TREE``): in training, one. The tree's launches end
with the update of F (leaf vectors from the node table by the host's arithmetic, each row's
leaf, one pass over F that also computes the next p and the loss), all in the tree's graph;
the host waits once, to read the node table and the loss in one copy, and builds the Tree from
it. (``grow_tree`` without a learning rate, and ``update_scores`` with ``rescore``, the
stage-by-stage interface of the tests, cost a second wait for the loss.)

Differences from the CPU backends, by design: histogram channels are fixed-point integer sums
(each row's w g and w h rounded to 2^-b of the node's largest possible value, b = 30 -
ceil(log2 R), R the rows a block adds between flushes, at most HIST_CHUNK: b from 18 to 30), so
split gains agree with the CPU's to about 1e-5 relative and a split may differ where two
candidates are that close; node sums (hence leaf values) are float64 sums in another order,
equal to rounding. Results do not depend on thread scheduling: the same data give the same
model bit for bit. docs/gpu.md has the details and the measured figures.

Supported: ``algorithm="aoso"`` (per-node pairs by eq (33) or eq (32)). The K-tree family
and K-LogitBoost train on the CPU backends.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from .base import N_CHANNELS, Backend, SplitBatch, all_features, check_row_sample, root_rows

__all__ = ["CudaBackend", "cuda_usable", "cuda_supports", "kernel_source", "KERNEL_NAMES", "HOST_SYNCS_PER_TREE"]

#: Times the host waits for the device per grown tree (see the module docstring).
HOST_SYNCS_PER_TREE = 1

#: The kernels of kernels/aoso.cu that the backend asks RawModule for (the template
#: instantiations are the ones kernels/instantiate.cu compiles in CI).
CODE_TYPES = {np.dtype(np.uint8): "unsigned char", np.dtype(np.uint16): "unsigned short"}
PLAIN_KERNELS = ("reset_tree", "pick_leaf", "derive_larger", "split_gains", "part_copy", "softmax_loss",
                 "leaf_steps")
TEMPLATE_KERNELS = ("histogram", "part_count", "part_scatter", "apply_tree", "predict_add", "route_rows")
#: class_stats<CPL>: CPL classes per lane, 1 for K <= 32, 4 for K <= 128
STAT_KERNELS = ("class_stats<1>", "class_stats<2>", "class_stats<4>")
KERNEL_NAMES = (PLAIN_KERNELS + tuple(f"{k}<{t}>" for t in CODE_TYPES.values() for k in TEMPLATE_KERNELS)
                + STAT_KERNELS)

MAX_CLASSES = 128  # kernels/aoso.cu: CLASSES_PER_LANE * 32
STAT_THREADS = 256  # kernels/aoso.cu constants
MERGED_MAX_K = 16
CTRL_SIZE = 5  # kernels/aoso.cu: GB_CTRL
HIST_THREADS = 256
HIST_SHARED_BYTES = 48 * 1024
#: the most rows a histogram block adds into its 32-bit shared counters before it adds them to the
#: global ones: each row keeps at least 30 - 12 = 18 bits (kernels/aoso.cu, finalize_node). Wide
#: data have few blocks per node; without the limit a block of a million rows kept 10 bits
#: (benchmarks/gpu_wide.py)
HIST_CHUNK = 4096
PART_THREADS = 256
SPLIT_WARPS = 8
DERIVE_THREADS = 128
STAT_MIN_ROWS = 1024  # kernels/aoso.cu: a node uses one block of class_stats per this many rows
MAX_GRID_Y = 65535  # CUDA's limit on a grid's y size


def kernel_source() -> Path:
    """kernels/aoso.cu: inside the installed package (wheel), or beside it (source tree)."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "kernels" / "aoso.cu", here.parent / "kernels" / "aoso.cu"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        "gpuboost's CUDA kernels (kernels/aoso.cu) are not installed beside the package; reinstall gpuboost "
        "(pip install 'gpuboost[cuda12]' or [cuda13])."
    )


#: kernels/aoso.cu's warp reductions (__reduce_add_sync) need compute capability 8.0 (Ampere) or newer
MIN_COMPUTE_CAPABILITY = (8, 0)


def cuda_usable() -> tuple[bool, str]:
    """(True, "") when the CUDA backend can run here: CuPy imports and its current device has
    compute capability 8.0 or newer, and numba-cuda imports and sees a usable device; else
    (False, the reason)."""
    try:
        import cupy
    except ImportError:
        return False, "CuPy is not installed"
    except Exception as exc:  # a broken CUDA install that fails at import
        return False, f"CuPy is not importable ({type(exc).__name__}: {exc})"
    try:
        if not cupy.cuda.is_available():
            return False, "CuPy sees no CUDA device"
        capability = str(cupy.cuda.Device().compute_capability)  # "75", "90", "120"
        major, minor = int(capability[:-1]), int(capability[-1])
    except Exception as exc:
        return False, f"CUDA is not usable ({type(exc).__name__}: {exc})"
    if (major, minor) < MIN_COMPUTE_CAPABILITY:
        return False, (f"the GPU has compute capability {major}.{minor}, and gpuboost's CUDA kernels need "
                       f"{MIN_COMPUTE_CAPABILITY[0]}.{MIN_COMPUTE_CAPABILITY[1]} or newer (A100, RTX 30xx, L4, "
                       "H100 and later)")
    try:
        if not import_numba_cuda().is_available():  # (its own driver binding: the backend launches its kernel)
            return False, "numba-cuda sees no usable CUDA device"
    except Exception as exc:
        return False, f"numba-cuda is not usable ({type(exc).__name__}: {exc})"
    return True, ""


#: Set GPUBOOST_RMM=0 to keep CuPy's own memory pool even where RMM is installed.
RMM_ENV = "GPUBOOST_RMM"


@functools.lru_cache(maxsize=None)
def use_rmm_pool() -> str:
    """Route CuPy's (and numba's) device allocations through an RMM pool, once per process.

    Only where RMM is installed, ``GPUBOOST_RMM`` is not "0", and the process has not chosen
    otherwise: CuPy's allocator is still its default pool and RMM's resource is still its
    default. Returns what was done ("rmm pool", or why not); a failure leaves CuPy's pool in use.
    """
    import os

    if os.environ.get(RMM_ENV, "1") == "0":
        return f"off ({RMM_ENV}=0)"
    try:
        import cupy
        import rmm
        from rmm.allocators.cupy import rmm_cupy_allocator
    except Exception:
        return "rmm not installed"
    try:
        if getattr(cupy.cuda.get_allocator(), "__self__", None) is not cupy.get_default_memory_pool():
            return "kept: CuPy's allocator was set by the caller"
        resource = rmm.mr.get_current_device_resource()
        if type(resource).__name__ == "CudaMemoryResource":  # RMM's default: nobody configured it
            rmm.mr.set_current_device_resource(rmm.mr.PoolMemoryResource(resource))
        cupy.cuda.set_allocator(rmm_cupy_allocator)
        try:  # numba allocates little here (argument views); before its first context only
            from numba import cuda as nb_cuda
            from rmm.allocators.numba import RMMNumbaManager

            nb_cuda.set_memory_manager(RMMNumbaManager)
        except Exception:
            pass
        return "rmm pool"
    except Exception as exc:  # an RMM that does not match this CUDA: keep CuPy's pool
        import warnings

        warnings.warn(f"gpuboost could not set up an RMM memory pool ({exc}); using CuPy's pool.", RuntimeWarning,
                      stacklevel=3)
        return "failed"


#: value bins per feature that the histograms hold: a feature's cells (its bins and the missing
#: values' cell) at 3 x 4 bytes, plus 8, in one block's shared memory
MAX_BINS = (HIST_SHARED_BYTES - 8) // 12 - 1


def cuda_supports(n_classes: int, n_bins: int, n_features: int = 1) -> bool:
    """Whether the CUDA kernels hold this many classes, value bins per feature and features
    (a histogram launch's grid y holds at most MAX_GRID_Y groups of features; a group holds one
    feature at least)."""
    return n_classes <= MAX_CLASSES and n_bins <= MAX_BINS and n_features <= MAX_GRID_Y


@functools.lru_cache(maxsize=None)
def _module(device_id: int):
    """The compiled kernels, once per process and device (never at import)."""
    import cupy

    with cupy.cuda.Device(device_id):
        module = cupy.RawModule(code=kernel_source().read_text(), options=("-std=c++17",),
                                name_expressions=[n for n in KERNEL_NAMES if "<" in n])
        module.compile()
        return module


def _kernel(module, name: str):
    return module.get_function(name)


class _Kernels:
    """The RawModule's functions for one code type."""

    def __init__(self, device_id: int, code_dtype):
        module = _module(device_id)
        t = CODE_TYPES[np.dtype(code_dtype)]
        for name in PLAIN_KERNELS:
            setattr(self, name, _kernel(module, name))
        for name in TEMPLATE_KERNELS:
            setattr(self, name, _kernel(module, f"{name}<{t}>"))
        self.class_stats = {c: _kernel(module, f"class_stats<{c}>") for c in (1, 2, 4)}


def import_numba_cuda():
    """numba.cuda, imported with a shim: numba-cuda <= 0.30 registers an overload of
    ``np.row_stack`` at import, which NumPy 2.5 removed (an alias of ``np.vstack``). The alias
    stays: numba-cuda may import the module that registers it later, at a kernel's first
    compilation."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda

    return cuda


def _i32(v) -> np.int32:
    return np.int32(v)


def _out_of_memory(exc, needed: int):
    """The clear MemoryError for a failed device allocation (``_validation.gpu_memory_error``)."""
    from .._validation import gpu_memory_error

    return gpu_memory_error(needed)


#: max_depth's stand-in for "no limit" in the split kernel (a node's depth is below it)
NO_DEPTH_LIMIT = np.iinfo(np.int32).max


class CudaBackend(Backend):
    """Every stage on the GPU; ``grow_tree`` grows a tree with no host round trip."""

    name = "cuda"
    #: its staged histograms are fixed point, decoded with each node's own scales, under each
    #: node's own pair only (``histograms``): the grower does not subtract them
    derives_histograms = False
    #: F lives on the device: ``update_scores`` updates the device copy, ``rescore`` reads it.
    keeps_scores = True

    def __init__(self, codes, y, sample_weight, n_classes, n_bins, missing_code, n_threads=1,
                 use_graph: bool = True, device_id: int | None = None):
        import cupy

        self.memory = use_rmm_pool()
        self.n_threads = max(1, int(n_threads))  # the host's threads (boosting draws row samples on them)
        nb_cuda = import_numba_cuda()
        self.cp = cupy
        self.device_id = cupy.cuda.Device().id if device_id is None else int(device_id)
        self.n_classes = K = int(n_classes)
        self.n_codes = int(n_bins) + 1
        code_dtype = np.dtype(getattr(codes, "dtype", np.uint8))
        if code_dtype not in CODE_TYPES:
            code_dtype = np.dtype(np.uint8 if self.n_codes <= 256 else np.uint16)
        N, D = codes.shape
        self.n_rows, self.n_features = int(N), int(D)
        if K > MAX_CLASSES:
            raise ValueError(f"The CUDA backend trains at most {MAX_CLASSES} classes; this problem has {K}. "
                             "Use device='cpu'.")
        self.cpl = 2 if 8 < K <= MERGED_MAX_K else (1 if K <= 32 else 4)  # classes per lane
        # lanes per row in class_stats
        self.KP = 8 if self.cpl == 2 else min(32, 1 << max(0, (K - 1).bit_length()))
        if self.n_codes - 1 > MAX_BINS:
            raise ValueError(
                f"The CUDA backend's histograms hold at most {MAX_BINS} bins per feature; this model has "
                f"{self.n_codes - 1}. Use max_bins <= {MAX_BINS} or device='cpu'."
            )
        self.weighted = sample_weight is not None
        needed = N * (D * code_dtype.itemsize + 3 * K * 8 + 5 * 4 + 8 + (8 if self.weighted else 0))
        self.needed_bytes = needed
        self.use_graph = bool(use_graph)
        self._graphs: dict = {}
        with cupy.cuda.Device(self.device_id):
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.k = _Kernels(self.device_id, code_dtype)
            try:
                with self.stream:
                    codes_d = cupy.asarray(codes)  # no copy when it already lives on this GPU
                    self._layout(codes_d, missing_code, code_dtype)
                    self.y = cupy.ascontiguousarray(cupy.asarray(y), dtype=cupy.int32)
                    self.w = (cupy.ascontiguousarray(cupy.asarray(sample_weight), dtype=cupy.float64)
                              if self.weighted else None)
                    self.F = cupy.zeros((N, K))
                    self.p_d = cupy.empty((N, K))
                    self.pc_d = cupy.empty((N, K))
                    self.loss_rows = cupy.empty(max(1, min(8 * 1024, N)))  # per-block loss sums
                    self.loss_d = cupy.empty(1)
                    self.rows = cupy.arange(N, dtype=cupy.int32)
                    self.tmp = cupy.empty(N, dtype=cupy.int32)
                    self.leaf_of = cupy.empty(N, dtype=cupy.int32)  # the last tree's leaf of every row
                    self.counts = cupy.empty(max(1, -(-N // PART_THREADS)), dtype=cupy.int32)
                    sm = cupy.cuda.Device(self.device_id).attributes["MultiProcessorCount"]
                    self.n_sm = int(sm)
                    self.stat_blocks = 4 * self.n_sm
                    self.stat_stride = 4 * K + (K * K if K <= MERGED_MAX_K else 0)
                    self.partials = cupy.empty(2 * self.stat_blocks * self.stat_stride)
                    self.hist = cupy.zeros((2, self.total_cells, N_CHANNELS), dtype=cupy.int64)
                    self.fbest = cupy.empty(2 * D)
                    # the features a tree may split on (colsample_bytree), one byte each
                    self.allowed = cupy.ones(max(1, D), dtype=cupy.uint8)
                    self.sample = None  # subsample's rows for the next tree (allocated when first used)
                    # last-block counters of class_stats and split_gains (2 slots each)
                    self.counters = cupy.zeros(6, dtype=cupy.int32)  # ... part_count, softmax_loss
                self.stream.synchronize()
            except (cupy.cuda.memory.OutOfMemoryError, MemoryError) as exc:  # CuPy's pool, or RMM's
                raise _out_of_memory(exc, needed) from None
        self.nb = nb_cuda
        self.nb_stream = nb_cuda.external_stream(self.stream.ptr)
        self._nb = {name: nb_cuda.as_cuda_array(getattr(self, name)) for name in ("F", "rows", "leaf_of")}
        self._all_allowed = True  # self.allowed holds ones only
        self._pending = False  # update_scores marked the rows' leaves; F += the leaves' deltas is to come
        self._fresh_loss = None  # the loss of the last fused grow_tree, not yet returned by rescore
        self._tables: dict = {}
        self._table(2)  # a node table for the stages (batches of up to 2 nodes)
        #: derive the larger child's class statistics from its parent and sibling (K <= 16)
        self.derive_siblings = True
        #: rows a histogram block adds between flushes of its shared counters (HIST_CHUNK)
        self.hist_chunk = HIST_CHUNK
        #: set to a list to record (category, start event, stop event) around every stage
        #: (benchmarks/bench_gpu.py's kernel breakdown; launches kernel by kernel, no graph)
        self.profile = None

    def _start(self, category):
        if self.profile is None:
            return None
        event = self.cp.cuda.Event()
        event.record(self.stream)
        return category, event

    def _stop(self, token):
        if token is not None:
            event = self.cp.cuda.Event()
            event.record(self.stream)
            self.profile.append((token[0], token[1], event))

    def profile_totals(self) -> dict:
        """Milliseconds of device time per stage category recorded in ``profile``."""
        self.stream.synchronize()
        totals: dict = {}
        for category, start, stop in self.profile or []:
            totals[category] = totals.get(category, 0.0) + self.cp.cuda.get_elapsed_time(start, stop)
        return totals

    def _layout(self, codes_d, missing_code, code_dtype):
        """Per-feature codes and the compact histogram layout.

        Feature f's value bins are 0 .. n_f - 1 (n_f: its largest code in use, plus one) and its
        missing values get code n_f; its histogram cells are feat_off[f] .. feat_off[f + 1] - 1.
        Features are grouped so that a group's cells fit in one block's shared memory.
        """
        cp = self.cp
        present = cp.where(codes_d == missing_code, -1, codes_d.astype(cp.int32))
        n_values = (present.max(axis=0) + 1).astype(cp.int32) if codes_d.shape[0] else cp.zeros(codes_d.shape[1], cp.int32)
        self.codes = cp.ascontiguousarray(cp.where(codes_d == missing_code, n_values[None, :], codes_d).astype(code_dtype))
        widths = cp.asnumpy(n_values).astype(np.int64) + 1
        self.widths = widths
        offsets = np.concatenate([[0], np.cumsum(widths)]).astype(np.int32)
        self.total_cells = int(offsets[-1])
        budget = HIST_SHARED_BYTES // 4
        first, used = [0], 0
        for f, width in enumerate(widths):
            # a group holds 3 ints per cell and one int per feature boundary
            need = 3 * int(width) + 1
            if used and used + need + 1 > budget:
                first.append(f)
                used = 0
            used += need
        first.append(len(widths))
        if len(first) - 1 > MAX_GRID_Y:  # (the histogram launch's grid y; at least one feature a group)
            raise ValueError(f"The CUDA backend's histograms take at most {MAX_GRID_Y} groups of features; this "
                             f"data needs {len(first) - 1} ({len(widths)} features). Use device='cpu'.")
        self.group_first_host = np.asarray(first, dtype=np.int32)
        self.hist_shared = max(4 * (3 * int(offsets[hi] - offsets[lo]) + (hi - lo + 1))
                               for lo, hi in zip(first[:-1], first[1:]))
        self.feat_off = cp.asarray(offsets)
        self.group_first = cp.asarray(self.group_first_host)

    # -- the node table -------------------------------------------------------------------
    def _table(self, max_leaves: int):
        """Device node table for trees of up to max_leaves leaves (one allocation of each kind)."""
        if max_leaves in self._tables:
            return self._tables[max_leaves]
        cp, K = self.cp, self.n_classes
        M = 2 * max_leaves - 1
        t = {"M": M}
        KK = K * K if K <= MERGED_MAX_K else 1
        # what the host reads after a tree, in one buffer (one copy): node sums and gains, the
        # loss of the fused update, then the integer table; the rest stays on the device
        n_head = 4 * M + 2  # doubles: nsum (3M), nfinal (M), loss, padding
        n_ints = M * 9 + CTRL_SIZE
        with self.stream:
            head = cp.zeros(8 * n_head + 4 * n_ints, dtype=cp.uint8)
            dbls = cp.zeros(M * 4 + M * 4 * K + M * KK + M * K)
        t["head"] = head
        head_d, ints = head[:8 * n_head].view(cp.float64), head[8 * n_head:].view(cp.int32)
        t["n_head"], t["ints"], t["dbls"] = n_head, ints, dbls
        t["nstart"], t["nstop"] = ints[0:M], ints[M:2 * M]
        t["npair"], t["nsplit"] = ints[2 * M:4 * M], ints[4 * M:7 * M]
        t["nchild"], t["ctrl"] = ints[7 * M:9 * M], ints[9 * M:9 * M + CTRL_SIZE]
        with self.stream:
            t["ndepth"] = cp.zeros(M, dtype=cp.int32)  # each node's depth (the root's: 0)
        ctrl = t["ctrl"]
        # the children of this step by size, and the flag for the larger one's own pass
        t["smaller"], t["larger"], t["direct"] = ctrl[2:3], ctrl[3:4], ctrl[4:5]
        t["nsum"], t["nfinal"], t["loss"] = head_d[0:3 * M], head_d[3 * M:4 * M], head_d[4 * M:4 * M + 1]
        t["ngain"], t["nscale"] = dbls[0:M], dbls[M:3 * M]
        t["nclass"] = dbls[4 * M:4 * M + 4 * K * M]
        t["nS"] = dbls[4 * M + 4 * K * M:4 * M + 4 * K * M + KK * M]
        t["steps"] = dbls[4 * M + 4 * K * M + KK * M:].reshape(M, K)  # the fused update's leaf vectors
        # the node ids of each step's batch: the root, then the children 2k+1, 2k+2 of step k
        steps = np.zeros((max_leaves, 2), dtype=np.int32)
        steps[1:, 0] = 2 * np.arange(max_leaves - 1) + 1
        steps[1:, 1] = 2 * np.arange(max_leaves - 1) + 2
        with self.stream:
            t["batches"] = cp.asarray(steps)
        self._tables[max_leaves] = t
        return t

    # -- kernel launches (all on self.stream) ----------------------------------------------
    def _launch(self, kernel, grid, block, args, shared_mem=0):
        with self.stream:  # RawKernel launches on the current stream
            kernel(grid, block, args, shared_mem=shared_mem)

    def _reset(self, t, n_sample=None):
        """A new tree's table; its root holds every row, or (``n_sample``) the first n_sample
        rows of ``self.sample``."""
        blocks = max(-(-t["M"] // 256), min(4 * self.n_sm, -(-self.n_rows // 256)))
        n_root, sample = (self.n_rows, 0) if n_sample is None else (n_sample, self.sample)
        self._launch(self.k.reset_tree, (blocks,), (256,),
                     (_i32(n_root), sample, _i32(t["M"]), self.rows, t["nstart"], t["nstop"], t["nchild"],
                      t["ngain"], t["nfinal"], t["nsplit"], t["ndepth"], t["ctrl"]))

    def _stats(self, t, batch, n_batch, rule_eq32: bool, hist_batch=None, gate=0):
        """Class statistics, the pair and the node sums of a batch: one pass over the rows for
        K <= 16 (every C_jk at once), two passes otherwise (C_rk once r is known).
        ``hist_batch``: the size of the histogram batch the nodes go to (the scale depends on
        it); ``gate``: a device flag, the launches do nothing where it is 0."""
        token = self._start("class statistics and pairs")
        w = self.w if self.weighted else 0
        K = self.n_classes
        hist_blocks = self._hist_blocks(n_batch if hist_batch is None else hist_batch)
        for mode in ((2,) if K <= MERGED_MAX_K else (0, 1)):
            # the kernel's last block per node sums the blocks' partials (kernels/aoso.cu)
            self._launch(self.k.class_stats[self.cpl], (self.stat_blocks, n_batch), (STAT_THREADS,),
                         (batch, t["ctrl"], _i32(mode), self.rows, t["nstart"], t["nstop"], t["npair"], self.p_d,
                          self.pc_d, self.y, w, _i32(K), _i32(self.KP), _i32(self.stat_stride), self.partials, gate,
                          _i32(rule_eq32), _i32(hist_blocks), _i32(self.hist_chunk), t["nclass"], t["nS"], t["nsum"],
                          t["nscale"], self.counters[0:2]))
        self._stop(token)

    def _children_stats(self, t, rule_eq32: bool):
        """The statistics of a split's two children: the smaller child's by a pass over its
        rows, the larger child's as the parent's minus the smaller's where that is accurate
        (kernels/aoso.cu, derive_larger), else by its own pass. K <= 16."""
        self._stats(t, t["smaller"], 1, rule_eq32, hist_batch=2)
        token = self._start("class statistics and pairs")
        self._launch(self.k.derive_larger, (1,), (DERIVE_THREADS,),
                     (t["ctrl"], _i32(self.n_classes), _i32(rule_eq32), _i32(self._hist_blocks(2)),
                      _i32(self.hist_chunk), t["nstart"], t["nstop"], t["npair"], t["nclass"], t["nS"], t["nsum"],
                      t["nscale"]))
        self._stop(token)
        self._stats(t, t["larger"], 1, rule_eq32, hist_batch=2, gate=t["direct"])

    def _hist_blocks(self, n_batch):
        n_groups = len(self.group_first_host) - 1
        return max(1, (4 * self.n_sm) // (n_groups * n_batch))

    def _hist(self, t, batch, n_batch):
        if not 1 <= self.hist_chunk < 2 ** 31:  # (the kernel's int; 0 would never end)
            raise ValueError(f"hist_chunk must be a positive int32, not {self.hist_chunk!r}")
        n_groups = len(self.group_first_host) - 1
        blocks = self._hist_blocks(n_batch)  # class_stats sizes the fixed-point scale by it
        w = self.w if self.weighted else 0
        token = self._start("histograms")
        self._launch(self.k.histogram, (blocks, n_groups, n_batch), (HIST_THREADS,),
                     (batch, t["ctrl"], self.rows, t["nstart"], t["nstop"], t["npair"], t["nscale"], self.codes,
                      _i32(self.n_features), self.feat_off, self.group_first, _i32(self.total_cells), self.p_d,
                      self.pc_d, self.y, w, _i32(self.n_classes), _i32(self.hist_chunk), self.hist),
                     shared_mem=self.hist_shared)
        self._stop(token)

    def _split(self, t, batch, n_batch, limits):
        """The best split of each node of the batch. ``limits``: (min_samples_leaf,
        min_child_weight, max_depth or NO_DEPTH_LIMIT); the features are ``self.allowed``."""
        min_samples_leaf, min_child_weight, max_depth = limits
        token = self._start("split evaluation")
        self._launch(self.k.split_gains, (-(-self.n_features // SPLIT_WARPS), n_batch), (SPLIT_WARPS * 32,),
                     (batch, t["ctrl"], self.hist, _i32(self.n_features), self.feat_off, _i32(self.total_cells),
                      t["nscale"], _i32(min_samples_leaf), np.float64(min_child_weight), self.allowed, t["ndepth"],
                      _i32(max_depth), self.fbest, t["ngain"], t["nsplit"], self.counters[2:4]))
        self._stop(token)

    def _allow(self, features) -> None:
        """Let the next splits use the features of the boolean mask ``features`` (None: all).
        The copy is ordered on the stream, before the launches (or graph) that read it."""
        if features is None:
            if not self._all_allowed:
                with self.stream:
                    self.allowed.fill(1)
                self._all_allowed = True
            return
        mask = all_features(self.n_features, features)  # (checks its shape)
        self.allowed.set(mask.astype(np.uint8), stream=self.stream)
        self._all_allowed = bool(mask.all())

    def _partition(self, t):
        token = self._start("partition")
        blocks = max(1, min(8 * self.n_sm, -(-self.n_rows // PART_THREADS)))
        self._launch(self.k.part_count, (blocks,), (PART_THREADS,),
                     (t["ctrl"], self.rows, t["nstart"], t["nstop"], t["nsplit"], t["nchild"], self.codes,
                      _i32(self.n_features), self.feat_off, self.counts, self.counters[4:5]))
        self._launch(self.k.part_scatter, (blocks,), (PART_THREADS,),
                     (t["ctrl"], self.rows, t["nstart"], t["nstop"], t["nsplit"], t["nchild"], self.codes,
                      _i32(self.n_features), self.feat_off, self.counts, self.tmp))
        self._launch(self.k.part_copy, (blocks,), (256,), (t["ctrl"], t["nstart"], t["nstop"], self.tmp, self.rows))
        self._stop(token)

    def _evaluate(self, t, batch, n_batch, grow: bool, rule_eq32: bool, limits):
        if n_batch == 2 and self.n_classes <= MERGED_MAX_K and self.derive_siblings:
            self._children_stats(t, rule_eq32)  # batch is this step's children
        else:
            self._stats(t, batch, n_batch, rule_eq32)
        if grow:
            self._hist(t, batch, n_batch)
            self._split(t, batch, n_batch, limits)

    def _tree_launches(self, t, max_leaves, rule_eq32, limits, update=None, n_sample=None):
        self._reset(t, n_sample)
        batches = t["batches"]
        self._evaluate(t, batches[0], 1, max_leaves > 1, rule_eq32, limits)
        for step in range(max_leaves - 1):
            token = self._start("leaf pick")
            self._launch(self.k.pick_leaf, (1,), (32,),
                         (_i32(step), t["ngain"], t["nfinal"], t["nchild"], t["ndepth"], t["ctrl"]))
            self._stop(token)
            self._partition(t)
            self._evaluate(t, batches[step + 1], 2, step < max_leaves - 2, rule_eq32, limits)
        if update is not None:
            self._fused_update(t, *update, routed=n_sample is not None)

    def _fused_update(self, t, learning_rate, leaf_clip, value_scale, routed=False):
        """F += the tree's leaf vectors times the learning rate, then p and the loss: the leaf
        vectors from the node table (leaf_steps), each row's leaf node (mark_leaves, numba,
        from the leaves' segments; ``routed``, a tree grown on a row sample: route_rows, every
        row from the root through its codes), and one pass over F (softmax_loss), all on the
        device."""
        from ._numba_kernels import mark_leaves

        token = self._start("F update and p")
        M, K = t["M"], self.n_classes
        self._launch(self.k.leaf_steps, (1,), (256,),
                     (_i32(M), _i32(K), t["nchild"], t["npair"], t["nsum"], np.float64(learning_rate),
                      np.float64(leaf_clip), np.float64(value_scale), t["steps"]))
        blocks = max(1, min(4 * self.n_sm, -(-self.n_rows // 256)))
        if routed:
            self._launch(self.k.route_rows, (blocks,), (256,),
                         (self.codes, _i32(self.n_rows), _i32(self.n_features), self.feat_off, t["nsplit"],
                          t["nchild"], self.leaf_of))
        else:
            views = t.get("nb_views")
            if views is None:
                views = t["nb_views"] = [self.nb.as_cuda_array(t[name]) for name in ("nstart", "nstop", "nchild")]
            mark_leaves[(blocks, min(M, MAX_GRID_Y)), 256, self.nb_stream](self._nb["leaf_of"], self._nb["rows"],
                                                                            *views, np.int32(M))
        self._softmax(steps=t["steps"], loss=t["loss"])
        self._stop(token)

    # -- growing a tree --------------------------------------------------------------------
    #: ``grow_tree(..., learning_rate=...)`` also adds the tree to F and computes p and the
    #: loss on the device (boosting then skips ``update_scores``; ``rescore`` returns that loss)
    fused_update = True

    def grow_tree(self, params, bin_edge, learning_rate=None, sample=None):
        """Grow one tree on the device; returns (tree, leaf_segments, leaf_ids) as the grower.
        ``sample``: subsample's increasing row ids, the rows the tree is grown on (the leaf
        segments then hold those rows only; the fused update adds the tree to every row's F).

        With ``learning_rate``, the same launch sequence (one CUDA graph) also adds the tree's
        leaf vectors times the learning rate to F and computes the next p and the training
        loss, which the next ``rescore()`` returns without another pass: a tree then costs one
        launch and one read of the node table and the loss.
        """
        from ..grower import make_tree

        if params.fixed_pair is not None or params.vector or params.first_order:
            raise ValueError("The CUDA backend grows AOSO trees (per-node class pairs) only; "
                             "train this algorithm with device='cpu'.")
        J = int(params.max_leaves)
        t = self._table(J)
        rule_eq32 = params.pair_rule == "eq32"
        update = None
        if learning_rate is not None:
            update = (float(learning_rate), float(params.leaf_clip), float(params.value_scale))
            if self._pending:
                self._softmax()  # an earlier update_scores first
        limits = (int(params.min_samples_leaf), float(params.min_child_weight),
                  NO_DEPTH_LIMIT if params.max_depth is None else int(params.max_depth))
        n_sample = None
        with self.cp.cuda.Device(self.device_id):
            self._allow(params.features)  # read by the launches: not a part of the graph's key
            if sample is not None:
                n_sample = self._set_sample(sample)  # likewise (its size is)
        key = (J, rule_eq32, limits, self.derive_siblings, self.hist_chunk, update, n_sample)
        with self.cp.cuda.Device(self.device_id):
            if self.use_graph and self.profile is None:
                graph = self._graphs.get(key)
                if graph is None:
                    graph = self._capture(t, key)
                if graph is not None:
                    graph.launch(stream=self.stream)
                else:
                    self._tree_launches(t, *key[:3], update=update, n_sample=n_sample)
            else:
                self._tree_launches(t, *key[:3], update=update, n_sample=n_sample)
            head = t["head"].get(stream=self.stream)  # the one read of the tree (synchronises)
        M, n_head = t["M"], t["n_head"]
        head_d, ints = head[:8 * n_head].view(np.float64), head[8 * n_head:].view(np.int32)
        if update is not None:
            self._fresh_loss = float(head_d[4 * M])
        nstart, nstop = ints[0:M].astype(np.int64), ints[M:2 * M].astype(np.int64)
        npair = ints[2 * M:4 * M].reshape(M, 2).astype(np.int64)
        nsplit = ints[4 * M:7 * M].reshape(M, 3)
        nchild = ints[7 * M:9 * M].reshape(M, 2)
        nsum = head_d[0:3 * M].reshape(M, 3)
        nfinal = head_d[3 * M:4 * M]
        n_nodes = 1 + 2 * int(np.count_nonzero(nchild[:, 0] >= 0))
        split = nchild[:n_nodes, 0] >= 0
        feature = np.where(split, nsplit[:n_nodes, 0], -1)
        bin_ = np.where(split, nsplit[:n_nodes, 1], -1)
        missing_left = split & (nsplit[:n_nodes, 2] != 0)
        gain = np.where(split, nfinal[:n_nodes], 0.0)
        tree = make_tree(feature, bin_, missing_left, nchild[:n_nodes, 0], nchild[:n_nodes, 1], npair[:n_nodes],
                         nsum[:n_nodes], gain, bin_edge, params.leaf_clip, params.value_scale)
        leaf_ids = np.flatnonzero(tree.is_leaf)
        return tree, np.stack([nstart[leaf_ids], nstop[leaf_ids]], axis=1), leaf_ids

    def _capture(self, t, key):
        """The tree's launches as one CUDA graph (None where capture is not supported)."""
        max_leaves, rule_eq32, limits, _, _, update, n_sample = key
        if update is not None:
            self._warm_mark_leaves()  # numba compiles on its first launch, which must not be captured
        try:
            self.stream.begin_capture()
            try:
                self._tree_launches(t, max_leaves, rule_eq32, limits, update=update, n_sample=n_sample)
            finally:
                graph = self.stream.end_capture()
        except Exception:  # an old CuPy or driver: launch kernel by kernel
            self.use_graph = False
            return None
        self._graphs[key] = graph
        return graph

    def _warm_mark_leaves(self):
        """Compile mark_leaves for int32 arrays (a launch over one empty segment)."""
        from ._numba_kernels import mark_leaves

        with self.stream:
            empty = self.cp.zeros(1, dtype=self.cp.int32)
            child = self.cp.full(2, -1, dtype=self.cp.int32)
        views = [self.nb.as_cuda_array(a) for a in (self.leaf_of, self.rows, empty, empty, child)]
        mark_leaves[(1, 1), 32, self.nb_stream](*views, np.int32(1))

    # -- scores ------------------------------------------------------------------------------
    def set_scores(self, F):
        with self.cp.cuda.Device(self.device_id), self.stream:
            self.F[...] = self.cp.asarray(np.ascontiguousarray(F, dtype=np.float64))
        self._pending = False  # F is replaced: a pending update and a fused loss are void
        self._fresh_loss = None
        return self.rescore()

    def rescore(self, F=None):
        """p and 1 - p from the device's F (after adding the pending leaf deltas of
        ``update_scores``); returns the training loss (reads one number). After a fused
        ``grow_tree`` they are computed already: its loss is returned."""
        if self._fresh_loss is not None and not self._pending:
            loss, self._fresh_loss = self._fresh_loss, None
            return loss
        self._softmax()
        return float(self.loss_d.get(stream=self.stream)[0])

    def _softmax(self, steps=None, loss=None):
        """One launch: F += the leaf vectors of each row's leaf (``steps``, or the pending
        deltas of update_scores), then p, 1 - p and the loss on the device."""
        n = self.n_rows
        tile_rows = min(256, 2560 // self.n_classes)  # kernels/aoso.cu: SOFTMAX_TILE
        blocks = max(1, min(8 * self.n_sm, -(-n // tile_rows)))
        w = self.w if self.weighted else 0
        if steps is None and self._pending:
            steps = self._leaf_deltas
        self._fresh_loss = None
        self._launch(self.k.softmax_loss, (blocks,), (256,),
                     (self.F, self.leaf_of, 0 if steps is None else steps, self.y, w, _i32(n),
                      _i32(self.n_classes), self.p_d, self.pc_d, self.loss_rows, self.counters[5:6],
                      self.loss_d if loss is None else loss))
        self._pending = False

    @property
    def p(self):
        return self.p_d.get(stream=self.stream)

    @property
    def pc(self):
        return self.pc_d.get(stream=self.stream)

    @property
    def sample_weight(self):
        return None if not self.weighted else self.w.get(stream=self.stream)

    def scores(self) -> np.ndarray:
        """The device's F, copied to the host."""
        if self._pending:
            self._softmax()
        return self.F.get(stream=self.stream)

    def update_scores(self, F, segments, deltas):
        """``F[rows of leaf j] += deltas[j]`` on the device's F (the host array F is not used:
        the device holds the scores; ``scores()`` copies them back).

        The numba kernel ``mark_leaves`` records each row's leaf; the addition itself happens
        in the next ``rescore`` (one pass over F that also computes p), or here first when an
        earlier update is still pending."""
        from ._numba_kernels import mark_leaves

        segments = np.asarray(segments, dtype=np.int64)
        n_leaves = segments.shape[0]
        if n_leaves == 0:
            return
        if self._pending:
            self._softmax()  # apply the earlier update before its buffers are overwritten
        if getattr(self, "_leaf_capacity", 0) < n_leaves:  # buffers and their numba views, kept
            cap = max(64, n_leaves)
            with self.stream:
                self._leaf_start = self.cp.empty(cap, dtype=self.cp.int32)
                self._leaf_stop = self.cp.empty(cap, dtype=self.cp.int32)
                self._leaf_deltas = self.cp.empty((cap + 1, self.n_classes))  # + zeros for rows in no segment
                self._leaf_child = self.cp.full(2 * cap, -1, dtype=self.cp.int32)  # every segment a leaf
            self._leaf_views = [self.nb.as_cuda_array(a) for a in (self._leaf_start, self._leaf_stop, self._leaf_child)]
            self._leaf_capacity = cap
        self._leaf_start[:n_leaves].set(segments[:, 0].astype(np.int32), stream=self.stream)
        self._leaf_stop[:n_leaves].set(segments[:, 1].astype(np.int32), stream=self.stream)
        self._leaf_deltas[:n_leaves].set(np.ascontiguousarray(deltas, dtype=np.float64), stream=self.stream)
        with self.stream:  # a row in no segment keeps its F: it points at a row of zeros
            self._leaf_deltas[n_leaves].fill(0.0)
            self.leaf_of.fill(n_leaves)
        longest = int((segments[:, 1] - segments[:, 0]).max())
        blocks = max(1, min(4 * self.n_sm, -(-longest // 256)))
        mark_leaves[(blocks, min(n_leaves, MAX_GRID_Y)), 256, self.nb_stream](
            self._nb["leaf_of"], self._nb["rows"], *self._leaf_views, np.int32(n_leaves))
        self._pending = True

    # -- the stages, one batch at a time (tests and the Python grower) ----------------------
    def _set_sample(self, sample) -> int:
        """Copy the row sample a tree is grown on to the device (ordered on the stream, before
        the launches that read it); returns its size."""
        rows = check_row_sample(self.n_rows, sample).astype(np.int32)
        if self.sample is None:
            try:
                with self.stream:
                    self.sample = self.cp.empty(self.n_rows, dtype=self.cp.int32)
            except (self.cp.cuda.memory.OutOfMemoryError, MemoryError) as exc:  # CuPy's pool, or RMM's
                raise _out_of_memory(exc, self.needed_bytes + 4 * self.n_rows) from None
        self.sample[:len(rows)].set(rows, stream=self.stream)
        return len(rows)

    def reset_partition(self, sample=None):
        with self.stream:
            self.rows[...] = self.cp.asarray(root_rows(self.n_rows, sample, np.int32))

    def _stage_nodes(self, segments, pairs=None):
        """Write a batch's segments (and pairs) into the stage table, nodes 0..B-1."""
        segments = np.asarray(segments, dtype=np.int64).reshape(-1, 2)
        B = segments.shape[0]
        t = self._table(max(2, (B + 2) // 2))
        with self.stream:
            t["ints"].fill(0)
            t["nstart"][:B] = self.cp.asarray(segments[:, 0].astype(np.int32))
            t["nstop"][:B] = self.cp.asarray(segments[:, 1].astype(np.int32))
            if pairs is not None:
                t["npair"][:2 * B] = self.cp.asarray(np.asarray(pairs, dtype=np.int32).reshape(-1))
        return t, B

    def _batches(self, B):
        return [(self.cp.asarray(np.arange(lo, min(lo + 2, B), dtype=np.int32)), lo, min(lo + 2, B))
                for lo in range(0, B, 2)]

    def _stage_stats(self, segments, rule):
        t, B = self._stage_nodes(segments)
        for batch, lo, hi in self._batches(B):
            self._stats(t, batch, hi - lo, rule == "eq32")
        return t, B

    def select_pairs(self, segments, rule):
        t, B = self._stage_stats(segments, rule)
        return t["npair"][:2 * B].get(stream=self.stream).reshape(B, 2).astype(np.int64)

    def node_sums(self, segments, pairs):
        """Node sums under the given pairs (from the class statistics of eq (33)'s pass)."""
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        t, B = self._stage_stats(segments, "eq33")
        G = self._class_table(t, B)
        out = np.empty((B, N_CHANNELS))
        segments = np.asarray(segments, dtype=np.int64).reshape(-1, 2)
        for j, (r, s) in enumerate(pairs):
            C = self._cross(segments[j], r)
            K = self.n_classes
            out[j, 0] = G[j, r] - G[j, s]
            out[j, 1] = G[j, K + r] + G[j, K + s] + 2.0 * C[s]
            out[j, 2] = segments[j, 1] - segments[j, 0]
        return out

    def _class_table(self, t, B):
        K = self.n_classes
        return t["nclass"][:4 * K * B].get(stream=self.stream).reshape(B, 4 * K)

    def _cross(self, segment, r):
        """C_rk = sum w p_r p_k over a segment (mode 1 of class_stats with the pair's r)."""
        t, _ = self._stage_nodes([segment], [[r, 0]])
        batch = self.cp.asarray(np.zeros(1, np.int32))
        w = self.w if self.weighted else 0
        self._launch(self.k.class_stats[self.cpl], (self.stat_blocks, 1), (STAT_THREADS,),
                     (batch, t["ctrl"], _i32(1), self.rows, t["nstart"], t["nstop"], t["npair"], self.p_d, self.pc_d,
                      self.y, w, _i32(self.n_classes), _i32(self.KP), _i32(self.stat_stride), self.partials, 0,
                      _i32(0), _i32(1), _i32(self.hist_chunk), t["nclass"], t["nS"], t["nsum"], t["nscale"],
                      self.counters[0:2]))
        K = self.n_classes
        part = self.partials[:self.stat_blocks * self.stat_stride].get(stream=self.stream).reshape(
            self.stat_blocks, self.stat_stride)
        C = np.zeros(K)
        active = max(1, min(self.stat_blocks, -(-int(segment[1] - segment[0]) // STAT_MIN_ROWS)))
        for b in range(active):  # float64, in another fixed order than class_stats
            C += part[b, :K]
        return C

    def histograms(self, segments, pairs, first_order=False):
        """Decoded fixed-point histograms (float64, the layout of Backend.histograms).

        The scales are the ones eq (33)'s pass sets for each node's own pair; ``pairs`` must
        be those pairs (the GPU builds AOSO histograms only).
        """
        if first_order:
            raise ValueError("The CUDA backend builds second-order (AOSO) histograms only.")
        segments = np.asarray(segments, dtype=np.int64).reshape(-1, 2)
        chosen = self.select_pairs(segments, "eq33")
        if not np.array_equal(chosen, np.asarray(pairs).reshape(-1, 2)):
            raise ValueError("The CUDA backend builds histograms under each node's own eq (33) pair.")
        t, B = self._stage_stats(segments, "eq33")
        out = np.zeros((B, self.n_features, self.n_codes, N_CHANNELS))
        scales = t["nscale"][:2 * B].get(stream=self.stream).reshape(B, 2)
        for batch, lo, hi in self._batches(B):
            # the kernel reads batch[slot] as the node id; slots are 0..hi-lo-1
            self._hist(t, batch, hi - lo)
            raw = self.hist[:hi - lo].get(stream=self.stream)
            with self.stream:
                self.hist.fill(0)
            for j in range(hi - lo):
                dense = self._dense(raw[j])
                out[lo + j, ..., 0] = dense[..., 0] / scales[lo + j, 0]
                out[lo + j, ..., 1] = dense[..., 1] / scales[lo + j, 1]
                out[lo + j, ..., 2] = dense[..., 2]
        self._last_scales = scales
        return out

    def _dense(self, compact):
        """A compact histogram (total_cells, C) in the Backend layout (D, n_codes, C)."""
        out = np.zeros((self.n_features, self.n_codes, compact.shape[-1]), dtype=np.float64)
        off = np.asarray(self.feat_off.get(stream=self.stream))
        for f in range(self.n_features):
            width = off[f + 1] - off[f]
            out[f, :width - 1] = compact[off[f]:off[f + 1] - 1]
            out[f, -1] = compact[off[f + 1] - 1]
        return out

    def _compact(self, dense):
        """The inverse of _dense, for histograms whose unused bins are empty."""
        off = np.asarray(self.feat_off.get(stream=self.stream))
        out = np.zeros((self.total_cells, dense.shape[-1]), dtype=np.int64)
        for f in range(self.n_features):
            width = off[f + 1] - off[f]
            out[off[f]:off[f + 1] - 1] = dense[f, :width - 1]
            out[off[f + 1] - 1] = dense[f, -1]
        return out

    def find_splits(self, hists, min_samples_leaf, min_child_weight=0.0, features=None):
        """Best splits of histograms that ``histograms`` returned (re-encoded exactly with the
        same scales: they are powers of two). ``features``: a mask of the features with
        candidates (None: all)."""
        hists = np.asarray(hists, dtype=np.float64)
        B = hists.shape[0]
        scales = self._last_scales
        out = SplitBatch(gain=np.empty(B), feature=np.empty(B, np.int64), bin=np.empty(B, np.int64),
                         missing_left=np.empty(B, bool), sums=np.empty((B, N_CHANNELS)))
        t, _ = self._stage_nodes(np.zeros((B, 2)))
        with self.stream:
            t["nscale"][:2 * B] = self.cp.asarray(scales.reshape(-1))
            t["ngain"].fill(-np.inf)
        self._allow(features)
        for batch, lo, hi in self._batches(B):
            enc = np.empty((hi - lo, self.total_cells, N_CHANNELS), dtype=np.int64)
            for j in range(hi - lo):
                fixed = np.empty(hists.shape[1:])
                fixed[..., 0] = np.rint(hists[lo + j, ..., 0] * scales[lo + j, 0])
                fixed[..., 1] = np.rint(hists[lo + j, ..., 1] * scales[lo + j, 1])
                fixed[..., 2] = hists[lo + j, ..., 2]
                enc[j] = self._compact(fixed)
            with self.stream:
                self.hist[:hi - lo] = self.cp.asarray(enc)
            self._split(t, batch, hi - lo, (int(min_samples_leaf), float(min_child_weight), NO_DEPTH_LIMIT))
        gain = t["ngain"][:B].get(stream=self.stream)
        split = t["nsplit"][:3 * B].get(stream=self.stream).reshape(B, 3)
        out.gain[:] = np.where(gain > 0, gain, -np.inf)
        out.feature[:] = split[:, 0]
        out.bin[:] = split[:, 1]
        out.missing_left[:] = split[:, 2] != 0
        out.sums[:] = hists[:, 0].sum(axis=1)
        return out

    def partition(self, segment, feature, bin, missing_left):
        t = self._table(2)
        with self.stream:
            ints = np.zeros(t["ints"].shape[0], dtype=np.int32)
            M = t["M"]
            ints[0], ints[M] = segment[0], segment[1]
            ints[4 * M:4 * M + 3] = (feature, bin, int(bool(missing_left)))
            ints[7 * M:7 * M + 2] = (1, 2)
            ints[9 * M:9 * M + 2] = (0, 0)  # not stopped, node 0 chosen
            t["ints"][...] = self.cp.asarray(ints)
        self._partition(t)
        return int(t["nstop"][1:2].get(stream=self.stream)[0]) - int(segment[0])

    def training_codes(self) -> np.ndarray:
        """The training codes with missing values at ``missing_code`` (Backend convention)."""
        codes = self.codes.get(stream=self.stream)
        return np.where(codes == (self.widths - 1)[None, :], self.n_codes - 1, codes).astype(codes.dtype)

    @classmethod
    def add_trees(cls, F, trees, codes, missing_code, learning_rate):
        """As ``Backend.add_trees`` (the same result bit for bit), computed on the GPU."""
        predict_scores(F, trees, codes, missing_code, learning_rate)

    @property
    def rows_host(self) -> np.ndarray:
        return self.rows.get(stream=self.stream)

    # -- prediction -----------------------------------------------------------------------------
    def tree_leaves_device(self, tree, codes_d):
        """Leaf id of every row of device codes (missing values at n_codes - 1) in a tree."""
        cp = self.cp
        n = codes_d.shape[0]
        out = cp.empty(n, dtype=cp.int32)
        with self.stream:
            arrays = [cp.asarray(a) for a in (tree.feature.astype(np.int32), tree.bin.astype(np.int32),
                                               tree.missing_left.astype(np.uint8), tree.left.astype(np.int32),
                                               tree.right.astype(np.int32))]
        self._launch(self.k.apply_tree, (max(1, min(8 * self.n_sm, -(-n // 256))),), (256,),
                     (codes_d, np.int64(n), _i32(codes_d.shape[1]), _i32(self.n_codes - 1), *arrays, out))
        return out


def predict_scores(F, trees, codes, missing_code: int, learning_rate: float) -> None:
    """Add a stored ensemble's scores for binned rows to F (host, in place), on the GPU.

    The same additions in the same order as ``Backend.add_trees`` (each tree's leaf vectors
    times the learning rate, computed on the host, added tree by tree), so F equals the CPU's
    bit for bit. The trees travel to the device in one upload.
    """
    import cupy as cp

    trees = list(trees)
    if not trees:
        return
    try:
        codes_d = cp.ascontiguousarray(cp.asarray(codes))
    except (cp.cuda.memory.OutOfMemoryError, MemoryError) as exc:
        raise _out_of_memory(exc, np.asarray(codes).nbytes + F.nbytes) from None
    code_dtype = np.dtype(codes_d.dtype)
    if code_dtype not in CODE_TYPES:
        raise ValueError(f"codes must be uint8 or uint16, got {code_dtype}")
    k = _Kernels(cp.cuda.Device().id, code_dtype)
    n, D = codes_d.shape
    K = F.shape[1]
    sizes = [t.n_nodes for t in trees]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    feature = np.concatenate([t.feature for t in trees]).astype(np.int32)
    bin_ = np.concatenate([t.bin for t in trees]).astype(np.int32)
    missing_left = np.concatenate([t.missing_left for t in trees]).astype(np.uint8)
    left = np.concatenate([t.left for t in trees]).astype(np.int32)
    right = np.concatenate([t.right for t in trees]).astype(np.int32)
    steps = np.concatenate([learning_rate * t.node_vectors(K) for t in trees])
    try:
        d = {name: cp.asarray(a) for name, a in (("feature", feature), ("bin", bin_), ("missing_left", missing_left),
                                                 ("left", left), ("right", right), ("steps", steps))}
        F_d = cp.asarray(np.ascontiguousarray(F, dtype=np.float64))
    except (cp.cuda.memory.OutOfMemoryError, MemoryError) as exc:
        raise _out_of_memory(exc, codes_d.nbytes + F.nbytes + steps.nbytes) from None
    blocks = max(1, min(4096, -(-n // 256)))
    for j in range(len(trees)):
        lo, hi = int(offsets[j]), int(offsets[j + 1])
        k.predict_add((blocks,), (256,), (codes_d, np.int64(n), _i32(D), _i32(missing_code), d["feature"][lo:hi],
                                          d["bin"][lo:hi], d["missing_left"][lo:hi], d["left"][lo:hi],
                                          d["right"][lo:hi], d["steps"][lo:hi], _i32(K), F_d))
    F[...] = F_d.get()


def staged_errors(trees, codes, y, missing_code: int, learning_rate: float, n_classes: int, every: int = 1,
                  per_iteration: int = 1) -> list[tuple[int, int]]:
    """(iterations, misclassified rows) every ``every`` iterations, scoring on the GPU.

    The predicted class is ``losses.predicted_class``'s (ties within PREDICTION_TIE to the
    lowest class). For benchmarks: the test set stays on the device, F is updated tree by tree.
    """
    import cupy as cp

    from ..losses import PREDICTION_TIE

    trees = list(trees)
    codes_d = cp.ascontiguousarray(cp.asarray(codes))
    y_d = cp.asarray(y)
    k = _Kernels(cp.cuda.Device().id, codes_d.dtype)
    n, D = codes_d.shape
    F = cp.zeros((n, n_classes))
    blocks = max(1, min(4096, -(-n // 256)))
    out = []
    for j, tree in enumerate(trees):
        arrays = [cp.asarray(a) for a in (tree.feature.astype(np.int32), tree.bin.astype(np.int32),
                                           tree.missing_left.astype(np.uint8), tree.left.astype(np.int32),
                                           tree.right.astype(np.int32),
                                           learning_rate * tree.node_vectors(n_classes))]
        k.predict_add((blocks,), (256,), (codes_d, np.int64(n), _i32(D), _i32(missing_code), *arrays,
                                          _i32(n_classes), F))
        iteration = (j + 1) // per_iteration
        if (j + 1) % per_iteration == 0 and (iteration % every == 0 or j == len(trees) - 1):
            top = F.max(axis=1, keepdims=True)
            scale = cp.maximum(1.0, cp.abs(F).max(axis=1, keepdims=True))
            predicted = cp.argmax(F >= top - PREDICTION_TIE * scale, axis=1)
            out.append((iteration, int(cp.count_nonzero(predicted != y_d))))
    return out
