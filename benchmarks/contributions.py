"""Feature contributions (SHAP values) per row: gpuboost's ``predict_contributions`` against
XGBoost's ``pred_contribs`` and LightGBM's ``pred_contrib``, each model fitted once at
bench_cpu.py's matched settings and equal numbers of trees.

TreeSHAP costs each tree about its leaves times its depth squared per row, so the figures
depend on the trees each library grows as much as on its code: the script prints each model's
mean tree depth (deepest leaf) beside its time. The times are medians of ``--repeat`` calls on
the first ``--rows`` test rows; each library's contributions are checked to add up to its own
raw scores.

    python benchmarks/contributions.py pendigits letter --threads 2
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

LIBRARIES = ("gpuboost", "xgboost", "lightgbm")


def _depth(node) -> int:
    children = node.get("children", [])
    return 1 + max(_depth(c) for c in children) if children else 0


def _lightgbm_depth(node) -> int:
    if "left_child" not in node:
        return 0
    return 1 + max(_lightgbm_depth(node["left_child"]), _lightgbm_depth(node["right_child"]))


def contributions_and_depth(lib, model, X):
    """(a function of X giving (n, K, n_features + 1) contributions and (n, K) raw scores, the
    model's mean tree depth, its number of trees)."""
    K = len(model.classes_)
    if lib == "gpuboost":
        from gpuboost.contributions import _depth as tree_depth

        depth = float(np.mean([tree_depth(tree) for tree in model.trees_]))
        return (lambda X: (model.predict_contributions(X), model._scores(X))), depth, len(model.trees_)
    if lib == "xgboost":
        import xgboost as xgb

        booster = model.get_booster()
        dumps = booster.get_dump(dump_format="json")
        depth = float(np.mean([_depth(json.loads(t)) for t in dumps]))

        def run(X):
            data = xgb.DMatrix(X)
            return booster.predict(data, pred_contribs=True), booster.predict(data, output_margin=True)

        return run, depth, len(dumps)
    trees = model.booster_.dump_model()["tree_info"]
    depth = float(np.mean([_lightgbm_depth(t["tree_structure"]) for t in trees]))

    def run(X):
        phi = np.asarray(model.predict(X, pred_contrib=True)).reshape(len(X), K, -1)
        return phi, model.predict(X, raw_score=True)

    return run, depth, len(trees)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("datasets", nargs="+", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trees", type=int, default=1000,
                        help="trees of every model (the K-tree libraries: ceil(trees / K) iterations)")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits

    print(f"contributions: {args.threads} threads, {args.trees} trees each, median of {args.repeat} calls on "
          f"{args.rows} test rows; machine: {bench_cpu.machine()['cpu']}")
    for name in args.datasets:
        Xtr, ytr, Xte, yte, _ = bench_cpu.load(name)
        K = int(len(np.unique(ytr)))
        X = Xte[:args.rows]
        print(f"\n{name}: {args.trees} trees ({-(-args.trees // K)} iterations x {K} for the K-tree libraries)")
        print(f"  {'library':18s} {'trees':>6s} {'mean depth':>10s} {'s a call':>9s} {'us per row and tree':>20s} "
              f"{'sum - score':>12s}")
        with threadpool_limits(limits=args.threads):
            for lib in LIBRARIES:
                model = bench_cpu.MODELS[lib](args.trees, args.threads, K).fit(Xtr, ytr)
                run, depth, n_trees = contributions_and_depth(lib, model, X)
                phi, scores = run(X[:10])
                times = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    phi, scores = run(X)
                    times.append(time.perf_counter() - t0)
                gap = float(np.abs(phi.sum(axis=-1) - scores).max())
                seconds = statistics.median(times)
                print(f"  {bench_cpu.LABELS[lib]:18s} {n_trees:6d} {depth:10.2f} {seconds:9.3f} "
                      f"{seconds / (len(X) * n_trees) * 1e6:20.3f} {gap:12.2e}", flush=True)


if __name__ == "__main__":
    main()
