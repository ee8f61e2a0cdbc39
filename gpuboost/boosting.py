"""The boosting loop (paper 000, Algorithm 1, and the K-tree family of papers 001 and 003).

F starts at 0. Each iteration computes p from F, grows the iteration's trees (one AOSO vector
tree, or the K / K-1 trees of the K-tree family: see ``algorithms``), and adds
``learning_rate`` times each leaf's vector to the F of the rows in that leaf (taken from the
row partition, not by predicting the training set again). Training stops after
``n_estimators`` iterations, or as soon as the training loss falls to ``tol``.

With ``subsample`` < 1 (stochastic gradient boosting, Friedman 2002), each iteration's trees
are grown on a sample of the rows drawn without replacement (the same rows for all of an
iteration's trees, ABC's candidates included); every row's F is then updated from the leaf the
tree puts it in (``Backend.spread_leaves``). With ``colsample_bytree`` < 1, each tree may split
on a sample of the features only, drawn anew for each tree.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from .algorithms import ABC, iteration_plan, trees_per_iteration
from .backends.base import Backend
from .grower import GrowerParams, TreeGrower
from .losses import multiclass_loss, predicted_class
from .tree import Tree

__all__ = ["BoostResult", "EvalSet", "boost", "check_subsample", "feature_sample", "row_sample"]


@dataclass
class EvalSet:
    """Binned rows monitored during training: codes (n, n_features), labels 0..K-1 (n,).

    ``evaluate(F) -> (loss, errors)`` replaces the multi-class measures (the multinomial log
    loss and the misclassified rows) where given: multi-label models bring their own.
    """

    codes: np.ndarray
    y: np.ndarray
    weight: np.ndarray | None = None
    evaluate: Callable[[np.ndarray], tuple[float, int]] | None = None

    def measures(self, F: np.ndarray) -> tuple[float, int]:
        if self.evaluate is not None:
            return self.evaluate(F)
        compiled = _compiled_measures(F, self.y, self.weight)
        if compiled is not None:
            return compiled
        return multiclass_loss(F, self.y, self.weight), int(np.count_nonzero(predicted_class(F) != self.y))


def _compiled_measures(F: np.ndarray, y: np.ndarray, weight: np.ndarray | None) -> tuple[float, int] | None:
    """EvalSet.measures in one compiled pass (kernels.eval_measures), the same values, where the
    compiled CPU backend runs and its exp and log1p are NumPy's (cpu.libm_matches_numpy: 100,000
    rows x 7 classes took 36 ms a measure in NumPy, a block of rows at a time); else None."""
    try:
        from .backends import cpu
    except ImportError:  # (numba missing: NumPy's)
        return None
    if (F.dtype != np.float64 or not F.flags.c_contiguous or F.ndim != 2 or y.shape != F.shape[:1]
            or not cpu.compiled_measures_usable()):
        return None
    per_sample = np.empty(F.shape[0])
    errors = cpu.kernels.eval_measures(F, np.ascontiguousarray(y, dtype=np.int64), per_sample)
    if errors < 0:  # (a score that is not finite: NumPy's rules)
        return None
    if weight is not None:
        per_sample = per_sample * weight
    return float(per_sample.sum()), int(errors)


@dataclass
class BoostResult:
    trees: list[Tree]
    train_loss: np.ndarray  # after each iteration, shape (n_iterations,)
    eval_loss: list[np.ndarray] = field(default_factory=list)  # per eval set
    eval_error: list[np.ndarray] = field(default_factory=list)  # misclassified rows (multi-label: entries)
    initial_loss: float = 0.0
    fit_time: float = 0.0
    trial_trees: int = 0  # trees grown for rejected ABC base-class candidates
    train_hamming: np.ndarray = None  # AdaBoost.MH: the weighted Hamming loss (eq 1) after each iteration


def _class_order(class_loss: np.ndarray, search: int) -> list[int]:
    """Base-class candidates: all classes (search 0), else the ``search`` worst, worst first."""
    K = class_loss.shape[0]
    if search == 0 or search >= K:
        return list(range(K))
    order = sorted(range(K), key=lambda k: (-class_loss[k], k))
    return order[:search]


#: uniforms drawn at a time by _sample (the same stream as one draw of n: 512 KiB, not 8 n bytes)
SAMPLE_CHUNK = 1 << 16


def sample_size(n: int, fraction: float) -> int:
    """The rows of a sample of fraction x n: rounded to the nearest (halves up), at least one."""
    return max(1, int(np.floor(fraction * n + 0.5)))


def _sample(n: int, fraction: float, entropy: list[int]) -> np.ndarray:
    """fraction x n of 0 .. n - 1, rounded to the nearest (halves up; at least one), every such
    subset as likely, in increasing order: selection sampling over n uniforms of a generator
    seeded with entropy (drawn SAMPLE_CHUNK at a time, until m rows are taken)."""
    from .backends._numba_cpu import selection_sample  # (numba: imported where a sample is drawn)

    m = sample_size(n, fraction)
    out = np.empty(m, dtype=np.int64)
    generator = np.random.default_rng([int(e) for e in entropy])
    u = np.empty(min(n, SAMPLE_CHUNK))
    taken, i0 = 0, 0
    while taken < m and i0 < n:
        k = min(len(u), n - i0)
        generator.random(out=u[:k])
        taken = selection_sample(u[:k], i0, n, m, taken, out)
        i0 += k
    assert taken == m
    return out


def check_subsample(algorithm: str, subsample: float) -> None:
    """Refuse a row sample where the algorithm needs every row (boost, and the estimator before
    it bins anything)."""
    if subsample < 1.0 and algorithm == "adaboostmh":
        raise ValueError("subsample < 1 is not for adaboostmh: its weights are a distribution over every row, and each "
                         "tree's alpha is computed from all of them; use subsample=1.0.")


def row_sample(n_rows: int, subsample: float, seed: int, iteration: int) -> np.ndarray | None:
    """The rows iteration ``iteration`` grows its trees on (_sample's, entropy (seed,
    iteration)), or None where subsample is 1 (every row). The draw depends on the iteration
    and the seed alone, so that a continued fit draws what an uninterrupted one would."""
    return None if subsample >= 1.0 else _sample(n_rows, subsample, [seed, iteration])


#: the most iterations whose rows _RowSamples draws ahead (one thread each)
MAX_DRAWS_AHEAD = 8


class _RowSamples:
    """``row_sample`` of each iteration. With ``ahead`` > 0 (a device backend), the rows of the
    next ``ahead`` iterations are drawn on as many threads while the device grows this
    iteration's trees: the same rows, since a draw depends on the seed and the iteration alone
    (the draws release the GIL). A draw can take longer than the device's tree (ten million
    rows: about 60 ms); several in flight keep up with the device."""

    def __init__(self, n_rows: int, subsample: float, seed: int, ahead: int = 0, stop: int | None = None):
        self.args = (n_rows, subsample, seed)
        self.stop = stop  # no draw for this iteration or later (None: no end)
        self.ahead = max(0, int(ahead)) if subsample < 1.0 else 0
        self.pool = None
        if self.ahead:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(self.ahead, thread_name_prefix="gpuboost-row-sample")
            # a fit that raises never calls close(): the queued draws are dropped when this goes
            weakref.finalize(self, self.pool.shutdown, wait=False, cancel_futures=True)
        self.pending: dict = {}  # iteration -> future of its draw

    def __call__(self, iteration: int) -> np.ndarray | None:
        if self.pool is None:
            return row_sample(*self.args, iteration)
        future = self.pending.pop(iteration, None)
        sample = future.result() if future is not None else row_sample(*self.args, iteration)
        for k in [k for k in self.pending if not iteration < k <= iteration + self.ahead]:
            self.pending.pop(k).cancel()  # (after a jump: draws no longer wanted)
        end = iteration + 1 + self.ahead if self.stop is None else min(self.stop, iteration + 1 + self.ahead)
        for k in range(iteration + 1, end):
            if k not in self.pending:
                self.pending[k] = self.pool.submit(row_sample, *self.args, k)
        return sample

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def feature_sample(n_features: int, colsample: float, seed: int, iteration: int, tree: int) -> np.ndarray | None:
    """The features the ``tree``-th tree of iteration ``iteration`` may split on, as a mask of
    n_features booleans (_sample's, entropy (seed, iteration, tree, 1)), or None where colsample
    is 1 (every feature)."""
    if colsample >= 1.0:
        return None
    mask = np.zeros(n_features, dtype=np.bool_)
    mask[_sample(n_features, colsample, [seed, iteration, tree, 1])] = True
    return mask


def lower_rate_advice(algorithm: str, learning_rate) -> str:
    """What to change where a fit diverged: the learning rate, and the leaf clip of the
    algorithms that clip their leaves (all but AdaBoost.MH)."""
    return f"Lower learning_rate (now {learning_rate})" + ("." if algorithm == "adaboostmh" else " or leaf_clip.")


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
    init_trees: list[Tree] = (),
    init_train_loss: np.ndarray = (),
    after_iteration=None,
    algorithm: str = "aoso",
    search: int = 2,
    gap: int = 5,
    subsample: float = 1.0,
    seed: int = 0,
    colsample_bytree: float = 1.0,
    columns: np.ndarray | None = None,
    training_codes: np.ndarray | None = None,
) -> BoostResult:
    """Run the boosting loop on a backend that holds the training data.

    ``n_estimators`` counts iterations (``algorithms.trees_per_iteration`` trees each), those of
    ``init_trees`` (a model to continue, with its per-iteration training loss
    ``init_train_loss``) included. The scores of the training rows are rebuilt from
    ``init_trees`` by prediction, which reproduces them bit for bit, so a continued run builds
    exactly the trees of an uninterrupted one (for ABC, the base class in use is the one of the
    last tree). ``after_iteration(trees, train_loss, eval_loss, eval_error)`` is called after
    each new iteration with the history so far (lists); it returns True to stop training.

    ``subsample`` < 1: each iteration's trees are grown on ``row_sample(n_rows, subsample,
    seed, iteration)``; ``colsample_bytree`` < 1: the t-th tree of an iteration splits on
    ``feature_sample(n_features, colsample_bytree, seed, iteration, t)`` only.

    ``columns``: where the backend holds only some of the data's columns (``columns[j]``: the
    data's column of the backend's column j; sklearn leaves out the columns that cannot split),
    with ``training_codes`` all of the training rows' columns. Trees are grown on the backend's
    columns and kept in the data's (their features mapped, their thresholds the data's); the
    feature samples of colsample_bytree are drawn over the data's columns, so the trees are
    those of a backend that holds every column.

    Returns the trees and the per-iteration training loss (and loss and errors on each eval
    set, from scores updated iteration by iteration).
    """
    started = time.perf_counter()
    per_iteration = trees_per_iteration(algorithm, n_classes)
    trees: list[Tree] = list(init_trees)
    train_loss: list[float] = [float(v) for v in init_train_loss]
    if len(trees) != per_iteration * len(train_loss):
        raise ValueError(f"init_trees must hold {per_iteration} trees per iteration of init_train_loss")
    eval_F = [np.zeros((len(e.y), n_classes)) for e in eval_sets]
    eval_loss: list[list[float]] = [[] for _ in eval_sets]
    eval_error: list[list[int]] = [[] for _ in eval_sets]
    trial_trees = 0
    hamming: list[float] = []

    # the fit's thread count for the predictions of the eval sets and of init_trees (the
    # compiled backend's threads; the caller's numba count is another process's share, say)
    threads = getattr(backend, "threads", contextlib.nullcontext)

    def monitor(iteration_trees: list[Tree]) -> None:
        for k, e in enumerate(eval_sets):
            with threads():
                backend.add_trees(eval_F[k], iteration_trees, e.codes, missing_code, learning_rate)
            loss, errors = e.measures(eval_F[k])
            eval_loss[k].append(loss)
            eval_error[k].append(errors)

    check_subsample(algorithm, subsample)
    if subsample < 1.0 and getattr(backend, "keeps_scores", False) and not getattr(backend, "fused_update", False):
        raise ValueError(f"subsample < 1 does not run on the {backend.name} backend (its scores live on the device "
                         "and it cannot add a tree to them); use device='cpu'.")
    n_features = backend.codes.shape[1] if columns is None else int(training_codes.shape[1])
    if columns is not None:
        columns = np.asarray(columns, dtype=np.int64)
        data_edge = bin_edge

        def bin_edge(features, bins):  # (the backend's column j is the data's columns[j])
            return data_edge(columns[features], bins)

    def in_data_columns(tree: Tree) -> Tree:
        """A tree grown on the backend's columns, with the data's."""
        if columns is None:
            return tree
        return replace(tree, feature=np.where(tree.feature >= 0, columns[np.maximum(tree.feature, 0)],
                                              tree.feature).astype(tree.feature.dtype))

    def grow_iteration(F: np.ndarray, plan: list[GrowerParams], iteration: int, score: bool = False, sample=None):
        """Grow the trees of one iteration from the current p (on the rows ``sample``, or all),
        adding each to F in place.

        Returns the trees and, with ``score``, the loss of the new F where the backend computed
        it with the update (and the next p with it: ``update_and_score``), else None.
        """
        grown = []
        loss = None
        on = {} if sample is None else {"sample": sample}
        for t, params in enumerate(plan):
            features = feature_sample(n_features, colsample_bytree, seed, iteration, t)
            if features is not None:
                params = replace(params, features=features if columns is None else features[columns])
            if getattr(backend, "fused_update", False) and len(plan) == 1:
                # the device grows the tree, adds it to its F and computes the next p and loss
                grown.append(in_data_columns(backend.grow_tree(params, bin_edge, learning_rate=learning_rate, **on)[0]))
                continue
            if score and len(plan) == 1 and sample is None and hasattr(backend, "grow_and_score"):
                # the host's compiled backend: grow, update F and score in one call where it can
                tree, loss = backend.grow_and_score(F, params, bin_edge, learning_rate)
                grown.append(in_data_columns(tree))
                continue
            if hasattr(backend, "grow_tree"):  # a compiled backend grows a whole tree in one call
                tree, leaf_segments, leaf_ids = backend.grow_tree(params, bin_edge, **on)
            else:
                tree, leaf_segments, leaf_ids = grower.grow(params, **on)
            if sample is not None:  # the other rows into their leaves too: every row's F changes
                leaf_segments = backend.spread_leaves(tree, leaf_segments, leaf_ids)
            step = backend.leaf_steps(tree, leaf_ids, learning_rate)  # the leaves' vectors
            if score and len(plan) == 1 and hasattr(backend, "update_and_score"):
                loss = backend.update_and_score(F, leaf_segments, step)
            else:
                backend.update_scores(F, leaf_segments, step)
            grown.append(in_data_columns(tree))
        return grown, loss

    def check_finite(loss: float, iteration: int) -> None:
        if not np.isfinite(loss):  # (K-LogitBoost's unnormalised link, exp(F - 1), can overflow)
            raise FloatingPointError(
                f"training diverged at iteration {iteration + 1}: the training loss of {algorithm} is {loss} (its "
                f"scores overflowed). {lower_rate_advice(algorithm, learning_rate)}"
            )

    def rescore(F: np.ndarray) -> float:
        # a device backend keeps its own F (updated by update_scores): recompute p from it
        return backend.rescore() if getattr(backend, "keeps_scores", False) else backend.set_scores(F)

    F = np.zeros((n_rows, n_classes))
    initial_loss = backend.set_scores(F)
    if trees:
        # (the trees split on the data's columns: with columns, the training rows' codes of them all)
        codes, code_missing = ((backend.training_codes(), backend.missing_code) if columns is None
                               else (training_codes, missing_code))
        for start in range(0, len(trees), per_iteration):
            group = trees[start:start + per_iteration]
            with threads():
                backend.add_trees(F, group, codes, code_missing, learning_rate)
            monitor(group)
            if hasattr(backend, "hamming_loss"):  # AdaBoost.MH: each kept iteration's Hamming loss again
                backend.set_scores(F)
                hamming.append(backend.hamming_loss)
    loss = backend.set_scores(F) if trees else initial_loss
    base = int(trees[-1].pair[0, 1]) if trees and algorithm in ABC else None
    grower = TreeGrower(backend, grower_params, bin_edge, n_rows)
    # a device backend's host mostly waits: its other threads (n_jobs) draw the next iterations' rows
    ahead = min(MAX_DRAWS_AHEAD, max(1, getattr(backend, "n_threads", 1) - 1)) if getattr(
        backend, "fused_update", False) else 0
    samples = _RowSamples(n_rows, subsample, seed, ahead, stop=n_estimators)
    # the host's compiled backend grows iterations of one tree on every row (AOSO's; two-class
    # MART's, say) several at a time (CpuBackend.grow_rounds: the same trees), where nothing is
    # called between iterations
    rounds = (getattr(backend, "grow_rounds", None) if after_iteration is None and algorithm not in ABC
              and subsample >= 1.0 and not hasattr(backend, "hamming_loss") else None)
    iteration = len(train_loss)
    while iteration < n_estimators:
        if loss <= tol:
            break
        plan = iteration_plan(algorithm, n_classes, grower_params, base) if rounds is not None else None
        if plan is not None and len(plan) == 1:
            n_rounds = min(n_estimators - iteration, backend.rounds_at_once())
            features = None
            if colsample_bytree < 1.0:  # (each tree's own, the draw of its iteration)
                features = np.stack([feature_sample(n_features, colsample_bytree, seed, iteration + t, 0)
                                     for t in range(n_rounds)])
                features = features if columns is None else features[:, columns]
            new_trees, losses = rounds(F, plan[0], bin_edge, learning_rate, n_rounds, tol, features)
            for tree, loss in zip(new_trees, losses):
                check_finite(loss, iteration)
                tree = in_data_columns(tree)
                trees.append(tree)
                train_loss.append(loss)
                monitor([tree])
                iteration += 1
            continue
        sample = samples(iteration)
        if algorithm in ABC and (base is None or iteration % (gap + 1) == 0):
            if getattr(backend, "keeps_scores", False):
                raise ValueError(f"algorithm={algorithm!r} does not run on the {backend.name} backend; use device='cpu'.")
            best = None
            for candidate in _class_order(backend.class_losses(), search):
                F_trial = F.copy()
                grown, _ = grow_iteration(F_trial, iteration_plan(algorithm, n_classes, grower_params, candidate),
                                          iteration, sample=sample)
                trial_loss = backend.set_scores(F_trial)
                if best is None or trial_loss < best[0]:
                    best = (trial_loss, candidate, F_trial, grown)
                trial_trees += len(grown)
                backend.set_scores(F)  # the next candidate starts from the same p
            loss, base, F, grown = best
            trial_trees -= len(grown)  # the kept ones are no trial
            backend.set_scores(F)
        else:
            grown, loss = grow_iteration(F, iteration_plan(algorithm, n_classes, grower_params, base), iteration,
                                         score=True, sample=sample)
            if loss is None:
                loss = rescore(F)  # the next iteration's probabilities, and this loss
        check_finite(loss, iteration)
        trees.extend(grown)
        train_loss.append(loss)
        if hasattr(backend, "hamming_loss"):
            hamming.append(backend.hamming_loss)
        monitor(grown)
        iteration += 1
        if after_iteration is not None and after_iteration(trees, train_loss, eval_loss, eval_error):
            break
    samples.close()
    return BoostResult(
        trees=trees,
        train_loss=np.asarray(train_loss, dtype=np.float64),
        eval_loss=[np.asarray(v, dtype=np.float64) for v in eval_loss],
        eval_error=[np.asarray(v, dtype=np.int64) for v in eval_error],
        initial_loss=initial_loss,
        fit_time=time.perf_counter() - started,
        trial_trees=trial_trees,
        train_hamming=np.asarray(hamming, dtype=np.float64),
    )
