"""Reproduce the papers' comparisons: a grid of algorithms x (J, learning rate) on a dataset.

Every algorithm gets the same budget of TREES (the papers compare at equal numbers of trees:
AOSO grows one per iteration, MART and robust LogitBoost K, ABC K-1) and trains until its
training loss reaches 1e-16 or the budget is spent. Printed, as in papers 000 and 001:

- test errors at the last iteration per algorithm, and trees to convergence;
- relative improvement R = (err_A - err_B) / err_A of each algorithm B over each A, with the
  one-sided p-value of the normal approximation to the difference of two binomial error rates;
- curves (training loss, test errors, ||p - r||^2 on the test set against trees) as PNG plots
  when matplotlib is installed.

    python benchmarks/reproduce.py pendigits --trees 2000
    python benchmarks/reproduce.py optdigits --algorithms aoso abcrobustlogit mart --search 0 --gap 0
    python benchmarks/reproduce.py letter2k --trees 20000 --algorithms aoso abcrobustlogit --search 0 --gap 0

Datasets: letter, pendigits, optdigits, covertype290k (from ../shared/data or $GPUBOOST_DATA),
letter2k / letter4k (the last 2000 / 4000 of letter's 20000 rows train, the rest test), and
digits (scikit-learn's, 70/30 stratified split, random_state 0).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gpuboost import ALGORITHMS, BoostClassifier  # noqa: E402
from gpuboost.algorithms import trees_per_iteration  # noqa: E402


def data_dir() -> Path:
    return Path(os.environ.get("GPUBOOST_DATA", REPO.parent / "shared" / "data"))


def load(name: str):
    """(X_train, y_train, X_test, y_test) of a dataset name (see the module docstring)."""
    if name == "digits":
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        X, y = load_digits(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
        return X_train, y_train, X_test, y_test
    if name in ("letter2k", "letter4k"):
        X_train, y_train, X_test, y_test = load("letter")
        X, y = np.vstack([X_train, X_test]), np.concatenate([y_train, y_test])
        n = 2000 if name == "letter2k" else 4000
        return X[-n:], y[-n:], X[:-n], y[:-n]
    if name == "covertype290k":
        with np.load(data_dir() / "covtype.npz") as d:
            X, y, index = d["X"].astype(np.float64), d["y"].astype(np.int64), d["train_index"]
        train = np.zeros(len(y), bool)
        train[index] = True
        return X[train], y[train], X[~train], y[~train]
    path = data_dir() / f"{name}.npz"
    if not path.exists():
        raise SystemExit(f"{name}: no dataset of that name ({path} is not there; set GPUBOOST_DATA to the folder "
                         "of the datasets' .npz files)")
    with np.load(path) as d:
        return (d["X_train"].astype(np.float64), d["y_train"].astype(np.int64),
                d["X_test"].astype(np.float64), d["y_test"].astype(np.int64))


def p_value(errors_a: int, errors_b: int, n: int) -> float:
    """One-sided p-value that B's error rate is below A's (normal approximation)."""
    ea, eb = errors_a / n, errors_b / n
    sd = math.sqrt(ea * (1 - ea) / n + eb * (1 - eb) / n)
    if sd == 0:
        return 0.5 if ea == eb else (0.0 if eb < ea else 1.0)
    z = (ea - eb) / sd
    return 0.5 * math.erfc(z / math.sqrt(2))


def run(name, algorithm, trees, max_leaves, learning_rate, args, data):
    X_train, y_train, X_test, y_test = data
    K = len(np.unique(y_train))
    per = trees_per_iteration(algorithm, K)
    model = BoostClassifier(algorithm=algorithm, n_estimators=max(1, trees // per), max_leaves=max_leaves,
                            learning_rate=learning_rate, search=args.search, gap=args.gap,
                            min_samples_leaf=args.min_samples_leaf)
    started = time.perf_counter()
    model.fit(X_train, y_train, eval_set=[(X_test, y_test)])
    seconds = time.perf_counter() - started
    onehot = np.eye(K)[np.searchsorted(model.classes_, y_test)]
    every = max(1, model.n_estimators_ // 200)
    distance = [(i + 1, float(np.mean(np.sum((p - onehot) ** 2, axis=1))))
                for i, p in enumerate(model.staged_predict_proba(X_test)) if (i + 1) % every == 0]
    converged = model.train_loss_[-1] <= model.tol
    return {
        "dataset": name, "algorithm": algorithm, "max_leaves": max_leaves, "learning_rate": learning_rate,
        "trees_per_iteration": per, "iterations": model.n_estimators_, "trees": model.n_trees_,
        "trial_trees": model.n_trial_trees_, "test_errors": int(model.eval_error_[0][-1]),
        "best_test_errors": int(model.eval_error_[0].min()), "n_test": len(y_test),
        "converged": bool(converged), "trees_to_converge": model.n_trees_ if converged else None,
        "seconds": seconds, "train_loss": model.train_loss_.tolist(), "test_error_curve": model.eval_error_[0].tolist(),
        "p_minus_r": distance,
    }


def plot(results, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots")
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for r in results:
        label = f"{r['algorithm']} J={r['max_leaves']} v={r['learning_rate']}"
        trees = np.arange(1, r["iterations"] + 1) * r["trees_per_iteration"]
        axes[0].semilogy(trees, np.maximum(r["train_loss"], 1e-300), label=label)
        axes[1].plot(trees, r["test_error_curve"], label=label)
        its, d = zip(*r["p_minus_r"])
        axes[2].plot(np.array(its) * r["trees_per_iteration"], d, label=label)
    for ax, title in zip(axes, ["training loss", "test errors", "||p - r||^2 (test, mean per row)"]):
        ax.set_xlabel("trees")
        ax.set_title(title)
    axes[1].set_ylim(0, 2 * min(r["test_errors"] for r in results) + 10)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plots: {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument("--trees", type=int, default=2000, help="tree budget for every algorithm")
    parser.add_argument("--leaves", type=int, nargs="+", default=[20], help="J values")
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[0.1])
    parser.add_argument("--search", type=int, default=0, help="ABC base-class candidates (0: exhaustive)")
    parser.add_argument("--gap", type=int, default=0, help="ABC: search every gap+1 iterations")
    parser.add_argument("--min-samples-leaf", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results", help="folder for the JSON and PNG files")
    args = parser.parse_args(argv)

    data = load(args.dataset)
    K = len(np.unique(data[1]))
    print(f"{args.dataset}: {len(data[1])} training rows, {len(data[3])} test rows, K = {K}; "
          f"budget {args.trees} trees per algorithm; ABC search={args.search} gap={args.gap}; "
          f"min_samples_leaf={args.min_samples_leaf}")
    results = []
    for J in args.leaves:
        for v in args.learning_rates:
            for algorithm in args.algorithms:
                r = run(args.dataset, algorithm, args.trees, J, v, args, data)
                results.append(r)
                conv = f"converged at {r['trees_to_converge']} trees" if r["converged"] else "not converged"
                print(f"  J={J:3d} v={v:<5} {algorithm:<15} {r['test_errors']:6d} test errors "
                      f"(best {r['best_test_errors']}) after {r['trees']} trees, {conv}, "
                      f"{r['seconds']:.1f} s" + (f", {r['trial_trees']} trial trees" if r["trial_trees"] else ""))
    print("\nrelative improvement R = (err_A - err_B) / err_A and one-sided p-value (B better than A)")
    for J in args.leaves:
        for v in args.learning_rates:
            group = [r for r in results if r["max_leaves"] == J and r["learning_rate"] == v]
            for a in group:
                for b in group:
                    if a is b:
                        continue
                    R = (a["test_errors"] - b["test_errors"]) / max(a["test_errors"], 1)
                    p = p_value(a["test_errors"], b["test_errors"], a["n_test"])
                    print(f"  J={J} v={v}: A={a['algorithm']:<15} B={b['algorithm']:<15} R={R:+.3f}  p={p:.3g}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"reproduce-{args.dataset}-{args.trees}"
    Path(f"{stem}.json").write_text(json.dumps(results))
    print(f"figures: {stem}.json")
    plot(results, f"{stem}.png")


if __name__ == "__main__":
    main()
