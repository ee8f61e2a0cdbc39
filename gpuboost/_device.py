"""Which backend a ``device`` string means.

``import gpuboost`` never imports CuPy or touches CUDA; this module is consulted at ``fit`` and
``predict``, and imports CuPy (inside a try) only when a GPU could be asked for.
"""

from __future__ import annotations

DEVICES = ("auto", "cpu", "cuda")

#: Algorithms the CUDA backend trains; the others train on the CPU (device="auto" picks it).
CUDA_ALGORITHMS = ("aoso",)


def gpu_status() -> tuple[bool, str]:
    """(True, "") when a CUDA GPU is usable (CuPy and numba-cuda see it, compute capability 8.0
    or newer: ``backends.cuda.cuda_usable``), else (False, why not)."""
    from .backends.cuda import cuda_usable

    return cuda_usable()


def resolve_device(device: str, algorithm: str = "aoso") -> str:
    """Map ``"auto" | "cpu" | "cuda"`` to the backend that will train: ``"cpu"`` or ``"cuda"``.

    "auto" picks the GPU when one is usable (CuPy and numba-cuda see a device of compute
    capability 8.0 or newer) and the algorithm has a CUDA implementation, else the CPU. "cuda" without a usable GPU, or for an algorithm
    without a CUDA implementation, is an error that says what to do.
    """
    if not isinstance(device, str) or device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}.")
    if device == "cpu":
        return "cpu"
    if algorithm not in CUDA_ALGORITHMS:
        if device == "cuda":
            raise ValueError(
                f"algorithm={algorithm!r} has no CUDA implementation yet (the GPU trains {', '.join(CUDA_ALGORITHMS)}); "
                "use device='cpu' or 'auto'."
            )
        return "cpu"
    usable, why = gpu_status()
    if usable:
        return "cuda"
    if device == "cuda":
        raise RuntimeError(
            f"device='cuda' needs a usable NVIDIA GPU with CuPy, numba-cuda and a CUDA driver: {why}. "
            "Install the GPU extras (pip install \"gpuboost[cuda12]\" or \"gpuboost[cuda13]\") on a machine with "
            "a GPU, or use device='cpu' (or 'auto', which picks the CPU when no GPU is usable)."
        )
    return "cpu"


def prediction_device(trained_on: str) -> str:
    """Where to predict: the GPU for a model trained there when one is usable, else the CPU
    (a GPU-trained model predicts on any machine; both give the same scores bit for bit)."""
    if trained_on == "cuda" and gpu_status()[0]:
        return "cuda"
    return "cpu"
