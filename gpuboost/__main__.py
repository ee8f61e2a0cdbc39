"""``python -m gpuboost``: the command line.

``demo`` trains AOSO-LogitBoost on generated poker hands (no download) and evaluates it.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _demo(args) -> int:
    from . import BoostClassifier
    from .datasets import POKER_HAND_NAMES, make_poker_hands

    X_train, y_train = make_poker_hands(args.n_train, random_state=args.seed)
    X_test, y_test = make_poker_hands(args.n_test, random_state=args.seed + 1)
    print(f"poker hands: {args.n_train} training rows, {args.n_test} test rows, 10 features, "
          f"{len(np.unique(y_train))} classes present in training")
    model = BoostClassifier(
        n_estimators=args.n_estimators, max_leaves=args.max_leaves, learning_rate=args.learning_rate,
        device=args.device, verbose=args.verbose,
    )
    started = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - started
    predicted = model.predict(X_test)
    accuracy = float(np.mean(predicted == y_test))
    majority = float(np.mean(y_test == np.bincount(y_train).argmax()))
    print(f"trained {model.n_trees_} AOSO trees in {seconds:.1f} s "
          f"({1000 * seconds / model.n_trees_:.1f} ms per tree), final training loss "
          f"{model.train_loss_[-1]:.4g}")
    print(f"test accuracy {accuracy:.4f} ({int(np.sum(predicted != y_test))} errors of {len(y_test)}); "
          f"always predicting the majority class: {majority:.4f}")
    print("per hand rank (test rows: correct / total):")
    for label in np.unique(y_test):
        mask = y_test == label
        print(f"  {label} {POKER_HAND_NAMES[label]:<16} {int(np.sum(predicted[mask] == label)):>6} / {int(mask.sum())}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="gpuboost", description="Multi-class boosting (AOSO-LogitBoost).")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="train and evaluate on generated poker hands (no download)")
    demo.add_argument("--n-train", type=int, default=25010, help="training hands (default: 25010)")
    demo.add_argument("--n-test", type=int, default=50000, help="test hands (default: 50000)")
    demo.add_argument("--n-estimators", type=int, default=300, help="boosting iterations (default: 300)")
    demo.add_argument("--max-leaves", type=int, default=20, help="leaves per tree, J (default: 20)")
    demo.add_argument("--learning-rate", type=float, default=0.1, help="shrinkage (default: 0.1)")
    demo.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    demo.add_argument("--seed", type=int, default=0, help="seed of the generated data (default: 0)")
    demo.add_argument("--verbose", type=int, default=50, help="print the loss every N iterations")
    args = parser.parse_args(argv)
    try:
        return _demo(args)
    except (ValueError, RuntimeError) as exc:
        print(f"gpuboost: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
