"""The boosting loop of AOSO-LogitBoost (paper 000, Algorithm 1).

F starts at 0. Each iteration computes p from F, grows one vector tree, and adds
``learning_rate`` times each leaf's vector to the F of the rows in that leaf (taken from the
row partition, not by predicting the training set again). Training stops after
``n_estimators`` iterations, or as soon as the training loss falls to ``tol``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .backends.base import Backend
from .grower import GrowerParams, TreeGrower
from .losses import multiclass_loss
from .tree import Tree

__all__ = ["BoostResult", "EvalSet", "boost"]


@dataclass
class EvalSet:
    """Binned rows monitored during training: codes (n, n_features), labels 0..K-1 (n,)."""

    codes: np.ndarray
    y: np.ndarray
    weight: np.ndarray | None = None


@dataclass
class BoostResult:
    trees: list[Tree]
    train_loss: np.ndarray  # after each iteration, shape (n_iterations,)
    eval_loss: list[np.ndarray] = field(default_factory=list)  # per eval set
    eval_error: list[np.ndarray] = field(default_factory=list)  # misclassified rows
    initial_loss: float = 0.0
    fit_time: float = 0.0


def boost(
    backend: Backend,
    n_rows: int,
    n_classes: int,
    n_estimators: int,
    learning_rate: float,
    tol: float,
    grower_params: GrowerParams,
    bin_edge,
    missing_code: int,
    eval_sets: list[EvalSet] = (),
    verbose: int = 0,
    init_trees: list[Tree] = (),
    init_train_loss: np.ndarray = (),
    after_iteration=None,
) -> BoostResult:
    """Run the boosting loop on a backend that holds the training data.

    ``n_estimators`` counts every iteration, those of ``init_trees`` (a model to continue,
    with its per-iteration training loss ``init_train_loss``) included. The scores of the
    training rows are rebuilt from ``init_trees`` by prediction, which reproduces them bit for
    bit, so a continued run builds exactly the trees of an uninterrupted one.
    ``after_iteration(trees, train_loss, eval_loss, eval_error)`` is called after each new tree
    with the history so far (lists); it returns True to stop training.

    Returns the trees and the per-iteration training loss (and loss and errors on each eval
    set, from scores updated tree by tree).
    """
    started = time.perf_counter()
    trees: list[Tree] = list(init_trees)
    train_loss: list[float] = [float(v) for v in init_train_loss]
    if len(train_loss) != len(trees):
        raise ValueError("init_train_loss must hold one loss per initial tree")
    eval_F = [np.zeros((len(e.y), n_classes)) for e in eval_sets]
    eval_loss: list[list[float]] = [[] for _ in eval_sets]
    eval_error: list[list[int]] = [[] for _ in eval_sets]

    def monitor(step: np.ndarray, tree: Tree) -> None:
        for k, e in enumerate(eval_sets):
            eval_F[k] += step[backend.tree_leaves(tree, e.codes, missing_code)]
            eval_loss[k].append(multiclass_loss(eval_F[k], e.y, e.weight))
            eval_error[k].append(int(np.count_nonzero(np.argmax(eval_F[k], axis=1) != e.y)))

    F = np.zeros((n_rows, n_classes))
    initial_loss = backend.set_scores(F)
    if trees:
        codes = backend.training_codes()
        for tree in trees:
            step = learning_rate * tree.node_vectors(n_classes)
            F += step[backend.tree_leaves(tree, codes, backend.missing_code)]
            monitor(step, tree)
    loss = backend.set_scores(F) if trees else initial_loss
    grower = TreeGrower(backend, grower_params, bin_edge, n_rows)
    for iteration in range(len(trees), n_estimators):
        if loss <= tol:
            break
        if hasattr(backend, "grow_tree"):  # a compiled backend grows the whole tree in one call
            tree, leaf_segments, leaf_ids = backend.grow_tree(grower_params, bin_edge)
        else:
            tree, leaf_segments, leaf_ids = grower.grow()
        step = learning_rate * tree.node_vectors(n_classes)
        backend.update_scores(F, leaf_segments, step[leaf_ids])
        trees.append(tree)
        loss = backend.set_scores(F)  # the next tree's probabilities, and this loss
        train_loss.append(loss)
        monitor(step, tree)
        if verbose and ((iteration + 1) % max(1, int(verbose)) == 0 or loss <= tol):
            line = f"[{iteration + 1:5d}] train loss {loss:.6g}  leaves {tree.n_leaves}"
            for k in range(len(eval_sets)):
                line += f"  eval{k} loss {eval_loss[k][-1]:.6g} errors {eval_error[k][-1]}"
            line += f"  {time.perf_counter() - started:.1f}s"
            print(line, flush=True)
        if after_iteration is not None and after_iteration(trees, train_loss, eval_loss, eval_error):
            break
    return BoostResult(
        trees=trees,
        train_loss=np.asarray(train_loss, dtype=np.float64),
        eval_loss=[np.asarray(v, dtype=np.float64) for v in eval_loss],
        eval_error=[np.asarray(v, dtype=np.int64) for v in eval_error],
        initial_loss=initial_loss,
        fit_time=time.perf_counter() - started,
    )
