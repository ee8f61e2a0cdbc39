"""AdaBoost.MH (Hamming trees) against AOSO-LogitBoost at equal numbers of trees.

Both grow one 20-leaf tree per iteration. Test errors after every tree come from the eval set
scored inside the boosting loop; the table prints them at a few tree counts and the ratio at
the last. AdaBoost.MH runs with the learning rates given (paper 002 uses none, i.e. 1);
AOSO with 0.1, the papers' setting. Training continues to the last tree (tol = 0).

Usage: ``python benchmarks/adaboostmh.py pendigits letter --trees 2000 --json out.json``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_cpu import load  # noqa: E402

from gpuboost import BoostClassifier  # noqa: E402


def run(X, y, Xt, yt, algorithm, trees, learning_rate):
    model = BoostClassifier(algorithm=algorithm, n_estimators=trees, max_leaves=20, learning_rate=learning_rate,
                            tol=0.0, device="cpu")
    started = time.perf_counter()
    model.fit(X, y, eval_set=[(Xt, yt)])
    fit = time.perf_counter() - started
    return dict(algorithm=algorithm, learning_rate=learning_rate, fit_s=fit, errors=model.eval_error_[0].tolist())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--trees", type=int, default=2000)
    parser.add_argument("--rates", type=float, nargs="+", default=[1.0, 0.5])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report = {}
    checkpoints = [t for t in (100, 250, 500, 1000, 1500, 2000, 4000) if t <= args.trees] + [args.trees]
    checkpoints = sorted(set(checkpoints))
    for name in args.datasets:
        X, y, Xt, yt, split = load(name)
        runs = [run(X, y, Xt, yt, "aoso", args.trees, 0.1)]
        runs += [run(X, y, Xt, yt, "adaboostmh", args.trees, lr) for lr in args.rates]
        report[name] = dict(split=split, n_test=len(yt), runs=runs)
        print(f"\n{name} ({len(yt)} test rows): test errors at equal numbers of trees (20 leaves)")
        print(f"{'trees':<24s}" + "".join(f"{t:>8d}" for t in checkpoints) + "   fit s   ratio to AOSO at the last")
        base = runs[0]["errors"][args.trees - 1]
        for r in runs:
            label = f"{r['algorithm']} lr={r['learning_rate']:g}"
            errs = "".join(f"{r['errors'][t - 1]:>8d}" for t in checkpoints)
            print(f"{label:<24s}" + errs + f"  {r['fit_s']:6.0f}   {r['errors'][args.trees - 1] / base:.2f}")
    if args.json:
        args.json.write_text(json.dumps(report))


if __name__ == "__main__":
    main()
