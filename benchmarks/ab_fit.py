"""Whole AOSO fits of two versions of gpuboost in one process, alternated: an A/B test for the
changes that ab_grow_tree.py cannot take (a kernel's arguments, the scoring pass, the Python
side of a tree).

A is the package at a git revision, exported with ``git archive`` into a folder of its own and
imported under another name (numba's cache stays in that folder, so a second run of the same
revision does not compile again); B is the working copy. Each round fits both, in alternating
order, on the same data with the same settings (BENCHMARKS.md's: 20 leaves, learning rate 0.1,
``--threads`` threads). The script prints each round's fit time per tree and the time per tree
inside the compiled kernels of a tree's three main passes (as far as each version has them),
then the medians and the medians of the rounds' B/A ratios. Whole fits on these shared machines
drift by 30-40% between phases; a phase that changes between the two fits of a round shows as
that round's outlier, which the median of the rounds' ratios does not follow.

    python benchmarks/ab_fit.py letter --base HEAD~1 --trees 1000 --rounds 10
    python benchmarks/ab_fit.py pendigits --algorithm mart --weighted

A development tool, like ab_grow_tree.py and profile_cpu.py; the timed benchmark is bench_cpu.py.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

#: The compiled kernels timed inside the fits (a version without one shows no time for it).
KERNELS = ("grow_tree", "softmax_from_exponentials", "update_and_arguments", "grow_rounds")


def exported_package(revision: str):
    """gpuboost at the git revision, imported as gpuboost_<commit> from a folder that holds it
    (made on the first call for that commit, kept for numba's cache)."""
    commit = subprocess.run(["git", "rev-parse", revision], cwd=REPO, check=True, capture_output=True,
                            text=True).stdout.strip()
    name = f"gpuboost_{commit[:12]}"
    folder = Path(tempfile.gettempdir()) / "gpuboost-ab-fit"
    if not (folder / name / "__init__.py").exists():
        archive = subprocess.run(["git", "archive", commit, "gpuboost"], cwd=REPO, check=True,
                                 capture_output=True).stdout
        staging = Path(tempfile.mkdtemp())
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(staging, filter="data")
        folder.mkdir(exist_ok=True)
        (staging / "gpuboost").rename(folder / name)
    sys.path.insert(0, str(folder))
    package = importlib.import_module(name)
    if not package.__file__.startswith(str(folder)):
        raise SystemExit(f"ab_fit.py: {name} was not imported from {folder}")
    return package, commit


def main() -> None:
    import numpy as np
    from threadpoolctl import threadpool_limits

    import bench_cpu
    import gpuboost
    from gpuboost.algorithms import trees_per_iteration

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--base", default="HEAD", help="A: the package at this git revision (B: the working copy)")
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--colsample", type=float, default=1.0, help="colsample_bytree of both (random_state 0)")
    parser.add_argument("--algorithm", default="aoso", help="the algorithm of both (its trees: --trees counts them)")
    parser.add_argument("--weighted", action="store_true",
                        help="fit with sample weights (uniform in [0.5, 2], seed 0): the weighted kernels' paths")
    args = parser.parse_args()

    base, commit = exported_package(args.base)
    versions = {"A": base, "B": gpuboost}
    spent = {v: collections.defaultdict(float) for v in versions}

    X, y, X_test, y_test, _ = bench_cpu.load(args.dataset)
    weight = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y)) if args.weighted else None
    per_iteration = trees_per_iteration(args.algorithm, len(np.unique(y)))

    def fit(v, trees):
        spent[v].clear()
        iterations = max(1, trees // per_iteration)
        model = versions[v].BoostClassifier(n_estimators=iterations, max_leaves=bench_cpu.LEAVES,
                                            learning_rate=bench_cpu.LEARNING_RATE, n_jobs=args.threads, tol=0.0,
                                            algorithm=args.algorithm,
                                            **({} if args.colsample == 1.0 else
                                               dict(colsample_bytree=args.colsample, random_state=0)))
        began = time.perf_counter()
        model.fit(X, y, sample_weight=weight)
        trees = model.n_trees_  # (the trees kept: ABC's trial trees are in the time, not the count)
        per_tree = (time.perf_counter() - began) / trees * 1e3
        return per_tree, {name: spent[v][name] / trees * 1e3 for name in KERNELS}, model

    print(f"ab_fit: {args.dataset}, {args.algorithm}{', weighted' if args.weighted else ''}, {args.trees} trees, "
          f"{args.threads} threads, {args.rounds} rounds, colsample_bytree {args.colsample}; "
          f"A = {args.base} ({commit[:12]}), B = the working copy; machine: {bench_cpu.machine()['cpu']}")
    results = {"A": [], "B": []}
    errors = {}
    with threadpool_limits(limits=args.threads):
        for v in versions:  # compile (or load the cache) before timing
            fit(v, 10)
        for v, package in versions.items():  # then each version's kernels, wrapped to time their calls
            # (after the compilation: some kernels call others, which must be numba's then)
            kernels = importlib.import_module(package.__name__ + ".backends.cpu").kernels
            for name in KERNELS:
                if hasattr(kernels, name):
                    setattr(kernels, name, _timed(getattr(kernels, name), spent[v], name))
        for round_ in range(args.rounds):
            for v in ("A", "B") if round_ % 2 == 0 else ("B", "A"):
                per_tree, kernel_times, model = fit(v, args.trees)
                results[v].append((per_tree, kernel_times))
                errors[v] = int(np.sum(model.predict(X_test) != y_test))
            print(f"  round {round_}: " + "; ".join(
                f"{v} {results[v][-1][0]:.3f} ms/tree (" + ", ".join(
                    f"{name} {results[v][-1][1][name]:.3f}" for name in KERNELS) + ")" for v in versions), flush=True)
    print(f"test errors: A {errors['A']}, B {errors['B']}")
    for label, pick in [("fit", lambda r: r[0])] + [(name, lambda r, name=name: r[1][name]) for name in KERNELS]:
        a = [pick(r) for r in results["A"]]
        b = [pick(r) for r in results["B"]]
        if min(a) > 0 and min(b) > 0:
            ratio = statistics.median(y_ / x_ for x_, y_ in zip(a, b))
            print(f"{label}: A {statistics.median(a):.3f}, B {statistics.median(b):.3f} ms/tree (medians); "
                  f"B/A {ratio:.3f} (median of the rounds' ratios)")


def _timed(function, spent, name):
    def timed(*arguments):
        began = time.perf_counter()
        out = function(*arguments)
        spent[name] += time.perf_counter() - began
        return out

    return timed


if __name__ == "__main__":
    main()
