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


def test_mark_leaves_against_the_numpy_reference():
    run_simulated("""
        import numpy as np
        from gpuboost.backends._numba_kernels import mark_leaves
        rng = np.random.default_rng(1)
        n = 41
        rows = rng.permutation(n).astype(np.int32)
        cuts = np.array([0, 0, 7, 8, 30, 41])  # an empty leaf and a one-row leaf among them
        start = cuts[:-1].astype(np.int32); stop = cuts[1:].astype(np.int32)
        leaf_of = np.full(n, -1, dtype=np.int32)
        mark_leaves[(2, len(start)), 8](leaf_of, rows, start, stop, np.full(2 * len(start), -1, np.int32),
                                        np.int32(len(start)))
        expected = np.full(n, -1, dtype=np.int32)
        for j in range(len(start)):
            expected[rows[start[j]:stop[j]]] = j
        assert np.array_equal(leaf_of, expected) and (leaf_of >= 0).all()
        # with F += deltas[leaf_of] (the softmax kernel's first step) this is the NumPy backend's update
        from gpuboost.backends.numpy import NumpyBackend
        deltas = rng.normal(size=(len(start), 3)); F = rng.normal(size=(n, 3)); F_ref = F.copy()
        F += deltas[leaf_of]
        for j in range(len(start)):
            F_ref[rows[start[j]:stop[j]]] += deltas[j]
        assert np.array_equal(F, F_ref)
        # a node table: root 0 split into 1 and 2, node 2 split into 3 and 4; rows get leaf node ids
        nstart = np.array([0, 0, 10, 10, 25], np.int32); nstop = np.array([41, 10, 41, 25, 41], np.int32)
        nchild = np.array([1, 2, -1, -1, 3, 4, -1, -1, -1, -1], np.int32)
        leaf_of[:] = -1
        mark_leaves[(3, 5), 4](leaf_of, rows, nstart, nstop, nchild, np.int32(5))
        expected = np.empty(n, np.int32)
        expected[rows[0:10]] = 1; expected[rows[10:25]] = 3; expected[rows[25:41]] = 4
        assert np.array_equal(leaf_of, expected)
        # fewer blocks in y than segments (CUDA's grid y is at most 65535; 2 max_leaves - 1 nodes may
        # be more): each block takes every gridDim.y-th segment. Segments past n_segments (a longer
        # buffer's stale entries) are not read.
        for grid_y in (1, 2, 4):
            leaf_of[:] = -1
            mark_leaves[(2, grid_y), 4](leaf_of, rows, nstart, nstop, nchild, np.int32(5))
            assert np.array_equal(leaf_of, expected), grid_y
        stale_start = np.concatenate([start, np.int32([0])]); stale_stop = np.concatenate([stop, np.int32([n])])
        leaf_of[:] = -1
        mark_leaves[(2, 2), 8](leaf_of, rows, stale_start, stale_stop, np.full(2 * len(stale_start), -1, np.int32),
                               np.int32(len(start)))
        expected = np.full(n, -1, dtype=np.int32)
        for j in range(len(start)):
            expected[rows[start[j]:stop[j]]] = j
        assert np.array_equal(leaf_of, expected)
        print("OK")
    """)
