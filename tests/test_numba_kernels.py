"""The numba.cuda kernel of the CUDA backend, run on the CPU by numba's CUDA simulator.

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


REPO = Path(__file__).resolve().parents[1]


def run_simulated(code: str) -> None:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "OK" in done.stdout


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
