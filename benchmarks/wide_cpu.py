"""Wide data on the CPU: seconds a tree of gpuboost AOSO beside LightGBM and XGBoost.

Synthetic data (``--rows`` x ``--features`` uniform values, labels from ten of the features,
``--classes`` classes), the matched settings of bench_cpu.py (shared/spec/BENCHMARKS.md: 20 leaves,
learning rate 0.1, 255 bins). Each library fits ``--small`` and then ``--large`` iterations from scratch; the time a
tree is the difference of the two fits over the difference of their trees, so that binning
and set-up cancel (AOSO grows one tree an iteration, LightGBM and XGBoost K). One run, on
``--threads`` threads. A development measure beside bench_cpu.py, not a timed test.

    python benchmarks/wide_cpu.py --rows 100000 --features 2000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cpu import MODELS  # noqa: E402


def data(n_rows: int, n_features: int, n_classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n_rows, n_features), dtype=np.float32)
    scores = X[:, :10] @ rng.normal(size=(10, n_classes)).astype(np.float32)
    scores += rng.normal(scale=0.3, size=(n_rows, n_classes)).astype(np.float32)
    return X, np.argmax(scores, axis=1)


def seconds(fit) -> float:
    start = time.perf_counter()
    fit()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=2000)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--small", type=int, default=2, help="iterations of the first fit")
    parser.add_argument("--large", type=int, default=6, help="iterations of the second fit")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip", nargs="*", default=[], choices=["gpuboost", "lightgbm", "xgboost"])
    args = parser.parse_args()
    X, y = data(args.rows, args.features, args.classes)
    K = args.classes
    print(f"{args.rows} rows x {args.features} features, K={K}, {args.threads} threads; "
          f"fits of {args.small} and {args.large} iterations")
    fits = {}
    for name in ("gpuboost", "lightgbm", "xgboost"):
        if name in args.skip:
            continue
        try:
            __import__(name)
        except ImportError:
            print(f"{name}: not installed")
            continue

        def fit(iterations, name=name):  # bench_cpu.py's matched settings, with `iterations` iterations
            per_iteration = 1 if name == "gpuboost" else K
            MODELS[name](iterations * per_iteration, args.threads, K).fit(X, y)

        if name == "gpuboost":
            fit(1)  # (numba's compilation, or its cache's loading)
        fits[name] = (fit, 1 if name == "gpuboost" else K)
    for name, (fit, per_iteration) in fits.items():
        small = seconds(lambda: fit(args.small))
        large = seconds(lambda: fit(args.large))
        trees = (args.large - args.small) * per_iteration
        print(f"{name:16s} fit {args.small}: {small:7.2f} s  fit {args.large}: {large:7.2f} s  "
              f"{1000 * (large - small) / trees:9.1f} ms a tree  "
              f"{1000 * (large - small) / (args.large - args.small):9.1f} ms an iteration", flush=True)


if __name__ == "__main__":
    main()
