"""Prediction and eval-set scoring of two versions of gpuboost, with the machine's other CPUs idle
and with a busy process beside them: an A/B test for how the compiled walk of the trees uses
threads.

A parallel region ends when every thread has done its share; where another process holds a
CPU, the thread waiting for it can wait a scheduler's time slice (milliseconds), whatever its
share. A serving process that predicts a few rows at a time, or a fit that scores its eval set
after every tree, pays that wait at every region. A is the package at a git revision (imported
as ab_fit.py does), B the working copy; each measurement alternates them, and prints the median
milliseconds of each and their ratio B/A:

- ``predict_proba`` of 1 and 10 test rows, and of all of them, with a model of ``--trees`` trees;
- ``staged_predict_proba`` over 1000 test rows: milliseconds a stage;
- a fit of ``--fit-trees`` trees with the test rows as its eval set, and without: milliseconds
  an iteration, and the eval set's share.

The busy neighbour is ``--busy`` processes that spin in Python (one by default: on a 2-core
machine, one CPU left to gpuboost's two threads).

    python benchmarks/busy_neighbour.py letter --base HEAD~1 --threads 2

A development tool, like ab_fit.py.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def median_ms(call, budget_s=1.5, at_most=200):
    """The median of repeated calls, as many as fit in about budget_s (5 at least), in ms."""
    call()
    times = []
    began = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - began < budget_s and len(times) < at_most):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return 1000.0 * statistics.median(times)


def spinners(count):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def main() -> None:
    from threadpoolctl import threadpool_limits

    import bench_cpu
    import gpuboost
    from ab_fit import exported_package

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--base", default="HEAD", help="A: the package at this git revision (B: the working copy)")
    parser.add_argument("--trees", type=int, default=1000, help="trees of the predicting model")
    parser.add_argument("--fit-trees", type=int, default=200, help="trees of the fits with and without an eval set")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--busy", type=int, default=1, help="spinning processes beside the busy measurements")
    args = parser.parse_args()

    base, commit = exported_package(args.base)
    versions = {"A": base, "B": gpuboost}
    Xtr, ytr, Xte, yte, _ = bench_cpu.load(args.dataset)
    print(f"busy_neighbour: {args.dataset}, A = {commit[:12]}, B = the working copy; {args.threads} threads; "
          f"machine: {bench_cpu.machine()['cpu']}")
    settings = dict(max_leaves=20, learning_rate=0.1, n_jobs=args.threads)
    model = gpuboost.BoostClassifier(n_estimators=args.trees, **settings).fit(Xtr, ytr)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.json"
        model.save_model(path)
        models = {key: package.BoostClassifier().load_model(path) for key, package in versions.items()}
    for key in models:
        models[key].set_params(n_jobs=args.threads)
    P = {key: m.predict_proba(Xte) for key, m in models.items()}
    assert (P["A"] == P["B"]).all(), "A and B predict differently"
    rows = Xte[:1000]

    def fit_ms(key, eval_set):
        est = versions[key].BoostClassifier(n_estimators=args.fit_trees, **settings)
        t0 = time.perf_counter()
        est.fit(Xtr, ytr, eval_set=[(Xte, yte)] if eval_set else None)
        return 1000.0 * (time.perf_counter() - t0) / args.fit_trees

    measures = {
        "predict_proba, 1 row": lambda key: median_ms(lambda: models[key].predict_proba(Xte[:1])),
        "predict_proba, 10 rows": lambda key: median_ms(lambda: models[key].predict_proba(Xte[:10])),
        f"predict_proba, {len(Xte)} rows": lambda key: median_ms(lambda: models[key].predict_proba(Xte)),
        "staged_predict_proba, 1000 rows, a stage": lambda key: median_ms(
            lambda: sum(1 for _ in models[key].staged_predict_proba(rows)), budget_s=3.0, at_most=5) / args.trees,
        f"fit, {args.fit_trees} trees, with eval set, an iteration": lambda key: fit_ms(key, True),
        f"fit, {args.fit_trees} trees, no eval set, an iteration": lambda key: fit_ms(key, False),
    }
    with threadpool_limits(limits=args.threads):
        for neighbour in ("idle", "busy"):
            procs = spinners(args.busy) if neighbour == "busy" else []
            try:
                time.sleep(0.5 if procs else 0.0)
                print(f"\n{neighbour} neighbour ({len(procs)} spinning processes)")
                print(f"  {'measure (ms)':52s} {'A':>9s} {'B':>9s} {'B/A':>7s}")
                for name, measure in measures.items():
                    got = {"A": [], "B": []}
                    for order in (("A", "B"), ("B", "A"), ("A", "B")):
                        for key in order:
                            got[key].append(measure(key))
                    a, b = statistics.median(got["A"]), statistics.median(got["B"])
                    print(f"  {name:52s} {a:9.3f} {b:9.3f} {b / a:7.3f}", flush=True)
            finally:
                for proc in procs:
                    proc.kill()
                    proc.wait()


if __name__ == "__main__":
    main()
