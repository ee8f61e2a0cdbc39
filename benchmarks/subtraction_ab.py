"""Histogram subtraction on and off, whole fits in one process (an A/B of one feature).

A split's larger child takes its histogram as its parent's minus its sibling's where it keeps
its parent's pair (``backends.base.derived_histogram``). ``Backend.derives_histograms`` turns
that off for every CPU backend; this script fits the same model both ways, alternated for
``--rounds`` rounds, and prints the median fit time a tree of each and the median of the
rounds' ratios (on / off), with both models' test errors (they differ only where rounding
decides a near-tie). A development tool, like profile_cpu.py; the timed comparison with other
libraries is bench_cpu.py.

    python benchmarks/subtraction_ab.py pendigits:aoso:1000 letter:adaboostmh:200 --rounds 3

With --curves, each case is fitted once each way with the test set as an eval set instead,
and the two test-error curves are compared tree for tree (no timing). With --grow-tree (AOSO
cases), the compiled backend's grow_tree alone is timed on and off from the same scores (the
tree after the case's iterations; 40 trees a round).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cpu import load  # noqa: E402

from gpuboost import BoostClassifier  # noqa: E402
from gpuboost.backends.base import Backend  # noqa: E402

DEFAULT = ["pendigits:aoso:1000", "letter:aoso:1000", "covertype290k:aoso:30", "pendigits:mart:30",
           "letter:mart:10", "pendigits:klogitboost:30", "letter:klogitboost:10", "pendigits:adaboostmh:300",
           "letter:adaboostmh:200"]


def _case(case: str, threads: int):
    """(dataset, algorithm, X, y, X_test, y_test, the estimator's parameters) of "dataset:algorithm:iterations"."""
    name, algorithm, iterations = case.split(":")
    X, y, Xt, yt = load(name)[:4]
    kw = dict(algorithm=algorithm, n_estimators=int(iterations), max_leaves=20, learning_rate=0.1, n_jobs=threads,
              device="cpu")
    return name, algorithm, X, y, Xt, yt, kw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", default=DEFAULT, help="dataset:algorithm:iterations")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--curves", action="store_true", help="compare the test-error curves, tree for tree")
    parser.add_argument("--grow-tree", action="store_true", help="time grow_tree alone (AOSO), on and off")
    args = parser.parse_args()
    if args.curves:
        curves(args)
        return
    if args.grow_tree:
        grow_tree(args)
        return
    print(f"subtraction_ab: {args.threads} threads, {args.rounds} rounds, on and off alternated")
    for case in args.cases:
        name, algorithm, X, y, Xt, yt, kw = _case(case, args.threads)
        BoostClassifier(**{**kw, "n_estimators": 2}).fit(X, y)  # compiled and cached before timing
        times = {True: [], False: []}
        errors = {}
        for _ in range(args.rounds):
            for on in (True, False):
                Backend.derives_histograms = on
                began = time.perf_counter()
                model = BoostClassifier(**kw).fit(X, y)
                times[on].append((time.perf_counter() - began) / len(model.trees_) * 1e3)
                errors[on] = int((model.predict(Xt) != yt).sum())
        Backend.derives_histograms = True
        ratio = statistics.median(a / b for a, b in zip(times[True], times[False]))
        print(f"{name} {algorithm} {len(model.trees_)} trees: on {statistics.median(times[True]):.3f} ms/tree, "
              f"off {statistics.median(times[False]):.3f}; ratio {ratio:.3f}; test errors on {errors[True]}, "
              f"off {errors[False]}", flush=True)


def grow_tree(args) -> None:
    from gpuboost.backends.cpu import CpuBackend
    from gpuboost.grower import GrowerParams

    print(f"subtraction_ab --grow-tree: {args.threads} threads, {args.rounds} rounds of 40 trees, on and off "
          "alternated")
    for case in args.cases:
        name, algorithm, X, y, Xt, yt, kw = _case(case, args.threads)
        if algorithm != "aoso":
            raise SystemExit(f"--grow-tree times AOSO's trees: {case}")
        captured = {}
        original = CpuBackend.grow_rounds  # (AOSO's fits grow their trees there, in the kernel's loop)

        def capture(self, F, params, bin_edge, *rest, **named):
            captured["backend"], captured["edge"] = self, bin_edge
            return original(self, F, params, bin_edge, *rest, **named)

        CpuBackend.grow_rounds = capture
        try:
            BoostClassifier(**kw).fit(X, y)
        finally:
            CpuBackend.grow_rounds = original
        backend, edge = captured["backend"], captured["edge"]
        params = GrowerParams(max_leaves=kw["max_leaves"])
        times = {True: [], False: []}
        for _ in range(args.rounds):
            for on in (True, False):
                backend.derives_histograms = on
                backend.grow_tree(params, edge)
                began = time.perf_counter()
                for _ in range(40):
                    backend.grow_tree(params, edge)
                times[on].append((time.perf_counter() - began) / 40 * 1e3)
        ratio = statistics.median(a / b for a, b in zip(times[True], times[False]))
        print(f"{name}: grow_tree on {statistics.median(times[True]):.3f} ms, off "
              f"{statistics.median(times[False]):.3f}; ratio {ratio:.3f}", flush=True)


def curves(args) -> None:
    print(f"subtraction_ab --curves: {args.threads} threads; test errors at every iteration, on and off")
    for case in args.cases:
        name, algorithm, X, y, Xt, yt, kw = _case(case, args.threads)
        errors = {}
        for on in (True, False):
            Backend.derives_histograms = on
            errors[on] = BoostClassifier(**kw).fit(X, y, eval_set=[(Xt, yt)]).eval_error_[0]
        Backend.derives_histograms = True
        same = sum(int(a == b) for a, b in zip(errors[True], errors[False]))
        marks = [k for k in (100, 500, 1000, 2000, 4000) if k <= len(errors[True])]
        at = ", ".join(f"{k}: {errors[True][k - 1]} / {errors[False][k - 1]}" for k in marks)
        print(f"{name} {algorithm} {len(errors[True])} iterations: equal test errors at {same} of "
              f"{len(errors[True])}; on / off at {at}; last {errors[True][-1]} / {errors[False][-1]}, "
              f"best {min(errors[True])} / {min(errors[False])}", flush=True)


if __name__ == "__main__":
    main()
