"""The cost of saving: a fit with and without a Checkpoint, and save_model / load_model of the
fitted model, for two versions of gpuboost (A: a git revision, imported as ab_fit.py does; B: the
working copy), alternated. A Checkpoint saves the whole model every ``--every`` iterations, so a
version that writes every tree at every save spends time that grows with the square of the
trees.

    python benchmarks/checkpoint_cost.py letter --base HEAD~1 --trees 1000 --every 50

A development tool, like ab_fit.py.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def main() -> None:
    import bench_cpu
    import gpuboost
    from ab_fit import exported_package

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--base", default="HEAD", help="A: the package at this git revision (B: the working copy)")
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    base, commit = exported_package(args.base)
    versions = {"A": base, "B": gpuboost}
    Xtr, ytr, _, _, _ = bench_cpu.load(args.dataset)
    print(f"checkpoint_cost: {args.dataset}, {args.trees} trees, Checkpoint every {args.every}; A = {commit[:12]}, "
          f"B = the working copy; {args.threads} threads; machine: {bench_cpu.machine()['cpu']}")
    got = {(key, what): [] for key in versions for what in ("fit", "fit+checkpoint", "save", "load")}
    for package in versions.values():  # (a warm-up: compiles, or loads the compiled kernels)
        package.BoostClassifier(n_estimators=2, max_leaves=20, n_jobs=args.threads).fit(Xtr[:500], ytr[:500])
    with tempfile.TemporaryDirectory() as folder:
        for r in range(args.rounds):
            for key in (("A", "B") if r % 2 == 0 else ("B", "A")):
                package = versions[key]
                path = Path(folder) / f"{key}.json"
                for what in ("fit", "fit+checkpoint"):
                    checkpoint = importlib.import_module(package.__name__ + ".callback").Checkpoint
                    callbacks = [checkpoint(path, every=args.every)] if what != "fit" else None
                    model = package.BoostClassifier(n_estimators=args.trees, max_leaves=20, n_jobs=args.threads,
                                                    callbacks=callbacks)
                    t0 = time.perf_counter()
                    model.fit(Xtr, ytr)
                    got[key, what].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                model.save_model(path)
                got[key, "save"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                package.load_model(path)
                got[key, "load"].append(time.perf_counter() - t0)
        print(f"  file: {path.stat().st_size / 1e6:.1f} MB")
    print(f"  {'seconds (median of ' + str(args.rounds) + ')':28s} {'A':>9s} {'B':>9s} {'B/A':>7s}")
    for what in ("fit", "fit+checkpoint", "save", "load"):
        a, b = statistics.median(got["A", what]), statistics.median(got["B", what])
        print(f"  {what:28s} {a:9.3f} {b:9.3f} {b / a:7.3f}")


if __name__ == "__main__":
    main()
