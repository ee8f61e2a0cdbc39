"""How far rounding alone moves a model's test errors: the same fit on row permutations of the
training set, on each device asked for.

A permutation changes no example, only the order in which float64 sums add the rows, so the
spread of the test errors over permutations is the spread that rounding gives (one near-tie
decided the other way sends the rest of the boosting elsewhere). Two builds whose errors lie in
each other's spread differ by rounding; a build whose errors sit apart from the reference's on
every permutation has a defect. Permutation 0 is the data's own order.

    python benchmarks/permutation_spread.py pendigits --trees 200 --permutations 6 --device cuda cpu
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cpu  # noqa: E402


def permutation(n: int, seed: int) -> np.ndarray:
    return np.arange(n) if seed == 0 else np.random.default_rng(seed).permutation(n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--permutations", type=int, default=6)
    parser.add_argument("--device", nargs="+", default=["cpu"], choices=["cpu", "cuda"])
    parser.add_argument("--every", type=int, default=50, help="also print the test errors every this many trees")
    parser.add_argument("--json", help="write the figures to this JSON file")
    parser.add_argument("--save", help="save each model in this folder, as DEVICE-permutation-SEED.json")
    args = parser.parse_args()
    import gpuboost
    from gpuboost import BoostClassifier

    X, y, Xt, yt, _ = bench_cpu.load(args.dataset)
    print(f"permutation_spread: {args.dataset}, {args.trees} trees, permutations 0..{args.permutations - 1}; "
          f"gpuboost from {Path(gpuboost.__file__).parent}")
    results = {}
    for device in args.device:
        runs = []
        for seed in range(args.permutations):
            order = permutation(len(y), seed)
            started = time.perf_counter()
            model = BoostClassifier(n_estimators=args.trees, device=device).fit(X[order], y[order])
            fit_s = time.perf_counter() - started
            if args.save:
                Path(args.save).mkdir(parents=True, exist_ok=True)
                model.save_model(Path(args.save) / f"{device}-permutation-{seed}.json")
            curve = [(t + 1, int(np.count_nonzero(p != yt))) for t, p in enumerate(model.staged_predict(Xt))
                     if (t + 1) % args.every == 0 or t + 1 == args.trees]
            runs.append(dict(permutation=seed, errors=curve[-1][1], train_loss=float(model.train_loss_[-1]),
                             curve=curve, fit_s=fit_s))
            print(f"  {device} permutation {seed}: {curve[-1][1]} test errors, training loss "
                  f"{model.train_loss_[-1]:.6g}, errors vs trees " + " ".join(f"{t}:{e}" for t, e in curve),
                  flush=True)
        errors = [r["errors"] for r in runs]
        results[device] = dict(runs=runs, errors=errors, median=statistics.median(errors))
        print(f"{device}: test errors {errors} (min {min(errors)}, median {statistics.median(errors)}, "
              f"max {max(errors)})", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(dataset=args.dataset, trees=args.trees, results=results), indent=1))


if __name__ == "__main__":
    main()
