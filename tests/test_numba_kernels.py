"""The numba.cuda kernels of the CUDA backend, run on the CPU by numba's CUDA simulator.

``NUMBA_ENABLE_CUDASIM`` must be set before numba is imported, and the other tests import
numba for the CPU backend, so each check runs in a fresh interpreter. Inputs are tiny: the
simulator runs every thread in Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_simulated(code: str) -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "OK" in done.stdout


@pytest.mark.parametrize("K, weighted", [(2, False), (5, True), (3, False)])
def test_softmax_rows_against_the_numpy_reference(K, weighted):
    run_simulated(f"""
        import numpy as np
        from numba import cuda
        assert cuda.simulator_enabled if hasattr(cuda, "simulator_enabled") else True
        from gpuboost import losses
        from gpuboost.backends._numba_kernels import softmax_rows
        rng = np.random.default_rng({K})
        n, K = 37, {K}
        F = rng.normal(scale=3.0, size=(n, K))
        F[0] = 0.0                      # every class equal
        F[1, 0] = 60.0                  # p rounds to 1: the complement must keep its digits
        F[2, :] = -40.0; F[2, K - 1] = 5.0
        y = rng.integers(0, K, size=n).astype(np.int32)
        y[1] = 0
        w = rng.uniform(0.5, 2.0, size=n) if {weighted} else np.ones(1)
        p = np.full((n, K), np.nan); pc = np.full((n, K), np.nan); loss = np.full(n, np.nan)
        softmax_rows[2, 16](F, y, w, {weighted}, p, pc, loss)
        p_ref, pc_ref, total = losses.softmax_with_loss(F, y, w if {weighted} else None)
        assert np.allclose(p, p_ref, rtol=1e-14, atol=1e-300), abs(p - p_ref).max()
        assert np.allclose(pc, pc_ref, rtol=1e-14, atol=1e-300), abs(pc - pc_ref).max()
        assert pc[1, 0] > 0 and abs(pc[1, 0] / pc_ref[1, 0] - 1) < 1e-13
        assert abs(loss.sum() - total) <= 1e-12 * abs(total)
        assert loss[1] > 0                   # the tiny loss of a confident row is not rounded to 0
        print("OK")
    """)


def test_add_leaf_deltas_against_the_numpy_reference():
    run_simulated("""
        import numpy as np
        from gpuboost.backends._numba_kernels import add_leaf_deltas
        from gpuboost.backends.numpy import NumpyBackend
        rng = np.random.default_rng(1)
        n, K = 41, 4
        rows = rng.permutation(n).astype(np.int32)
        cuts = np.array([0, 0, 7, 8, 30, 41])  # an empty leaf and a one-row leaf among them
        start = cuts[:-1].astype(np.int32); stop = cuts[1:].astype(np.int32)
        deltas = rng.normal(size=(len(start), K))
        F = rng.normal(size=(n, K)); F_ref = F.copy()
        add_leaf_deltas[(2, len(start)), 8](F, rows, start, stop, deltas)
        for j in range(len(start)):
            F_ref[rows[start[j]:stop[j]]] += deltas[j]
        assert np.array_equal(F, F_ref)
        print("OK")
    """)
