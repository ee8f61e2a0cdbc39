"""K-LogitBoost against AOSO-LogitBoost in the paper's fair units (paper 000, section 6.3).

A K-LogitBoost iteration updates all K coordinates of F, an AOSO tree two; the paper therefore
compares t K-LogitBoost iterations with t * K / 2 AOSO trees. Printed for t = 100, 200, 400 on
optdigits (J = 20, learning rate 0.1): test errors and ||p - r||^2 on the test set (the mean
over rows of sum_k (p_k - r_k)^2).

    python benchmarks/klogit_vs_aoso.py [--dataset optdigits] [--t 100 200 400]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reproduce import load  # noqa: E402

from gpuboost import BoostClassifier  # noqa: E402


def curve(model, X, y, at):
    """{iterations: (test errors, ||p - r||^2)} at the given iteration counts."""
    onehot = np.eye(len(model.classes_))[np.searchsorted(model.classes_, y)]
    out = {}
    for i, proba in enumerate(model.staged_predict_proba(X), start=1):
        if i in at or i == model.n_estimators_:
            errors = int(np.sum(model.classes_[np.argmax(proba, axis=1)] != y))
            out[i] = (errors, float(np.mean(np.sum((proba - onehot) ** 2, axis=1))))
    for i in at:  # past convergence (training loss <= tol) the model stays the final one
        if i > model.n_estimators_:
            out[i] = out[model.n_estimators_]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="optdigits")
    parser.add_argument("--t", type=int, nargs="+", default=[100, 200, 400])
    args = parser.parse_args(argv)
    X_train, y_train, X_test, y_test = load(args.dataset)
    K = len(np.unique(y_train))
    aoso_at = {t * K // 2 for t in args.t}
    started = time.perf_counter()
    klogit = BoostClassifier(algorithm="klogitboost", n_estimators=max(args.t)).fit(X_train, y_train)
    klogit_seconds = time.perf_counter() - started
    started = time.perf_counter()
    aoso = BoostClassifier(algorithm="aoso", n_estimators=max(aoso_at)).fit(X_train, y_train)
    aoso_seconds = time.perf_counter() - started
    k_curve, a_curve = curve(klogit, X_test, y_test, set(args.t)), curve(aoso, X_test, y_test, aoso_at)
    print(f"{args.dataset}: K = {K}, {len(y_test)} test rows; J = 20, learning rate 0.1; "
          f"K-LogitBoost {klogit_seconds:.1f} s, AOSO {aoso_seconds:.1f} s")
    print("   t   K-LogitBoost errors  ||p-r||^2   AOSO trees  AOSO errors  ||p-r||^2   slower?")
    for t in args.t:
        a_trees = t * K // 2
        if t not in k_curve or a_trees not in a_curve:
            print(f"{t:5d}  (training stopped early: loss reached tol)")
            continue
        ke, kd = k_curve[t]
        ae, ad = a_curve[a_trees]
        verdict = "yes" if (ke > ae and kd > ad) else "no"
        print(f"{t:5d}  {ke:19d}  {kd:9.5f}  {a_trees:11d}  {ae:11d}  {ad:9.5f}   {verdict}")


if __name__ == "__main__":
    main()
