"""Training callbacks: hooks before training, after every iteration, after training.

A callback sees the estimator being trained, whose ``trees_`` and ``train_loss_`` (and
``eval_loss_``, ``eval_error_``) hold the model built so far at every call, so it can save,
print or inspect it. ``after_iteration`` returning True stops training (after that tree).
Callbacks are not saved in model files.

::

    model = BoostClassifier(n_estimators=5000, callbacks=[Checkpoint("run.ckpt.json", every=100)])
    model.fit(X, y)                                  # killed at iteration 3456 ...
    model.fit(X, y, init_model="run.ckpt.json")      # ... continues from iteration 3400

A run continued from a checkpoint builds the same trees as a run never interrupted, and saves
the same bytes.
"""

from __future__ import annotations

import os

__all__ = ["Callback", "Checkpoint"]


class Callback:
    """Base class: override the hooks you need."""

    def before_training(self, model) -> None:
        """Called once, before the first new tree."""

    def after_iteration(self, model, iteration: int) -> bool:
        """Called after each new tree; ``iteration`` counts from 0. Return True to stop."""
        return False

    def after_training(self, model) -> None:
        """Called once, when training ends (normally or by a callback)."""


class Checkpoint(Callback):
    """Save the model every ``every`` iterations, and at the end of training.

    Parameters
    ----------
    path : str or path-like
        The model file to (over)write; written atomically, so a crash while saving leaves the
        previous checkpoint intact.
    every : int, default=100
        Iterations between two saves.
    """

    def __init__(self, path, every: int = 100):
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be a positive integer, got {every!r}.")
        self.path = os.fspath(path)
        self.every = every

    def after_iteration(self, model, iteration: int) -> bool:
        if (iteration + 1) % self.every == 0:
            model.save_model(self.path)
        return False

    def after_training(self, model) -> None:
        model.save_model(self.path)

    def __repr__(self) -> str:
        return f"Checkpoint({self.path!r}, every={self.every})"
