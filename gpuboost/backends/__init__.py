"""Backends: the stages of a boosting iteration on the arrays of one device.

``numpy`` is the reference every other backend is tested against; ``cpu`` is the compiled
(numba) CPU backend that ``device="cpu"`` trains with; ``cuda`` (CuPy and numba.cuda, imported
only when asked for) trains AOSO on an NVIDIA GPU.
"""

from __future__ import annotations

import os

from .base import Backend, SplitBatch
from .numpy import NumpyBackend

__all__ = ["Backend", "SplitBatch", "NumpyBackend", "backend_class"]

#: Environment variable that makes ``device="cpu"`` use the NumPy reference backend and the
#: Python grower instead of the compiled one (for tests and debugging; not a tuning knob).
REFERENCE_ENV = "GPUBOOST_CPU_BACKEND"


def backend_class(device: str) -> type[Backend]:
    """The backend class that trains on a resolved device ("cpu" or "cuda")."""
    if device == "cuda":
        from .cuda import CudaBackend  # imports CuPy and numba.cuda: only when a GPU is used

        return CudaBackend
    if device != "cpu":
        raise ValueError(f"no backend for device {device!r}")
    choice = os.environ.get(REFERENCE_ENV, "numba")
    if choice == "numpy":
        return NumpyBackend
    if choice != "numba":
        raise ValueError(f"{REFERENCE_ENV} must be 'numba' or 'numpy', got {choice!r}.")
    from .cpu import CpuBackend  # imports numba: only when a model is fitted

    return CpuBackend
