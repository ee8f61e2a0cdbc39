"""Prediction time for batches of 1 to all test rows: gpuboost AOSO against LightGBM, XGBoost and
scikit-learn, each fitted once at bench_cpu.py's matched settings and equal numbers of trees.

A service that scores a few rows at a time pays a model's fixed cost per call (input checks,
binning, walking the ensemble's bookkeeping) more than its cost per row. Each library's
``predict`` is called on the first b test rows, repeatedly, and the median wall time is printed
per batch size, side by side, with each model's test errors on all test rows (equal trees is not
equal accuracy: AOSO makes fewer errors at the same number of trees).

    python benchmarks/predict_latency.py pendigits letter --threads 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cpu  # noqa: E402

BATCHES = (1, 10, 100, 1000)


def median_seconds(predict, X, budget_s=1.0, at_most=200):
    """The median of repeated calls, as many as fit in about budget_s (3 at least)."""
    predict(X)
    times = []
    began = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - began < budget_s and len(times) < at_most):
        t0 = time.perf_counter()
        predict(X)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("datasets", nargs="+", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--libraries", nargs="+", default=list(bench_cpu.MODELS), choices=list(bench_cpu.MODELS))
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits

    print(f"predict_latency: {args.threads} threads, median ms per predict call; machine: {bench_cpu.machine()['cpu']}")
    for name in args.datasets:
        Xtr, ytr, Xte, yte, _ = bench_cpu.load(name)
        K = int(len(np.unique(ytr)))
        trees = bench_cpu.DEFAULT_TREES[name]
        batches = [b for b in BATCHES if b < len(Xte)] + [len(Xte)]
        print(f"\n{name}: {trees} trees each ({trees // K} iterations x {K} for the K-tree libraries); "
              f"batches of {', '.join(map(str, batches))} test rows")
        print(f"  {'library':18s} {'test errors':>11s} " + " ".join(f"{b:>10d}" for b in batches))
        with threadpool_limits(limits=args.threads):
            for lib in args.libraries:
                model = bench_cpu.MODELS[lib](trees, args.threads, K).fit(Xtr, ytr)
                errors = int(np.sum(model.predict(Xte) != yte))
                ms = [median_seconds(model.predict, Xte[:b]) * 1e3 for b in batches]
                print(f"  {bench_cpu.LABELS[lib]:18s} {errors:11d} " + " ".join(f"{x:10.3f}" for x in ms), flush=True)


if __name__ == "__main__":
    main()
