"""Backends: the stages of a boosting iteration on the arrays of one device.

``numpy`` is the reference every other backend is tested against; ``cpu`` is the compiled
(numba) CPU backend that ``device="cpu"`` trains with; ``cuda`` (CuPy and numba.cuda, imported
only when asked for) trains AOSO on an NVIDIA GPU.
"""

from __future__ import annotations

import os
import sys
import warnings

from .base import Backend, SplitBatch
from .numpy import NumpyBackend

__all__ = ["Backend", "SplitBatch", "NumpyBackend", "backend_class", "vector_backend_class"]

#: Environment variable that makes ``device="cpu"`` use the NumPy reference backend and the
#: Python grower instead of the compiled one (for tests and debugging; not a tuning knob).
REFERENCE_ENV = "GPUBOOST_CPU_BACKEND"


def _reference_chosen() -> bool:
    choice = os.environ.get(REFERENCE_ENV) or "numba"  # (set but empty: unset, as a shell's VAR= reads)
    if choice not in ("numba", "numpy"):
        raise ValueError(f"{REFERENCE_ENV} must be 'numba' or 'numpy', got {choice!r}.")
    if choice == "numba" and _forked_from_openmp:
        _warn_forked()
        return True
    return choice == "numpy"


#: Whether this process was forked from one whose compiled kernels had started GNU OpenMP's
#: threads (numba's "omp" threading layer): GNU OpenMP cannot run in such a child, and numba
#: terminates it at its first parallel kernel ("fork() called from a process already using GNU
#: OpenMP"), which hung multiprocessing pools of the "fork" start method. Such a process trains
#: and predicts with the NumPy reference backend instead: the same models, slower.
_forked_from_openmp = False
_warned_forked = False


def _gnu_openmp_started() -> bool:
    """Whether numba's threading layer is GNU OpenMP and a parallel kernel has started it."""
    numba = sys.modules.get("numba")
    if numba is None:
        return False
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel ran: OpenMP has no threads
        return False
    if layer != "omp":
        return False
    from numba.np.ufunc import omppool

    return getattr(omppool, "openmp_vendor", "GNU") == "GNU"  # (Intel's OpenMP is fork-safe)


def _after_fork_in_child() -> None:
    global _forked_from_openmp, _warned_forked
    if not _forked_from_openmp and _gnu_openmp_started():
        _forked_from_openmp = True
        _warned_forked = False


def _inherited_openmp() -> bool:
    """Whether this process, importing gpuboost's backends for the first time, was forked from
    one that had started GNU OpenMP in numba without gpuboost (so without the fork hook below):
    numba's state says the layer started, but the process has a single thread, where a pool
    started here would have its workers (Linux: /proc/self/task)."""
    numba = sys.modules.get("numba")
    if numba is None or numba.config.NUMBA_NUM_THREADS < 2 or not _gnu_openmp_started():
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _warn_forked() -> None:
    global _warned_forked
    if not _warned_forked:
        _warned_forked = True
        warnings.warn(
            "this process was forked after gpuboost's compiled CPU kernels started OpenMP threads in its parent, "
            "and GNU OpenMP cannot run in a forked process: gpuboost trains and predicts here with its NumPy "
            "reference backend (the same models, slower). For the compiled kernels in worker processes, use the "
            "'spawn' or 'forkserver' start method (multiprocessing.get_context('spawn'); joblib's default loky "
            "backend does).", RuntimeWarning, stacklevel=4)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
_forked_from_openmp = _inherited_openmp()


def vector_backend_class() -> type[Backend]:
    """The CPU backend of K-LogitBoost, AdaBoost.MH and multi-label learning: the NumPy
    reference with its costly stages compiled (CpuVectorBackend), or the reference itself
    where GPUBOOST_CPU_BACKEND=numpy."""
    if _reference_chosen():
        return NumpyBackend
    from .cpu import CpuVectorBackend  # imports numba: only when a model is fitted

    return CpuVectorBackend


def backend_class(device: str) -> type[Backend]:
    """The backend class that trains on a resolved device ("cpu" or "cuda")."""
    if device == "cuda":
        from .cuda import CudaBackend  # imports CuPy and numba.cuda: only when a GPU is used

        return CudaBackend
    if device != "cpu":
        raise ValueError(f"no backend for device {device!r}")
    if _reference_chosen():
        return NumpyBackend
    from .cpu import CpuBackend  # imports numba: only when a model is fitted

    return CpuBackend
