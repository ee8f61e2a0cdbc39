"""Backends: the stages of a boosting iteration on the arrays of one device.

``numpy`` is the reference every other backend is tested against; ``cpu`` is the compiled
(numba) CPU backend that ``device="cpu"`` trains with; ``cuda`` (CuPy and numba.cuda, imported
only when asked for) trains AOSO on an NVIDIA GPU.
"""

from __future__ import annotations

import os

from .base import Backend, SplitBatch
from .numpy import NumpyBackend

__all__ = ["Backend", "SplitBatch", "NumpyBackend", "backend_class", "vector_backend_class"]

#: Environment variable that makes ``device="cpu"`` use the NumPy reference backend and the
#: Python grower instead of the compiled one (for tests and debugging; not a tuning knob).
REFERENCE_ENV = "GPUBOOST_CPU_BACKEND"


def _reference_chosen() -> bool:
    choice = os.environ.get(REFERENCE_ENV, "numba")
    if choice not in ("numba", "numpy"):
        raise ValueError(f"{REFERENCE_ENV} must be 'numba' or 'numpy', got {choice!r}.")
    return choice == "numpy"


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
