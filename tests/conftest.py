"""Shared fixtures: the real datasets of ../shared/data and small generated problems.

The real datasets are read from ``$GPUBOOST_DATA`` or from ``shared/data`` beside the
repository. Where they are missing a test using them is skipped, except under ``CI=true``,
where it fails: a green CI run means those tests ran.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]

#: the subprocesses started with the session (see ``start_early``), by test id
_EARLY: dict = {}


def start_early(command):
    """Mark a test whose slow subprocess (compiling the kernels anew: minutes on one core) is
    started when the session starts, beside the suite, and waited for by the test (the fixture
    ``early_process``). The suite's own first fit compiles on one core too, so on CI's two cores
    the two compilations overlap instead of following each other.

    ``command(params, folder)`` gives ``(argv, env)`` for the test's parameters (``{}`` where it
    has none) and a new folder (the process's working folder, removed once the test has its
    output), or None for no process (a case the test skips).
    """
    def mark(test):
        test.early_command = command
        return test
    return mark


def _start(item):
    """Start an item's start_early process: (process, stdout file, stderr file, folder), None
    where its command gives none, or the exception its command raised (told by the test)."""
    command = item.function.early_command
    folder = Path(tempfile.mkdtemp(prefix="gpuboost-early-"))
    try:
        job = command(getattr(getattr(item, "callspec", None), "params", {}), folder)
        if job is None:
            shutil.rmtree(folder, ignore_errors=True)
            return None
        argv, env = job
        out, err = open(folder / "stdout.txt", "w+"), open(folder / "stderr.txt", "w+")
        return subprocess.Popen(argv, stdout=out, stderr=err, text=True, cwd=folder, env=env), out, err, folder
    except Exception as exc:  # noqa: BLE001 - the test reports it, the other tests run
        shutil.rmtree(folder, ignore_errors=True)
        return exc


def _end(started) -> tuple:
    """Wait for (or kill) a started process and remove its folder: (returncode, stdout, stderr)."""
    process, out, err, folder = started
    if process.poll() is None:
        process.kill()
    process.wait()
    out.seek(0)
    err.seek(0)
    result = process.returncode, out.read(), err.read()
    out.close()
    err.close()
    shutil.rmtree(folder, ignore_errors=True)
    return result


def pytest_collection_finish(session):
    option = session.config.option
    if any(getattr(option, name, False) for name in ("collectonly", "showfixtures", "setupplan", "setuponly")):
        return
    for item in session.items:  # (the selected tests only)
        if hasattr(getattr(item, "function", None), "early_command") and item.nodeid not in _EARLY:
            _EARLY[item.nodeid] = _start(item)


def pytest_sessionfinish(session, exitstatus):
    while _EARLY:
        started = _EARLY.popitem()[1]
        if isinstance(started, tuple):
            _end(started)


@pytest.fixture
def early_process(request):
    """``wait(timeout)``: (returncode, stdout, stderr) of this test's ``start_early`` process,
    once it has ended: the one the session started, or one started now (a rerun of the test,
    say); killed, and the test failed, past ``timeout`` seconds from now."""
    def wait(timeout):
        nodeid = request.node.nodeid
        started = _EARLY.pop(nodeid) if nodeid in _EARLY else _start(request.node)
        if isinstance(started, Exception):
            raise started
        assert started is not None, "the test's start_early command gave no process"
        try:
            started[0].wait(timeout)
        except subprocess.TimeoutExpired:
            _end(started)
            pytest.fail(f"the test's subprocess ran past {timeout} s: {started[0].args}")
        return _end(started)
    return wait


def data_dir() -> Path:
    if os.environ.get("GPUBOOST_DATA"):
        return Path(os.environ["GPUBOOST_DATA"])
    return REPO.parent / "shared" / "data"


def load_dataset(name: str):
    """(X_train, y_train, X_test, y_test) of a dataset of ../shared/data, X as float64."""
    path = data_dir() / f"{name}.npz"
    if not path.exists():
        message = f"dataset {path} is missing (set GPUBOOST_DATA to the folder of the .npz files)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    with np.load(path, allow_pickle=False) as d:
        return (d["X_train"].astype(np.float64), d["y_train"].astype(np.int64),
                d["X_test"].astype(np.float64), d["y_test"].astype(np.int64))


def node_depths(tree):
    """Each node's depth (the root's: 0), for trees whose children come after their parents."""
    depth = np.zeros(len(tree.feature), dtype=int)
    for node in range(len(tree.feature)):
        if tree.left[node] >= 0:
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
    return depth


def bins_as_thresholds(features, bins):
    """A bin_edge for the tests' trees (see TreeGrower): each split's bin index as its raw
    threshold, for integer arrays of one shape."""
    return np.asarray(bins, float)


def check_vector_stump(backend, codes: np.ndarray, g: np.ndarray, h: np.ndarray, n_bins: int) -> None:
    """Grow a two-leaf vector tree (K-LogitBoost's kind) on ``backend`` (set_scores called) and
    check it against brute force: the split with the largest sum over classes of eq (30)'s gain
    under the per-sample gradients g and Hessians h (n, K), and every leaf's Newton step
    -G_k / H_k."""
    from gpuboost import losses
    from gpuboost.grower import GrowerParams, TreeGrower

    n, K = g.shape
    grower = TreeGrower(backend, GrowerParams(max_leaves=2, vector=True, leaf_clip=np.inf), bins_as_thresholds, n)
    tree, segments, leaf_ids = grower.grow()
    best = (-np.inf, None)
    for f in range(codes.shape[1]):
        for b in range(n_bins):
            left = codes[:, f] <= b
            if 0 < left.sum() < n:
                gain = sum(losses.split_gain(g[left, k].sum(), h[left, k].sum(), g[~left, k].sum(), h[~left, k].sum(),
                                             g[:, k].sum(), h[:, k].sum()) for k in range(K))
                if gain > best[0] * (1 + 1e-10):
                    best = (gain, (f, b))
    assert (tree.feature[0], tree.bin[0]) == best[1]
    for (start, stop), leaf in zip(segments, leaf_ids):
        idx = backend.rows[start:stop]
        np.testing.assert_allclose(tree.vector[leaf], -g[idx].sum(axis=0) / h[idx].sum(axis=0), rtol=1e-10)


@pytest.fixture
def small_multiclass():
    """A small 4-class problem with continuous features and no exact ties."""
    rng = np.random.default_rng(0)
    n, d, k = 300, 5, 4
    X = rng.normal(size=(n, d))
    logits = X @ rng.normal(size=(d, k)) + 0.5 * rng.normal(size=(n, k))
    y = np.argmax(logits, axis=1)
    return X, y


def leaf_tree(pair: np.ndarray, value: np.ndarray, vector: np.ndarray | None = None):
    """A Tree of len(value) nodes that are all leaves, with the given pairs and values (for the
    tests of node vectors and leaf steps)."""
    from gpuboost.tree import Tree

    n = len(value)
    return Tree(feature=np.full(n, -1, np.int32), bin=np.zeros(n, np.int32), threshold=np.full(n, np.nan),
                missing_left=np.zeros(n, bool), left=np.full(n, -1, np.int32), right=np.full(n, -1, np.int32),
                pair=pair, value=value, n_samples=np.ones(n, np.int64), gain=np.zeros(n), vector=vector)
