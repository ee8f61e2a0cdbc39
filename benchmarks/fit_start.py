"""Where a GPU fit's start goes (the seconds before its first tree ends), and the binning
routes against each other: a NumPy X binned on the host or uploaded and binned on the GPU.

After a warm-up fit (compilation and kernel loading are not counted), each route fits a few
trees, alternated over rounds; printed: the time from the start of ``fit`` to the end of the
first tree, and the median of the later trees. Then one fit of two trees under cProfile, the
functions that take the most time (cumulative).

    python benchmarks/fit_start.py poker --rounds 3
    python benchmarks/fit_start.py covertype290k --rounds 3
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("GPUBOOST_RMM", "0")  # CuPy's pool, as bench_gpu.py


def fit_times(X, y, trees: int):
    from gpuboost import BoostClassifier
    from gpuboost.callback import Callback

    ends = []

    class Clock(Callback):
        def after_iteration(self, estimator, iteration):
            ends.append(time.perf_counter())
            return False

    model = BoostClassifier(n_estimators=trees, device="cuda", tol=0.0)
    model.callbacks = [Clock()]
    started = time.perf_counter()
    model.fit(X, y)
    total = time.perf_counter() - started
    return ends[0] - started, float(np.median(np.diff(ends))) if len(ends) > 2 else float("nan"), total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", choices=["poker", "covertype290k"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--poker-rows", type=int, default=10_000_000)
    args = parser.parse_args()
    import bench_gpu
    from gpuboost import BoostClassifier
    from gpuboost import sklearn as gb_sklearn

    started = time.perf_counter()
    if args.dataset == "poker":
        X, y, _, _, split = bench_gpu.poker(args.poker_rows, 1000)
    else:
        X, y, _, _, split = bench_gpu.load(args.dataset)
    print(f"{args.dataset}: X {X.shape} {X.dtype}, {split} (made or loaded in {time.perf_counter() - started:.2f} s)")
    routes = {"host binning": 1 << 62, "GPU binning": gb_sklearn.GPU_BINNING_VALUES}
    for threshold in (1 << 62, 1):  # warm-up of both routes (kernels compiled or loaded)
        gb_sklearn.GPU_BINNING_VALUES = threshold
        BoostClassifier(n_estimators=3, device="cuda").fit(X[:50_000], y[:50_000])
    figures = {route: [] for route in routes}
    for r in range(args.rounds):
        for route, threshold in routes.items():
            gb_sklearn.GPU_BINNING_VALUES = threshold
            first, later, total = fit_times(X, y, args.trees)
            figures[route].append((first, later, total))
            print(f"  round {r} {route:13s}: first tree ends {first:.3f} s, later trees {1e3 * later:.2f} ms "
                  f"(median), fit of {args.trees} trees {total:.3f} s", flush=True)
    for route, rows in figures.items():
        print(f"{route:13s}: first tree ends {statistics.median(r[0] for r in rows):.3f} s (median of "
              f"{len(rows)}), fit of {args.trees} trees {statistics.median(r[2] for r in rows):.3f} s")
    for route, threshold in routes.items():
        gb_sklearn.GPU_BINNING_VALUES = threshold
        profile = cProfile.Profile()
        profile.enable()
        BoostClassifier(n_estimators=2, device="cuda", tol=0.0).fit(X, y)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
        print(f"\n== cProfile, {route}, a fit of 2 trees (cumulative seconds)")
        print("\n".join(line for line in out.getvalue().splitlines()[6:] if line.strip()))


if __name__ == "__main__":
    main()
