"""Direct timed fits to a test error: gpuboost AOSO and LightGBM, alternated, repeated.

``bench_cpu.py`` estimates the time to an error from whole fits (fit time x trees needed /
trees built). This script times fits that stop exactly there: gpuboost with ``--trees`` trees
and LightGBM with ``--lightgbm-iterations`` iterations (the counts at which each first reaches
the error, from a ``bench_cpu.py`` run), matched settings, alternately ``--repeat`` times, and
prints each fit's time and test errors.

Usage: ``python benchmarks/time_to_error.py --dataset letter --trees 1688 --lightgbm-iterations 977``
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from bench_cpu import LEARNING_RATE, LEAVES, load, machine


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="letter")
    parser.add_argument("--trees", type=int, required=True, help="gpuboost AOSO trees")
    parser.add_argument("--lightgbm-iterations", type=int, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import lightgbm as lgb

    from gpuboost import BoostClassifier

    Xtr, ytr, Xte, yte, description = load(args.dataset)
    m = machine()
    print(f"{args.dataset}: {description}; {m['cpu']}, {m['logical_cpus']} logical CPUs; {args.threads} threads; "
          f"load average at start {m['load_average_at_start']}")
    BoostClassifier(n_estimators=5, n_jobs=args.threads).fit(Xtr[:500], ytr[:500])  # kernels loaded or compiled
    times = {"gpuboost": [], "lightgbm": []}
    for rep in range(args.repeat):
        t = time.perf_counter()
        model = BoostClassifier(n_estimators=args.trees, max_leaves=LEAVES, learning_rate=LEARNING_RATE,
                                n_jobs=args.threads).fit(Xtr, ytr)
        times["gpuboost"].append(time.perf_counter() - t)
        g_err = int(np.sum(model.predict(Xte) != yte))
        t = time.perf_counter()
        peer = lgb.LGBMClassifier(num_leaves=LEAVES, learning_rate=LEARNING_RATE, min_child_samples=1,
                                  min_child_weight=1e-3, reg_lambda=0.0, max_bin=255,
                                  n_estimators=args.lightgbm_iterations, n_jobs=args.threads, verbose=-1).fit(Xtr, ytr)
        times["lightgbm"].append(time.perf_counter() - t)
        l_err = int(np.sum(peer.predict(Xte) != yte))
        print(f"rep {rep}: gpuboost AOSO {args.trees} trees fit {times['gpuboost'][-1]:.2f} s, {g_err} test errors; "
              f"LightGBM {args.lightgbm_iterations} iterations fit {times['lightgbm'][-1]:.2f} s, {l_err} test errors",
              flush=True)
    g, lt = np.median(times["gpuboost"]), np.median(times["lightgbm"])
    print(f"median: gpuboost {g:.2f} s, LightGBM {lt:.2f} s; gpuboost / LightGBM = {g / lt:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
