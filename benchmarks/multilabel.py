"""Multi-label learning on yeast (14 labels): gpuboost against two scikit-learn baselines.

The protocol of the multi-label issue: the gpuboost variant (the algorithm -- AdaBoost.MH, or
multi-label AOSO / MART with paper 004's targets --, max_leaves, learning rate and number of
iterations) is chosen on a validation split, the last 20% of the training rows, by average
precision; it is then refit on all training rows and scored on the test rows once. The test
scores of every algorithm's own best variant are printed too, marked as chosen on the
validation rows per algorithm. Baselines on the same split: one-vs-rest
``HistGradientBoostingClassifier(max_iter=200, max_leaf_nodes=20, learning_rate=0.1)`` and
``KNeighborsClassifier(n_neighbors=10)``. Metrics (``gpuboost.metrics``): one-error, coverage
(from 0), average precision (= scikit-learn's label_ranking_average_precision_score), and the
Hamming loss of the predicted label sets (gpuboost: positive scores, at least the top label;
baselines: probability > 0.5).

Usage: ``python benchmarks/multilabel.py [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_cpu import data_dir  # noqa: E402

from gpuboost import BoostClassifier, metrics  # noqa: E402

ITERATIONS = (50, 100, 200, 400, 800)
#: (algorithm, max_leaves, learning rate) tried on the validation rows
VARIANTS = ([("adaboostmh", leaves, rate) for leaves in (4, 8, 20) for rate in (1.0, 0.3)]
            + [(algorithm, leaves, 0.1) for algorithm in ("aoso", "mart") for leaves in (8, 20)])


def scores_of(name, model, X):
    if name == "knn":  # a list of (n, 2) arrays, one per label
        return np.stack([p[:, 1] for p in model.predict_proba(X)], axis=1)
    return model.predict_proba(X)


def report(Y, scores, predicted):
    return dict(one_error=metrics.one_error(Y, scores), coverage=metrics.coverage(Y, scores),
                average_precision=metrics.average_precision(Y, scores),
                hamming_loss=metrics.hamming_loss(Y, predicted))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--algorithms", nargs="+", default=["adaboostmh", "aoso", "mart"],
                        help="the gpuboost algorithms searched (default: all three)")
    parser.add_argument("--max-iterations", type=int, default=max(ITERATIONS))
    args = parser.parse_args(argv)
    iterations = [t for t in ITERATIONS if t <= args.max_iterations]
    with np.load(data_dir() / "yeast.npz", allow_pickle=False) as d:
        X, Y, Xt, Yt = (d["X_train"].astype(np.float64), d["Y_train"].astype(int), d["X_test"].astype(np.float64),
                        d["Y_test"].astype(int))
    cut = int(0.8 * len(X))
    Xa, Ya, Xv, Yv = X[:cut], Y[:cut], X[cut:], Y[cut:]
    # choose the settings on the validation rows (for each algorithm, and overall)
    best: dict = {}
    started = time.perf_counter()
    for algorithm, leaves, rate in VARIANTS:
        if algorithm not in args.algorithms:
            continue
        model = BoostClassifier(algorithm=algorithm, n_estimators=max(iterations), max_leaves=leaves,
                                learning_rate=rate, tol=0.0, device="cpu").fit(Xa, Ya)
        print(f"  {algorithm} max_leaves={leaves} learning_rate={rate}: fitted", flush=True)
        for t, F in enumerate(model._staged_scores(Xv), start=1):
            if t in iterations:
                ap = metrics.average_precision(Yv, F)
                if algorithm not in best or ap > best[algorithm][0]:
                    best[algorithm] = (ap, leaves, rate, t)
    overall = max(best, key=lambda a: best[a][0])
    print(f"validation search: {time.perf_counter() - started:.0f} s")
    results = {}
    for algorithm, (ap, leaves, rate, t) in best.items():
        chosen = " (chosen overall)" if algorithm == overall else ""
        print(f"{algorithm}: max_leaves={leaves}, learning_rate={rate}, n_estimators={t}, validation average "
              f"precision {ap:.4f}{chosen}")
        model = BoostClassifier(algorithm=algorithm, n_estimators=t, max_leaves=leaves, learning_rate=rate,
                                tol=0.0, device="cpu").fit(X, Y)
        label = f"gpuboost {algorithm}" + (" (chosen)" if chosen else "")
        results[label] = report(Yt, model.decision_function(Xt), model.predict(Xt))
        results[label]["settings"] = dict(max_leaves=leaves, learning_rate=rate, n_estimators=t,
                                          validation_average_precision=ap)
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.neighbors import KNeighborsClassifier

    hgb = OneVsRestClassifier(HistGradientBoostingClassifier(max_iter=200, max_leaf_nodes=20,
                                                             learning_rate=0.1)).fit(X, Y)
    s = scores_of("hgb", hgb, Xt)
    results["scikit-learn one-vs-rest HGB"] = report(Yt, s, (s > 0.5).astype(int))
    knn = KNeighborsClassifier(n_neighbors=10).fit(X, Y)
    s = scores_of("knn", knn, Xt)
    results["scikit-learn kNN (k=10)"] = report(Yt, s, (s > 0.5).astype(int))
    print(f"\nyeast: {len(X)} training rows, {len(Xt)} test rows, {Y.shape[1]} labels")
    print(f"{'':34s}{'one-error':>10s}{'coverage':>10s}{'avg prec':>10s}{'Hamming':>10s}")
    for name, r in results.items():
        print(f"{name:34s}{r['one_error']:10.4f}{r['coverage']:10.4f}{r['average_precision']:10.4f}"
              f"{r['hamming_loss']:10.4f}")
    if args.json:
        args.json.write_text(json.dumps(dict(chosen=overall, test=results)))


if __name__ == "__main__":
    main()
