"""Run by test_backend_cpu.test_the_other_vector_width_compiles_once_and_is_the_same, in a new
process: the compiled CPU kernels built with the other vector width (4 lanes on an AVX-512
host, else 8) and without numba's cache, so that every kernel is compiled here, once for both
checks (each took about 100 s of CI's time on its own):

- the other width gives the host width's probabilities, losses, trees and fitted models, bit for
  bit (every class and candidate is its own lane), so that both widths stay tested on any host;
- each kernel is compiled once per argument types: numba compiles a kernel again for each Python
  int constant passed to it (a "literal" type) and for a prange index (unsigned), and each copy
  of a parallel kernel cost seconds of the first fit (36 -> 25 s when they were removed). The
  stage and state constants are NumPy integers, and the prange indices are cast.
  _histogram_block keeps a copy for feature ranges starting at a literal 0.

Prints OK at the end. Argument: a folder for the other width's module.
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
from numba.core import types

from gpuboost import BoostClassifier
from gpuboost.backends import _numba_cpu as kernels
from gpuboost.backends import cpu
from gpuboost.backends.cpu import CpuBackend
from gpuboost.grower import GrowerParams


def other_width_module(folder):
    source = Path(kernels.__file__).read_text()
    width = "VW = 8 if _has_avx512() else 4"
    assert source.count(width) == 1 and "cache=True" in source
    other_width = 4 if kernels.VW == 8 else 8
    path = Path(folder) / "_numba_cpu_other_width.py"
    path.write_text(source.replace(width, f"VW = {other_width}").replace("cache=True", "cache=False"))
    spec = importlib.util.spec_from_file_location("_numba_cpu_other_width", path)
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    assert other.VW == other_width and other.ROOT_SUMS_CLASSES == other_width * other.VBLOCK
    return other


def grown_trees(module):
    """Probabilities, loss and tree of CpuBackend with `module` as its kernels. 10 classes: the
    scoring pass sums the root's classes at either width; 26: at 8 lanes only
    (ROOT_SUMS_CLASSES 32 against 16), and two class passes a node at 4."""
    cpu.kernels = module
    params = GrowerParams(max_leaves=12, min_samples_leaf=3)
    out = []
    for seed, k, weighted in ((0, 10, False), (1, 26, True)):
        rng = np.random.default_rng(seed)
        n, d, n_bins = 600, 5, 30
        codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
        codes[rng.random((n, d)) < 0.05] = 255
        y = rng.integers(0, k, size=n)
        w = rng.uniform(0.1, 2.0, size=n) if weighted else None
        F = rng.normal(scale=2.0, size=(n, k))
        b = CpuBackend(codes, y, w, k, n_bins=n_bins, missing_code=255, n_threads=2)
        loss = b.set_scores(F)
        tree, segments, leaf_ids = b.grow_tree(params, lambda features, bins: np.asarray(bins, float))
        assert tree.n_nodes > 1
        out.append((loss, b.p.copy(), b.pct.copy(), segments, leaf_ids)
                   + tuple(getattr(tree, name) for name in ("feature", "bin", "missing_left", "left", "right", "pair",
                                                            "value", "n_samples", "gain")))
    return out


def fitted(module):
    """The predictions of fits that call the kernels of every backend: grow_tree's stages at two
    threads (AOSO), CpuVectorBackend's (AdaBoost.MH, K-LogitBoost, multi-label)."""
    cpu.kernels = module
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2 * kernels.HALVES_ROWS + 100, 6))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    model = BoostClassifier(n_estimators=3, n_jobs=2).fit(X, y)
    out = [model.predict_proba(X), model.predict(X)]
    Y = np.stack([y == 0, y == 1, y == 2, X[:, 3] > 0], axis=1).astype(int)
    for algorithm, target in (("adaboostmh", y), ("klogitboost", y), ("aoso", Y), ("adaboostmh", Y),
                              ("klogitboost", Y)):
        model = BoostClassifier(algorithm=algorithm, n_estimators=2, n_jobs=2).fit(X[:500], target[:500])
        out.append(model.predict_proba(X))
    return out


def compiled_once(module):
    def plain(t):
        t = types.unliteral(t)
        return types.int64 if t == types.uint64 else t

    compiled = 0
    for name in dir(module):
        dispatcher = getattr(module, name)
        if not hasattr(dispatcher, "signatures") or not dispatcher.signatures:
            continue
        compiled += 1
        if name != "_histogram_block":
            normalised = {tuple(plain(t) for t in sig) for sig in dispatcher.signatures}
            assert len(normalised) == len(dispatcher.signatures), (name, dispatcher.signatures)
    assert compiled > 20, compiled


def main(folder):
    other = other_width_module(folder)
    for host, theirs in zip(grown_trees(kernels), grown_trees(other)):
        for a, b in zip(host, theirs):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(fitted(kernels), fitted(other)):
        np.testing.assert_array_equal(a, b)
    compiled_once(other)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1])
