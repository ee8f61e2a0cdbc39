"""Which backend a ``device`` string means.

``import gpuboost`` never imports CuPy or touches CUDA; this module is consulted at ``fit``.
"""

from __future__ import annotations

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(device: str) -> str:
    """Map ``"auto" | "cpu" | "cuda"`` to the backend that will run: ``"cpu"`` for now.

    The CUDA backend is not part of this version: ``"auto"`` therefore means the CPU and
    ``"cuda"`` is an error that says so.
    """
    if not isinstance(device, str) or device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}.")
    if device == "cuda":
        raise RuntimeError(
            "device='cuda' asks for the CUDA backend, which this version of gpuboost does not "
            "include yet. Use device='cpu' (or 'auto', which picks the CPU)."
        )
    return "cpu"
