"""Prediction time for batches of 1 to all test rows: gpuboost AOSO against LightGBM, XGBoost and
scikit-learn, each fitted once at bench_cpu.py's matched settings and equal numbers of trees.

A service that scores a few rows at a time pays a model's fixed cost per call (input checks,
binning, walking the ensemble's bookkeeping) more than its cost per row. Each library's
``predict`` is called on the first b test rows, repeatedly, and the median wall time is printed
per batch size, side by side, with each model's test errors on all test rows (equal trees is not
equal accuracy: AOSO makes fewer errors at the same number of trees).

``--flush-mb M`` adds a second line per library: calls that each follow a read of M MB (not
timed), so that the model comes from memory rather than the caches, as in a service whose other
work ran between two requests (a 4000-tree letter model is about 11 MB). Those calls take the
next b test rows each time, so that no call repeats the one before.

    python benchmarks/predict_latency.py pendigits letter --threads 2
    python benchmarks/predict_latency.py pendigits letter --batches 1 2 4 10 --flush-mb 128
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


def median_flushed_seconds(predict, X, rows, flush, calls=30):
    """The median of ``calls`` calls on ``rows`` rows of X each (the next rows every time), each
    after a read of the array ``flush`` (not timed): the model's arrays leave the caches."""
    times = []
    at = 0
    for _ in range(calls):
        if at + rows > len(X):
            at = 0
        part = X[at:at + rows]
        at += rows
        flush.sum()
        t0 = time.perf_counter()
        predict(part)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("datasets", nargs="+", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--libraries", nargs="+", default=list(bench_cpu.MODELS), choices=list(bench_cpu.MODELS))
    parser.add_argument("--batches", nargs="+", type=int, default=list(BATCHES),
                        help="rows a call (default 1 10 100 1000; all test rows are added)")
    parser.add_argument("--flush-mb", type=int, default=0,
                        help="also time calls after a read of this many MB each (0: not)")
    args = parser.parse_args()
    if min(args.batches) < 1 or args.flush_mb < 0:
        parser.error("--batches must be positive and --flush-mb at least 0")
    flush = np.ones((args.flush_mb << 20) // 8) if args.flush_mb else None
    from threadpoolctl import threadpool_limits

    print(f"predict_latency: {args.threads} threads, median ms per predict call; machine: {bench_cpu.machine()['cpu']}")
    for name in args.datasets:
        Xtr, ytr, Xte, yte, _ = bench_cpu.load(name)
        K = int(len(np.unique(ytr)))
        trees = bench_cpu.DEFAULT_TREES[name]
        batches = sorted({b for b in args.batches if b < len(Xte)}) + [len(Xte)]
        print(f"\n{name}: {trees} trees each ({trees // K} iterations x {K} for the K-tree libraries); "
              f"batches of {', '.join(map(str, batches))} test rows")
        print(f"  {'library':18s} {'test errors':>11s} " + " ".join(f"{b:>10d}" for b in batches))
        with threadpool_limits(limits=args.threads):
            for lib in args.libraries:
                model = bench_cpu.MODELS[lib](trees, args.threads, K).fit(Xtr, ytr)
                errors = int(np.sum(model.predict(Xte) != yte))
                ms = [median_seconds(model.predict, Xte[:b]) * 1e3 for b in batches]
                print(f"  {bench_cpu.LABELS[lib]:18s} {errors:11d} " + " ".join(f"{x:10.3f}" for x in ms), flush=True)
                if flush is not None:
                    ms = [median_flushed_seconds(model.predict, Xte, b, flush) * 1e3 for b in batches]
                    print(f"  {'  after ' + str(args.flush_mb) + ' MB read':30s} " + " ".join(f"{x:10.3f}" for x in ms),
                          flush=True)


if __name__ == "__main__":
    main()
