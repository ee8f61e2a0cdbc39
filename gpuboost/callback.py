"""Training callbacks: hooks before training, after every iteration, after training.

A callback sees the estimator being trained, whose ``trees_`` and ``train_loss_`` (and
``eval_loss_``, ``eval_error_``) hold the model built so far at every call, so it can save,
print or inspect it. ``after_iteration`` returning True stops training (after that iteration's
trees: ``gpuboost.algorithms.trees_per_iteration``).
Callbacks are not saved in model files.

::

    model = BoostClassifier(n_estimators=5000, callbacks=[Checkpoint("run.ckpt.json", every=100)])
    model.fit(X, y)                                  # killed at iteration 3456 ...
    model.fit(X, y, init_model="run.ckpt.json")      # ... continues from iteration 3400

A run continued from a checkpoint builds the same trees as a run never interrupted, and saves
the same bytes (with ``subsample`` or ``colsample_bytree`` below 1, where ``random_state`` is an
int: other seeds draw other rows and features after the checkpoint).
"""

from __future__ import annotations

import numbers
import os

import numpy as np

__all__ = ["Callback", "Checkpoint", "EarlyStopping", "ProgressBar"]


def _integer(name: str, value, low: int) -> int:
    """``value`` as a Python int: any integral number (NumPy's included, as a parameter grid
    gives them), not a bool."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        bound = "a positive integer" if low == 1 else f"an integer >= {low}"
        raise ValueError(f"{name} must be {bound}, got {value!r}.")
    return int(value)


class Callback:
    """Base class: override the hooks you need."""

    def before_training(self, model) -> None:
        """Called once, before the first new tree."""

    def after_iteration(self, model, iteration: int) -> bool:
        """Called after each new iteration; ``iteration`` is the model's iteration index, from 0,
        counting a continued model's (``init_model``, ``warm_start``) iterations too. Return True
        to stop."""
        return False

    def after_training(self, model) -> None:
        """Called once, when training ends (normally or by a callback); the callbacks in their
        list's order, but every Checkpoint after the others (it saves the model fit returns)."""


class Checkpoint(Callback):
    """Save the model every ``every`` iterations, and at the end of training (after the other
    callbacks' ends, whatever their order: the model that ``fit`` returns, an EarlyStopping's
    truncation included).

    Parameters
    ----------
    path : str or path-like
        The model file to (over)write; written atomically, so a crash while saving leaves the
        previous checkpoint intact.
    every : int, default=100
        Iterations between two saves.
    """

    def __init__(self, path, every: int = 100):
        self.every = _integer("every", every, 1)
        self.path = os.fspath(path)
        self._tree_texts = {}  # the trees' JSON texts during a fit (io.model_text): each written once

    def before_training(self, model) -> None:
        from .io import _check_saved_params, _classes_to_json, check_writable

        self._tree_texts = {}

        # before the first `every` iterations are trained for nothing: a path it cannot write,
        # and labels or parameters a model file cannot hold (datetime64 classes, say)
        check_writable(self.path)
        if hasattr(model, "classes_"):
            _classes_to_json(np.asarray(model.classes_))
        _check_saved_params(model)

    def after_iteration(self, model, iteration: int) -> bool:
        if (iteration + 1) % self.every == 0:
            self._save(model)
        return False

    def after_training(self, model) -> None:
        self._save(model)
        self._tree_texts = {}

    def _save(self, model) -> None:
        from .io import save_model

        save_model(model, self.path, self._tree_texts)

    def __getstate__(self):  # (pickles, copies and clones: the texts of a fit, failed or interrupted, stay behind)
        state = dict(self.__dict__)
        state["_tree_texts"] = {}
        return state

    def __repr__(self) -> str:
        return f"Checkpoint({self.path!r}, every={self.every})"


class EarlyStopping(Callback):
    """Stop when the loss on an ``eval_set`` has not improved for ``rounds`` iterations.

    When training ends, the model keeps the trees up to its best iteration (the one with the
    lowest eval loss; the first of equal ones), and ``best_iteration_`` (counting from 0) and
    ``best_score_`` are set on the estimator; with several EarlyStopping callbacks, the earliest
    of their cuts, with its own score. A continuation that runs no new iteration (its model has
    ``n_estimators`` already) is cut at the best of its whole history, as one fit would be.
    ``BoostClassifier(early_stopping_rounds=N)`` adds one that watches the first ``eval_set``,
    or the rows ``validation_fraction`` holds out where it is set.

    Parameters
    ----------
    rounds : int
        Iterations without improvement before training stops.
    data : int, default=0
        Which ``eval_set`` entry to watch.
    metric : {"loss", "error"}, default="loss"
        The eval set's loss (``eval_loss_``: the multinomial log loss, or a multi-label model's
        loss), or the number of misclassified rows (wrong (row, label) entries, multi-label).
    """

    def __init__(self, rounds: int, data: int = 0, metric: str = "loss"):
        rounds, data = _integer("rounds", rounds, 1), _integer("data", data, 0)
        if metric not in ("loss", "error"):
            raise ValueError(f"metric must be 'loss' or 'error', got {metric!r}.")
        self.rounds, self.data, self.metric = rounds, data, metric

    def _history(self, model):
        history = model.eval_loss_ if self.metric == "loss" else model.eval_error_
        if len(history) <= self.data:
            raise ValueError(
                f"early stopping watches eval_set[{self.data}], but fit got {len(history)} eval set(s); "
                "pass eval_set=[(X_valid, y_valid)]."
            )
        return history[self.data]

    def before_training(self, model) -> None:
        self.best_score, self.best_iteration = np.inf, -1

    def after_iteration(self, model, iteration: int) -> bool:
        # the whole history, so that iterations of a continued model count too
        history = np.asarray(self._history(model), dtype=np.float64)
        if history.size:
            self.best_iteration = int(np.argmin(history))  # the first of equal ones
            self.best_score = float(history[self.best_iteration])
        return history.size - 1 - self.best_iteration >= self.rounds

    def after_training(self, model) -> None:
        history = model.eval_loss_ if self.metric == "loss" else model.eval_error_
        if self.best_iteration < 0 and len(history) > self.data:
            # no new iteration (a continuation that had its n_estimators already): the best of
            # the model's whole history all the same, as a fit that had never stopped would cut it
            self.after_iteration(model, model.n_estimators_ - 1)
        if self.best_iteration < 0:
            return
        if self.best_iteration >= model.n_estimators_:
            return  # another EarlyStopping cut the model before this one's best: the earliest cut and its score stand
        model._truncate(self.best_iteration + 1)
        model.best_iteration_, model.best_score_ = self.best_iteration, self.best_score

    def __repr__(self) -> str:
        return f"EarlyStopping({self.rounds}, data={self.data}, metric={self.metric!r})"


class ProgressBar(Callback):
    """Show training progress: the iteration, the training loss, and the first eval set's loss
    and errors, refreshed every ``every`` iterations.

    Uses a tqdm progress bar where tqdm is installed (``pip install tqdm``), else prints a line
    every ``every`` iterations. ``BoostClassifier(verbose=N)`` adds one.

    Parameters
    ----------
    every : int, default=1
        Iterations between two refreshes.
    file : text stream, default=None
        Where to write: sys.stderr for the bar, sys.stdout for the lines, when None.
    """

    def __init__(self, every: int = 1, file=None):
        self.every, self.file = _integer("every", every, 1), file

    def before_training(self, model) -> None:
        import sys
        import time

        self.started = time.perf_counter()
        self.done = len(model.train_loss_)
        try:
            from tqdm.auto import tqdm
        except ImportError:
            self.bar = None
        else:
            self.bar = tqdm(total=model.n_estimators, initial=self.done, unit="it",
                            file=self.file or sys.stderr, dynamic_ncols=True)

    def _status(self, model) -> dict:
        status = {"loss": f"{model.train_loss_[-1]:.5g}", "trees": len(model.trees_)}
        if len(model.eval_loss_):
            status["eval_loss"] = f"{model.eval_loss_[0][-1]:.5g}"
            status["eval_errors"] = int(model.eval_error_[0][-1])
        return status

    def after_iteration(self, model, iteration: int) -> bool:
        if self.bar is not None:
            self.bar.update(iteration + 1 - self.done)
            self.done = iteration + 1
            if (iteration + 1) % self.every == 0:
                self.bar.set_postfix(self._status(model), refresh=False)
        elif (iteration + 1) % self.every == 0:
            import time

            fields = "  ".join(f"{k} {v}" for k, v in self._status(model).items())
            print(f"[{iteration + 1:5d}] {fields}  {time.perf_counter() - self.started:.1f}s",
                  file=self.file, flush=True)
        return False

    def after_training(self, model) -> None:
        if self.bar is not None:
            if len(model.train_loss_):
                self.bar.set_postfix(self._status(model), refresh=False)
            self.bar.close()
        self.bar = None  # (a closed bar still holds its stream, which cannot be pickled)

    # A fitted estimator holds its callbacks: pickling, cloning and copying it must work. The
    # bar of a fit (if one was left by a failed fit) is not kept; the standard streams are
    # pickled by name, and a copy shares its stream rather than copying it.
    def __getstate__(self):
        import sys

        state = {key: value for key, value in self.__dict__.items() if key != "bar"}
        streams = {id(sys.stdout): "stdout", id(sys.stderr): "stderr"}
        if self.file is not None and id(self.file) in streams:
            state["file"] = streams[id(self.file)]
        return state

    def __setstate__(self, state):
        import sys

        self.__dict__.update(state)
        if isinstance(self.file, str):
            self.file = getattr(sys, self.file)
        self.bar = None

    def __deepcopy__(self, memo):
        copy = ProgressBar(self.every, self.file)
        memo[id(self)] = copy
        return copy

    def __repr__(self) -> str:
        return f"ProgressBar(every={self.every})"
