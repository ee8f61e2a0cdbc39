"""The algorithms beside AOSO on the CPU: the compiled backend against the NumPy reference.

``device="cpu"`` trains K-LogitBoost, AdaBoost.MH and multi-label models with
``CpuVectorBackend`` (the NumPy reference with its costly stages compiled) and AOSO with the
whole-tree kernel; ``GPUBOOST_CPU_BACKEND=numpy`` selects the reference for both. This script
fits each case with both, alternated (``--repeat`` times each, in one process, after one
untimed warm-up fit per case), and prints the median fit time per iteration, the speed-up,
and whether the two models are the same (their decision functions on the training rows,
bit for bit, and their training losses).

Cases: AdaBoost.MH (Hamming trees) and K-LogitBoost on pendigits and letter; multi-label AOSO
and MART on generated data (20000 rows, 20 features, 6 labels), multi-label AOSO, AdaBoost.MH
and K-LogitBoost on yeast (14 labels); AOSO on pendigits for scale. All with 20 leaves, learning rate 0.1 and ``--threads`` threads.

Usage: ``python benchmarks/bench_family.py [--threads 2] [--repeat 2] [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_cpu import data_dir, load, machine, versions  # noqa: E402

from gpuboost import BoostClassifier  # noqa: E402
from gpuboost.backends import REFERENCE_ENV  # noqa: E402

#: (name, algorithm, data, iterations): few iterations, since the reference is slow
CASES = [
    ("AdaBoost.MH", "adaboostmh", "pendigits", 60),
    ("AdaBoost.MH", "adaboostmh", "letter", 30),
    ("K-LogitBoost", "klogitboost", "pendigits", 30),
    ("K-LogitBoost", "klogitboost", "letter", 15),
    ("multi-label AOSO", "aoso", "generated", 30),
    ("multi-label MART", "mart", "generated", 5),
    ("multi-label AOSO", "aoso", "yeast", 60),
    ("multi-label AdaBoost.MH", "adaboostmh", "yeast", 60),
    ("multi-label K-LogitBoost", "klogitboost", "yeast", 60),
    ("AOSO", "aoso", "pendigits", 100),
]


def generated_multilabel():
    """20000 rows, 20 features, 6 labels, every row with at least one (as in the tests)."""
    rng = np.random.default_rng(0)
    n, d, L = 20000, 20, 6
    X = rng.normal(size=(n, d))
    Y = (X[:, :L] + 0.5 * X[:, L:2 * L] + rng.normal(size=(n, L)) > 0.3).astype(int)
    Y[~Y.any(axis=1), 0] = 1
    return X, Y


def data(name):
    if name == "generated":
        return generated_multilabel()
    if name == "yeast":
        with np.load(data_dir() / "yeast.npz", allow_pickle=False) as d:
            return d["X_train"].astype(np.float64), d["Y_train"].astype(int)
    X, y, _, _, _ = load(name)
    return X, y


def fit(algorithm, X, y, iterations, threads, backend):
    os.environ[REFERENCE_ENV] = backend
    model = BoostClassifier(algorithm=algorithm, n_estimators=iterations, max_leaves=20, learning_rate=0.1,
                            tol=0.0, n_jobs=threads, device="cpu")
    started = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - started, model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    before = os.environ.get(REFERENCE_ENV)
    report = {"machine": machine(), "versions": versions(()), "threads": args.threads, "repeat": args.repeat,
              "cases": []}
    print(json.dumps(report["machine"]), json.dumps(report["versions"]), f"threads={args.threads}", sep="\n")
    header = (f"{'case':<24} {'data':<10} {'iter.':>5} {'compiled ms/it':>15} {'reference ms/it':>16} "
              f"{'speed-up':>9}  same model")
    print(header)
    try:
        for name, algorithm, dataset, iterations in CASES:
            X, y = data(dataset)
            for backend in ("numba", "numpy"):  # warm-up: compilation, caches
                fit(algorithm, X[:300], y[:300], 2, args.threads, backend)
            times = {"numba": [], "numpy": []}
            models = {}
            for _ in range(args.repeat):
                for backend in ("numba", "numpy"):
                    seconds, models[backend] = fit(algorithm, X, y, iterations, args.threads, backend)
                    times[backend].append(seconds / iterations * 1e3)
            same = (np.array_equal(models["numba"].decision_function(X), models["numpy"].decision_function(X))
                    and np.array_equal(models["numba"].train_loss_, models["numpy"].train_loss_))
            compiled, reference = float(np.median(times["numba"])), float(np.median(times["numpy"]))
            print(f"{name:<24} {dataset:<10} {iterations:>5} {compiled:>15.2f} {reference:>16.2f} "
                  f"{reference / compiled:>8.2f}x  {'yes' if same else 'NO'}", flush=True)
            report["cases"].append(dict(case=name, algorithm=algorithm, data=dataset, rows=int(X.shape[0]),
                                        iterations=iterations, compiled_ms=times["numba"],
                                        reference_ms=times["numpy"], same_model=bool(same)))
    finally:
        if before is None:
            os.environ.pop(REFERENCE_ENV, None)
        else:
            os.environ[REFERENCE_ENV] = before
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
