"""Every CUDA C++ source compiles for sm_90 without a GPU, with the template instantiations that
the CUDA backend asks CuPy's RawModule for (DESIGN.md, "Kernels").

nvcc is on the CI machine; locally a missing nvcc skips, under CI=true it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
KERNELS = REPO / "kernels"


def _nvcc() -> str:
    nvcc = shutil.which("nvcc") or next(
        (str(p) for p in (Path("/usr/local/cuda/bin/nvcc"),) if p.is_file()), None)
    if nvcc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nvcc is not installed on the CI machine: the kernels' compile check cannot run")
        pytest.skip("nvcc is not installed")
    return nvcc


def test_every_template_the_backend_requests_is_instantiated():
    from gpuboost.backends.cuda import CODE_TYPES, KERNEL_NAMES, STAT_KERNELS, TEMPLATE_KERNELS

    source = (KERNELS / "instantiate.cu").read_text()
    kept = set(re.findall(r"\(void\*\)(\w+)<Code>", source))
    assert kept == set(TEMPLATE_KERNELS)
    assert set(re.findall(r"\(void\*\)(\w+<\d+>)", source)) == set(STAT_KERNELS)
    for code_type in CODE_TYPES.values():
        assert f"keep_code_kernels<{code_type}>" in source
    plain = set(re.findall(r'extern "C" __global__ void(?: __launch_bounds__\(\w+(?: \* \d+)?\))?\s+(\w+)\(',
                           (KERNELS / "aoso.cu").read_text()))
    requested = {n for n in KERNEL_NAMES if "<" not in n}
    assert set(KERNEL_NAMES) >= set(STAT_KERNELS)
    assert requested == plain, f"asked for but missing: {requested - plain}; defined but never loaded: {plain - requested}"


@pytest.mark.parametrize("source", sorted(p.name for p in KERNELS.glob("*.cu")))
def test_cuda_source_compiles_for_sm90(source, tmp_path):
    nvcc = _nvcc()
    # the instantiation unit compiles warning-free; a source on its own has unused templates
    strict = ["-Werror", "all-warnings"] if source == "instantiate.cu" else []
    done = subprocess.run(
        [nvcc, "-std=c++17", "-arch=sm_90", "-c", str(KERNELS / source), "-o", str(tmp_path / "out.o"), *strict],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def test_the_oldest_architecture_the_backend_accepts_compiles_and_the_one_before_does_not(tmp_path):
    # cuda_usable() turns away GPUs below MIN_COMPUTE_CAPABILITY: it must be the kernels' real minimum
    from gpuboost.backends.cuda import MIN_COMPUTE_CAPABILITY

    nvcc = _nvcc()
    oldest = "sm_%d%d" % MIN_COMPUTE_CAPABILITY
    outcomes = {}
    for arch in (oldest, "sm_75"):
        done = subprocess.run([nvcc, "-std=c++17", f"-arch={arch}", "-c", str(KERNELS / "instantiate.cu"), "-o",
                               str(tmp_path / f"{arch}.o")], capture_output=True, text=True, timeout=600)
        outcomes[arch] = (done.returncode, done.stderr[-2000:])
    assert outcomes[oldest][0] == 0, outcomes[oldest][1]
    assert outcomes["sm_75"][0] != 0 and "__reduce_add_sync" in outcomes["sm_75"][1]
