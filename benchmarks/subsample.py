"""subsample and colsample_bytree against the full sample: test errors and fit times.

Stochastic gradient boosting (Friedman 2002) grows each iteration's trees on a fraction of the
rows drawn anew each iteration; colsample_bytree lets each tree split on a fraction of the
features. This script fits ``BoostClassifier`` (AOSO by default, the benchmarks' settings: 20
leaves, learning rate 0.1) with each ``--subsample`` value (every feature), then each
``--colsample`` value (every row), on a dataset's standard split, and prints the test errors
after a quarter, half and all of the iterations, the fewest over the run, and the fit's
milliseconds per iteration. Subsampled fits are repeated with ``--seeds`` seeds (their spread
is part of the answer). One process, fits in turn; the machine's noise applies to the times
(compare them within a run). ``--device cuda`` fits on the GPU (after a warm-up fit of a few
trees, so that no setting's time holds the kernels' compilation).

    python benchmarks/subsample.py pendigits --iterations 1000 --subsample 1.0 0.7 0.5 \
        --colsample 0.5 --seeds 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cpu  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("datasets", nargs="+", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--algorithm", default="aoso")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--subsample", type=float, nargs="*", default=[1.0, 0.7, 0.5])
    parser.add_argument("--colsample", type=float, nargs="*", default=[], help="colsample_bytree values (< 1)")
    parser.add_argument("--seeds", type=int, default=2, help="seeds of each subsampled setting")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--json", help="write the figures to this JSON file")
    args = parser.parse_args()
    from gpuboost import BoostClassifier

    print(f"subsample and colsample_bytree: {args.algorithm}, 20 leaves, learning rate 0.1, {args.iterations} iterations, "
          f"{args.threads} threads, device {args.device}; machine: {bench_cpu.machine()['cpu']}")
    out = []
    for name in args.datasets:
        Xtr, ytr, Xte, yte, _ = bench_cpu.load(name)
        # the kernels compiled (the GPU's sampled tree's graph too) or loaded outside the timed fits
        BoostClassifier(algorithm=args.algorithm, n_estimators=3, subsample=0.5, device=args.device,
                        n_jobs=args.threads).fit(Xtr, ytr)
        marks = sorted({args.iterations // 4, args.iterations // 2, args.iterations})
        print(f"{name}: {len(ytr)} training rows, {len(yte)} test rows; test errors after "
              f"{', '.join(map(str, marks))} iterations, the fewest (at), fit ms per iteration")
        settings = [(ss, 1.0) for ss in args.subsample] + [(1.0, cs) for cs in args.colsample]
        for ss, cs in settings:
            for seed in range(1 if ss >= 1 and cs >= 1 else args.seeds):
                model = BoostClassifier(algorithm=args.algorithm, n_estimators=args.iterations, max_leaves=20,
                                        learning_rate=0.1, subsample=ss, colsample_bytree=cs, random_state=seed,
                                        device=args.device, n_jobs=args.threads)
                started = time.perf_counter()
                model.fit(Xtr, ytr)
                fit_s = time.perf_counter() - started
                errors = np.array([int(np.count_nonzero(p != yte)) for p in model.staged_predict(Xte)])
                best = int(errors.argmin())
                row = {"dataset": name, "subsample": ss, "colsample_bytree": cs, "seed": seed,
                       "errors_at": {m: int(errors[m - 1]) for m in marks}, "fewest": int(errors[best]),
                       "fewest_at": best + 1, "fit_ms_per_iteration": fit_s / len(model.train_loss_) * 1e3}
                out.append(row)
                print(f"  subsample {ss:<4} colsample {cs:<4} seed {seed}: "
                      + "  ".join(f"{errors[m - 1]:5d}" for m in marks)
                      + f"  fewest {row['fewest']} ({row['fewest_at']})  {row['fit_ms_per_iteration']:.2f} ms",
                      flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": bench_cpu.machine(), "args": vars(args), "runs": out},
                                              indent=1))


if __name__ == "__main__":
    main()
