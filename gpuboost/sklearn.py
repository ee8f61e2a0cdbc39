"""``BoostClassifier``: gpuboost as a scikit-learn estimator."""

from __future__ import annotations

import contextlib
import copy
import numbers
import operator
import os
import threading
import time
import warnings
import weakref

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from . import _validation, losses
from ._device import prediction_device, resolve_device
from .backends import backend_class, vector_backend_class
from .binning import BinMapper
from .algorithms import ALGORITHMS, trees_per_iteration
from .boosting import EvalSet, boost, check_subsample, lower_rate_advice, sample_size
from .grower import GrowerParams
from .losses import predicted_class, softmax_probabilities

__all__ = ["BoostClassifier", "ALGORITHMS"]

#: Each estimator's trees_ packed for its last prediction on the CPU (BoostClassifier._packed_trees)
_PACKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PACKED_LOCK = threading.Lock()
#: A NumPy X of at least this many values, for the CUDA backend, is binned on the GPU
#: (``BoostClassifier._bins_on_gpu``).
GPU_BINNING_VALUES = 1 << 22


def _link(algorithm: str, multilabel: bool) -> str:
    """The backend's link of an algorithm trained on the vector backend (see NumpyBackend)."""
    if algorithm == "adaboostmh":
        return "exp"
    if algorithm == "klogitboost":
        return "logistic" if multilabel else "klogit"
    return "softmax"


def trained_with(params: dict) -> dict:
    """What a model's trees were trained with, from its parameters (fit's, or a model file's):
    prediction and continuations read these, not the parameters, which set_params may change
    after the fit. random_state is validation_fraction's seed (a continuation's check), None
    where it was not an int (its rows cannot be drawn again)."""
    seed = params.get("random_state")
    return {"algorithm": params["algorithm"], "learning_rate": params["learning_rate"],
            "class_weight": copy.deepcopy(params.get("class_weight")),
            "validation_fraction": params.get("validation_fraction"),
            "random_state": seed if isinstance(seed, numbers.Integral) else None}


#: usable_cpus keeps its answer this many seconds, for the same affinity and
#: LOKY_MAX_CPU_COUNT: counting reads the cgroup files, 0.13 ms, twice a prediction (a
#: fifth of a one-row prediction's time); a container's quota changed meanwhile is seen
#: a second later
CPUS_KEPT_SECONDS = 1.0
_cpus_kept = None  # (time.monotonic(), the key, the count): one tuple, replaced at once


def usable_cpus() -> int:
    """The CPUs this process may use: its affinity and a container's CPU quota (cgroups), as
    joblib's loky counts them (a container limited to 2 CPUs of a 64-core host: 2, where the
    affinity says 64, and 64 threads meeting at barriers on 2 CPUs' time would crawl). Kept
    for CPUS_KEPT_SECONDS."""
    global _cpus_kept
    key = (frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
           os.environ.get("LOKY_MAX_CPU_COUNT"))
    now = time.monotonic()
    kept = _cpus_kept
    if kept is not None and kept[1] == key and 0.0 <= now - kept[0] < CPUS_KEPT_SECONDS:
        return kept[2]
    count = _count_usable_cpus()
    _cpus_kept = (now, key, count)
    return count


def _count_usable_cpus() -> int:
    try:
        from joblib.externals.loky import cpu_count

        return max(1, int(cpu_count()))
    except Exception:  # (joblib comes with scikit-learn, but its layout could change; LOKY_MAX_CPU_COUNT=all)
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def openmp_threads() -> int:
    """The threads OpenMP would run (OMP_NUM_THREADS, or a threadpoolctl limit), as scikit-learn's
    own estimators read them (a process that sets OMP_NUM_THREADS=1, as dask's and ray's workers
    do, ran gpuboost on every CPU); a large number where that cannot be read."""
    try:
        from sklearn.utils import _openmp_helpers

        if _openmp_helpers._openmp_parallelism_enabled():  # (else scikit-learn says 1, for itself)
            return max(1, int(_openmp_helpers._openmp_effective_n_threads(only_physical_cores=False)))
    except Exception:  # (private helpers of scikit-learn's, which may move: OMP_NUM_THREADS then)
        pass
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1 << 30


#: What a verbose fit prints before a machine's first fit compiles the CPU kernels
COMPILING = ("gpuboost: compiling the CPU kernels for this machine, once (2 to 3 minutes on 2 cores; numba "
             "caches them for later fits)")


def _say_if_compiling(backend, vector: bool) -> None:
    """Print COMPILING where the compiled CPU backend trains and its kernels are not compiled
    for this machine yet (a verbose fit would otherwise sit silent for minutes)."""
    if backend.__name__ not in ("CpuBackend", "CpuVectorBackend"):
        return
    from .backends.cpu import kernels_compiled

    if kernels_compiled(vector) is False:
        print(COMPILING, flush=True)


def _splittable_columns(codes) -> np.ndarray | None:
    """The indices of the columns of binned training rows that hold two codes or more (the
    missing values' code counts), and the first column whatever it holds (the backends sum a
    node's totals from its bins), or None where that is every column."""
    if not isinstance(codes, np.ndarray) or codes.ndim != 2 or codes.shape[0] == 0:
        return None
    splittable = codes.min(axis=0) != codes.max(axis=0)
    splittable[0] = True  # (the first column's bins give a node's totals: kept, so they are the same sums)
    return None if splittable.all() else np.flatnonzero(splittable)


class BoostClassifier(ClassifierMixin, BaseEstimator):
    """Multi-class boosting with the LogitBoost family; AOSO-LogitBoost by default.

    AOSO-LogitBoost (Sun, Reid and Zhou, 2014) grows one vector-valued tree per iteration; every
    node picks its own class pair (r, s) by their eq (33) and is split by the gain of eq (30).
    ``algorithm`` selects the others (MART, robust LogitBoost, LogitBoost, ABC-MART,
    ABC-LogitBoost, K-LogitBoost, AdaBoost.MH).

    Parameters
    ----------
    algorithm : {"aoso", "mart", "robustlogit", "logitboost", "abcmart", "abcrobustlogit", \
"klogitboost", "adaboostmh"}, default="aoso"
        The boosting algorithm (``gpuboost.algorithms`` has the table): AOSO-LogitBoost grows
        one vector tree per iteration; MART, robust LogitBoost and the original LogitBoost K
        trees (one per class); ABC-MART and ABC-LogitBoost (``abcrobustlogit``) K-1 trees
        against a base class; K-LogitBoost one vector tree updating all K classes; AdaBoost.MH
        (Kegl) one Hamming tree per iteration (K-LogitBoost and AdaBoost.MH on the CPU only:
        the NumPy reference backend with its costly stages compiled).
        Multi-label y (an indicator matrix): AdaBoost.MH, K-LogitBoost (each label its own
        logistic model on the shared vector trees) and AOSO, MART and robust LogitBoost (paper
        004's softmax targets eta = 1/|S_i|).
        ``train_loss_`` is each algorithm's own training loss (K-LogitBoost's is sum_k p_k - F_y,
        on multi-label y the sum of the labels' logistic losses;
        AdaBoost.MH's the exponential loss of eq (3), 1 at the start, with the weighted Hamming
        loss of eq (1) in ``train_hamming_loss_``);
        ``eval_loss_`` is the multinomial log loss of softmax(F) for every algorithm (multi-label
        models: see ``eval_loss_`` below), and
        ``predict_proba`` is softmax(F) (for AdaBoost.MH a monotone map of its scores f to
        probabilities that sum to 1: the class ranking and ``predict``'s argmax are f's).
    n_estimators : int, default=1000
        Boosting iterations (AOSO: one tree each; ``n_trees_`` counts the trees).
    max_leaves : int, default=20
        Leaves per tree (the papers' J).
    max_depth : int or None, default=None
        The deepest a tree may grow: a node at this depth (the root's is 0) is not split
        (LightGBM's and XGBoost's ``max_depth``; trees still grow best-first to at most
        ``max_leaves`` leaves). None, the papers' setting: no limit but ``max_leaves``.
    learning_rate : float, default=0.1
        Shrinkage (the papers' nu).
    max_bins : int, default=255
        Value bins per feature, at most 65535; missing values get one more bin.
    min_samples_leaf : int, default=1
        Fewest training rows in a leaf (the papers' setting is 1).
    pair_rule : {"eq33", "eq32"}, default="eq33"
        Class-pair selection: second order (eq 33, the paper's choice) or first order (eq 32).
    leaf_clip : float, default=5.0
        Node values are clipped to [-leaf_clip, leaf_clip] (the AOSO authors' code uses 5), in
        every algorithm but AdaBoost.MH, whose alpha the edge's cap bounds.
    tol : float, default=1e-16
        Training stops when the training loss falls to ``tol``: ``sum_i w_i (-log p_{i,y_i})`` for
        the softmax family (multi-label: paper 004's ``sum_i w_i sum_k eta_ik (-log p_ik)``),
        K-LogitBoost's and AdaBoost.MH's own losses (``train_loss_``) for them.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where to train. "cuda": an NVIDIA GPU (needs the ``cuda12`` or ``cuda13`` extra; AOSO
        only: other algorithms and multi-label y raise a ValueError with "cuda"); "auto": the
        GPU when one is usable and the problem runs there (AOSO on single-label y, at most 128
        classes, ``max_bins`` at most 4094 and at most 65535 features), else the CPU. The
        estimator that trained on the GPU predicts on the GPU when one is usable and on the CPU
        otherwise, with the same scores; a model loaded from a file predicts on the CPU.
    n_jobs : int or None, default=None
        CPU threads of fit, prediction and contributions: None means every CPU this process
        may use (its affinity, and a container's CPU quota, as joblib counts them), or fewer
        where OpenMP is limited (``OMP_NUM_THREADS``, threadpoolctl's ``threadpool_limits``), as
        scikit-learn's estimators take it; negative values count back from the CPUs (-1: all,
        -2: all but one), as in scikit-learn. The model does not depend on it: every sum runs in
        the same order whatever the number of threads.
    random_state : int in [0, 2**32 - 1], numpy RandomState instance or None, default=None
        Draws the rows that ``validation_fraction`` holds out, ``subsample``'s rows and
        ``colsample_bytree``'s features (an int: the same draws at every fit). Nothing else is
        random: with none of them the model does not depend on it.
    verbose : int, default=0
        Show progress: a tqdm progress bar with the training loss and the first eval set's
        loss and errors, refreshed every ``verbose`` iterations (where tqdm is installed;
        otherwise a line every ``verbose`` iterations). 0: silent; True and False as 1 and 0.
        A verbose fit also says when it first compiles the CPU kernels on a machine (2 to 3
        minutes on 2 cores; numba caches them).
    warm_start : bool, default=False
        When fitted already, ``fit`` keeps the trees and adds iterations up to
        ``n_estimators`` (on the same training data, with the same binning).
    callbacks : list of gpuboost.callback.Callback, default=None
        Hooks called before training, after every iteration (one may stop training) and after
        training; ``gpuboost.callback.Checkpoint`` saves the model as it grows.
    search : int, default=2
        ABC only (ABCBoost's name and default): base-class candidates tried at a search, the
        classes with the largest training loss; 0 tries every class (paper 003's exhaustive
        search).
    gap : int, default=5
        ABC only: the base class is searched every ``gap + 1`` iterations and reused in
        between (``search=1, gap=0`` is paper 001's "worst class" rule).
    early_stopping_rounds : int or None, default=None
        Stop when the loss on the first ``eval_set`` has not improved for this many
        iterations, and keep the trees up to the best iteration (``best_iteration_``,
        ``best_score_``); see ``gpuboost.callback.EarlyStopping``. With
        ``validation_fraction``, the loss on the rows it holds out.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as in scikit-learn's classifiers: each row's weight is its
        class's times its ``sample_weight``. A dict maps labels to weights (finite, >= 0;
        classes it does not name weigh 1; labels that are not classes of y are an error, unless
        the dict names every class of y, as in scikit-learn); "balanced" weighs each class
        n_samples / (n_classes * its number of rows), counted over every row of y
        (``sklearn.utils.class_weight.compute_sample_weight``). The same model as those
        ``sample_weight``. It weighs the loss of the rows ``validation_fraction`` holds out,
        not an ``eval_set``'s (give ``fit`` its ``eval_sample_weight``).
        Single-label y only: weight a multi-label y's rows with ``sample_weight``. Rows of a
        tiny weight can still get leaves of their own (a Newton leaf value does not depend on
        the scale of its weights): with extreme weights, set ``min_child_weight``
        (docs/algorithms.md, "Sample and class weights").
    min_child_weight : float, default=0.0
        The smallest Hessian sum a child may hold: a split whose side sums less than this is
        not considered (XGBoost's ``min_child_weight``, LightGBM's
        ``min_sum_hessian_in_leaf``). The Hessian is the split gain's: for AOSO, ABC-LogitBoost
        and two-class robust LogitBoost a node's pair Hessian (the denominator of eq 30), for
        robust LogitBoost on more classes and LogitBoost the tree's sum of w p (1 - p), for
        MART and ABC-MART (first-order gains) the rows' weights. 0, the papers' setting: none.
        It keeps rows of tiny weight out of leaves of their own (docs/algorithms.md, "Sample
        and class weights"). Not for K-LogitBoost and AdaBoost.MH (vector trees).
    subsample : float in (0, 1], default=1.0
        The fraction of the training rows each iteration's trees are grown on: subsample x
        n_samples rows (rounded, halves up; at least one) drawn without replacement, anew each
        iteration (stochastic gradient boosting, Friedman 2002; XGBoost's and LightGBM's
        ``subsample``), with ``random_state``; every row's score is then updated from the leaf
        it falls in. All trees of an iteration (MART's K, ABC's candidates) share its rows.
        1.0, the papers' setting: every row. With an int ``random_state`` the model does not
        depend on ``n_jobs``, and a continuation draws the rows an uninterrupted fit would
        (other ``random_state`` values draw a new seed at each fit). Not for AdaBoost.MH (its
        weights sum to 1 over every row). The CPU and the GPU draw the same rows.
    colsample_bytree : float in (0, 1], default=1.0
        The fraction of the features each tree may split on: colsample_bytree x n_features of
        them (rounded, halves up; at least one), drawn anew for each tree with ``random_state``
        (XGBoost's ``colsample_bytree``, LightGBM's ``feature_fraction``). 1.0, the papers':
        every feature. Every algorithm takes it; the draws, like subsample's, depend on the
        seed, the iteration and the tree's place in it alone, so the CPU and the GPU draw the
        same features.
    validation_fraction : float in (0, 1) or None, default=None
        Hold out this fraction of the training rows as an eval set, for early stopping without
        one of your own (scikit-learn's HistGradientBoosting has the same parameter):
        round(fraction x the rows of positive weight), shared among the classes in proportion
        to their rows (every class keeps one at least; multi-label y: all rows alike), drawn
        with ``random_state``. They are neither binned nor trained on; they are the last entry
        of ``eval_loss_`` (weighted by ``sample_weight`` and ``class_weight``, as training) and
        ``eval_error_`` (after ``eval_set``'s), and ``early_stopping_rounds`` watches them. A
        continuation (``warm_start``, ``init_model``) needs the same fraction and the int
        ``random_state`` of the first fit, so that it holds out the same rows.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels of y (rows of weight 0 included); multi-label models:
        ``arange(n_labels)``, the indicator matrix's columns.
    multilabel_ : bool
        Whether y was a multi-label indicator matrix.
    empty_label_sets_ : bool
        Multi-label models only: whether y had rows without any label. ``predict`` then may
        give a row no label (AdaBoost.MH, K-LogitBoost); otherwise it gives every row at least
        its top-ranked label, as every training row had one.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X had string column names (a pandas DataFrame).
    n_estimators_ : int
        Iterations run (fewer than ``n_estimators`` when the loss reached ``tol``, early
        stopping kept an earlier iteration, or a callback stopped training).
    n_trees_ : int
        Trees in the model: ``n_estimators_`` for AOSO, K (or K-1 for ABC) times that for the
        K-tree family (for two classes: once, but LogitBoost's twice); the papers compare
        algorithms at equal numbers of trees.
    n_trial_trees_ : int
        Trees grown for ABC's base-class candidates that were not kept (they cost time, not
        model size); 0 for the other algorithms. Not set on a model loaded from a file.
    train_loss_ : ndarray of shape (n_estimators_,)
        Training loss after each iteration: a sum over the rows (weighted), as the papers
        report it, not a mean (AdaBoost.MH's: its exponential loss under weights that sum to 1,
        1 before the first tree).
    eval_loss_, eval_error_ : list of ndarray of shape (n_estimators_,)
        Loss (summed over the rows, as ``train_loss_``: divide by the number of rows, or by the
        sum of the weights for a weighted one, for the mean that ``sklearn.metrics.log_loss``
        gives) and number of misclassified rows (of positive weight) on each ``eval_set`` after
        each iteration, then on the rows ``validation_fraction`` held out.
        Multi-label models: the log loss of ``predict_proba``'s probability model (paper
        004's -sum eta log p for the softmax family, the labels' binary log losses for
        K-LogitBoost and AdaBoost.MH), and the number of wrong (row, label) entries of
        ``predict``.
    train_hamming_loss_ : ndarray of shape (n_estimators_,)
        AdaBoost.MH only: the weighted Hamming loss (eq 1) after each iteration (saved in
        model files; a continuation computes its earlier iterations' again).
    fit_time_ : float
        Seconds spent in the boosting loop.
    """

    def __init__(
        self,
        algorithm: str = "aoso",
        n_estimators: int = 1000,
        max_leaves: int = 20,
        learning_rate: float = 0.1,
        max_bins: int = 255,
        min_samples_leaf: int = 1,
        pair_rule: str = "eq33",
        leaf_clip: float = 5.0,
        tol: float = 1e-16,
        device: str = "auto",
        n_jobs: int | None = None,
        random_state=None,
        verbose: int = 0,
        warm_start: bool = False,
        callbacks: list | None = None,
        search: int = 2,
        gap: int = 5,
        early_stopping_rounds: int | None = None,
        class_weight=None,
        validation_fraction: float | None = None,
        min_child_weight: float = 0.0,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
        max_depth: int | None = None,
    ):
        self.algorithm = algorithm
        self.n_estimators = n_estimators
        self.max_leaves = max_leaves
        self.learning_rate = learning_rate
        self.max_bins = max_bins
        self.min_samples_leaf = min_samples_leaf
        self.pair_rule = pair_rule
        self.leaf_clip = leaf_clip
        self.tol = tol
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.callbacks = callbacks
        self.search = search
        self.gap = gap
        self.early_stopping_rounds = early_stopping_rounds
        self.class_weight = class_weight
        self.validation_fraction = validation_fraction
        self.min_child_weight = min_child_weight
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.max_depth = max_depth

    def __setstate__(self, state):
        # an estimator pickled by a version without these parameters: their defaults
        state = {"class_weight": None, "validation_fraction": None, "min_child_weight": 0.0, "subsample": 1.0,
                 "colsample_bytree": 1.0, "max_depth": None, **state}
        super().__setstate__(state)

    # -- checks ------------------------------------------------------------------------
    def _check_params(self) -> None:
        _validation.check_params(self, ALGORITHMS)

    def _n_threads(self) -> int:
        available = usable_cpus()
        if self.n_jobs is None:
            return min(available, openmp_threads())
        return min(self.n_jobs, available) if self.n_jobs > 0 else max(1, available + 1 + self.n_jobs)

    def _check_X(self, X, reset: bool) -> np.ndarray:
        return _validation.check_X(self, X, reset)

    # -- fit -----------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None, eval_set=None, init_model=None, eval_sample_weight=None):
        """Train on X (n_samples, n_features; NaN = missing) and labels y (n_samples,).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_labels)
            Class labels of one type (ints, strings, ...; an object array of ints is ints).
            Multi-label learning: an indicator matrix of 0 and 1, one column per label (an
            array, a list of lists, or a scipy.sparse matrix, densified).
        sample_weight : array-like of shape (n_samples,) or float, default=None
            (A float: every row's weight.) Multiplies each row's gradient and Hessian (weight 2
            acts as a duplicated row in those sums and in the bin edges, up to how rounding
            breaks exact ties: docs/algorithms.md, "Numerical conventions"; ``min_samples_leaf``,
            ``subsample``, ``validation_fraction`` and ``"balanced"`` count rows, not weights);
            rows of weight 0 are left out of training, but still declare their classes (as in
            scikit-learn: ``classes_`` and ``predict_proba``'s columns come from all of y).
            Rows of two classes at least need a weight > 0; weights are finite, >= 0 and at most
            1e100 (larger ones would overflow the sums: divide them by a constant).
        eval_set : list of (X, y) pairs, default=None
            Monitored after every iteration (``eval_loss_``, ``eval_error_``); never used to
            choose anything but the early stopping point. Multi-label models take indicator
            matrices of the same labels.
        init_model : str, path-like or fitted BoostClassifier, default=None
            A model (or model file, such as a ``Checkpoint``) to continue: its trees are kept,
            its binning reused, and training goes on to ``n_estimators`` iterations in all.
            Train it on the same data: the continued run then builds exactly the trees an
            uninterrupted run would (with ``subsample`` or ``colsample_bytree`` < 1, where
            ``random_state`` is an int: otherwise each fit draws its own seed). ``warm_start=True``
            does the same with this estimator's own fitted trees.
        eval_sample_weight : list of array-like or None, default=None
            Weights of the ``eval_set`` entries' rows, one array (or None: unweighted) per
            entry, as LightGBM's ``eval_sample_weight``: each eval set's loss is then weighted
            (checked as ``sample_weight``), and its rows of weight 0 are left out of both its
            loss and its errors. Without it, the eval sets are not weighted.

        Returns
        -------
        self : BoostClassifier

        Notes
        -----
        A fit that fails (bad input, a continuation that does not match, an interrupt) leaves
        the estimator as it was before: a fitted model is not lost to a failed refit. A fit
        that succeeds keeps no fitted attribute of the previous one that it does not set
        itself (``best_iteration_`` after a fit without early stopping, say).

        Where the training loss is at ``tol`` before the first iteration, no tree is added
        (a UserWarning says so); the model then predicts its initial scores F = 0.
        """
        previous = dict(self.__dict__)
        try:
            return self._fit(X, y, sample_weight, eval_set, init_model, eval_sample_weight)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(previous)
            raise

    def _bins_on_gpu(self, X, y, sample_weight) -> bool:
        """Whether a NumPy X for GPU training goes to the GPU before it is binned.

        A large plain array that the CUDA backend trains on, without weights: on the host, its
        conversion to float64 and its sorts take seconds at ten million rows (most of the fit's
        start), on the GPU milliseconds. Without weights the GPU's edges and codes are the host's
        bit for bit (``BinMapper.fit``), so the model does not depend on the route. Smaller
        arrays, pandas frames (their column names), fits with sample or class weights,
        ``min_child_weight``, ``subsample`` or ``colsample_bytree`` below 1, a ``max_depth`` or
        a 2-D y are binned on the host.
        """
        return (type(X) is np.ndarray and X.ndim == 2 and X.dtype.kind in "biuf" and X.size >= GPU_BINNING_VALUES
                and sample_weight is None and self.class_weight is None and not self.min_child_weight > 0
                and not self.subsample < 1 and not self.colsample_bytree < 1 and self.max_depth is None
                and getattr(y, "ndim", 1) == 1)

    def _fit(self, X, y, sample_weight, eval_set, init_model, eval_sample_weight=None):
        self._check_params()
        device = resolve_device(self.device, self.algorithm)
        init = self._initial_model(init_model)
        # no fitted attribute of the previous fit survives unless this one sets it again
        # (best_iteration_ of an earlier early stopping, AdaBoost.MH's train_hamming_loss_, what
        # a callback added); a continuation takes its trees from ``init``, a copy made before
        for name in [name for name in vars(self) if name.endswith("_") and not name.startswith("_")]:
            delattr(self, name)
        # a CuPy X for GPU training is checked and binned where it is (never copied to the host);
        # y and the weights (one value per row) come to the host
        gpu_input = device == "cuda" and _validation.on_gpu(X)
        if device == "cuda" and not gpu_input and self._bins_on_gpu(X, y, sample_weight):
            X, gpu_input = _validation.upload_X(X), True  # large NumPy X: binned on the GPU (same edges)
        X = _validation.check_X_device(self, X, reset=True) if gpu_input else self._check_X(X, reset=True)
        y = _validation.host_labels(y)
        indicator = _validation.label_indicator(y, self.algorithm)  # multi-label: an (n, L) bool matrix
        y = _validation._labels_1d(y) if indicator is None else indicator
        if y.shape[0] != X.shape[0]:
            if indicator is not None:  # (an indicator matrix's rows, each of its labels)
                raise ValueError(f"X has {X.shape[0]} rows but the multi-label y has {y.shape[0]}; give one row of "
                                 "labels per row of X.")
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; give one label per row.")
        weight = _validation.check_weight(sample_weight, X.shape[0])
        self.multilabel_ = indicator is not None
        if self.multilabel_:
            self.classes_ = np.arange(indicator.shape[1])  # the labels are the columns
            self.empty_label_sets_ = bool(not indicator.any(axis=1).all())  # (from every row, as classes_)
        else:
            # from every row, as scikit-learn does: a row of weight 0 still declares its class
            self.classes_, y_codes = _validation.encode_labels(y)
        if init is not None:
            self._check_continuation(init, X.shape[1])
        if self.class_weight is not None:
            if self.multilabel_:
                raise ValueError("class_weight applies to one class label per row; for a multi-label indicator y, "
                                 "weight the rows with sample_weight instead.")
            weight = _validation.weight_classes(weight, _validation.class_weights(self.class_weight, self.classes_,
                                                                                  y_codes))
        if self.min_child_weight > 0 and self.algorithm in ("klogitboost", "adaboostmh"):
            raise ValueError(f"min_child_weight applies to the pair and class trees of aoso, mart, robustlogit, "
                             f"logitboost and ABC, not to {self.algorithm}'s vector trees; use min_samples_leaf.")
        check_subsample(self.algorithm, self.subsample)
        held_out = None
        if self.validation_fraction is not None:  # the rows held out: the last eval set
            train, held = self._validation_split(y_codes if not self.multilabel_ else None, X.shape[0], weight)
            held_out = (_validation.to_host(X[_validation.like(X, held)]),
                        indicator[held] if self.multilabel_ else y_codes[held],
                        None if weight is None else weight[held])
            X = X[_validation.like(X, train)]
            weight = None if weight is None else weight[train]
            if self.multilabel_:
                indicator = indicator[train]
            else:
                y_codes = y_codes[train]
        if weight is not None and np.any(weight == 0):
            # a row of weight 0 contributes nothing: train exactly as if it were not there
            # (it would still count towards min_samples_leaf and the bin edges otherwise)
            kept = weight > 0
            X, weight = X[_validation.like(X, kept)], weight[kept]
            if self.multilabel_:
                indicator = indicator[kept]
            else:
                y_codes = y_codes[kept]
                weighted = np.unique(y_codes)
                if weighted.size < 2:
                    what = "sample_weight" if self.class_weight is None else "weight (sample_weight x class_weight)"
                    raise ValueError(
                        f"only class {self.classes_[weighted[0]]} has rows of positive {what} (y has "
                        f"{len(self.classes_)} classes); boosting needs rows of two classes with a weight > 0."
                    )
        if self.multilabel_:
            if device == "cuda":  # multi-label learning runs on the NumPy reference backend
                if self.device == "cuda":
                    raise ValueError("multi-label learning runs on the CPU in this version; use device='cpu' or 'auto'.")
                device = "cpu"
                X = _validation.to_host(X)
            if self.algorithm not in ("adaboostmh", "klogitboost") and not indicator.any(axis=1).all():
                # the softmax family's target eta = 1/|S_i| is undefined without labels (AdaBoost.MH
                # and K-LogitBoost score each label on its own: a row without labels is all negatives)
                empty = ~indicator.any(axis=1)
                warnings.warn(f"{int(empty.sum())} rows have no label; {self.algorithm} leaves them out of its loss, "
                              "and predicts at least one label for every row (AdaBoost.MH and K-LogitBoost keep such "
                              "rows, and can predict none).", UserWarning, stacklevel=3)
                X, indicator = X[~empty], indicator[~empty]
                weight = None if weight is None else weight[~empty]
                if X.shape[0] == 0:
                    raise ValueError("every row of y is empty: multi-label learning needs rows with labels.")
            y_codes = np.argmax(indicator, axis=1)  # the multi-label losses use the indicator, not this
        n_classes = len(self.classes_)
        if device == "cuda" and self.device == "auto":
            from .backends.cuda import cuda_supports

            if not cuda_supports(n_classes, self.max_bins, X.shape[1]):
                device = "cpu"  # more classes or bins than the GPU kernels hold
        # K-LogitBoost's and AdaBoost.MH's vector trees and multi-label targets: CpuVectorBackend
        vector_trees = self.algorithm in ("klogitboost", "adaboostmh") or self.multilabel_
        on_cuda_backend = device == "cuda" and not vector_trees
        if not on_cuda_backend:
            # the scores' arrays first (before binning; the histograms' once the columns are known)
            _validation.check_memory(X.shape[0], n_classes, vector=vector_trees)
            X = _validation.to_host(X)  # a GPU X for CPU training: copied once
        if init is not None:
            self._bin_mapper = init._bin_mapper
        try:
            if init is None:
                self._bin_mapper = BinMapper(self.max_bins).fit(X, weight, self._n_threads())
            codes = self._bin_mapper.transform(X, self._n_threads())
        except Exception as exc:  # the GPU's memory ran out while binning there
            if not (_validation.on_gpu(X) and "OutOfMemory" in type(exc).__name__):
                raise
            raise _validation.gpu_memory_error(X.nbytes * 2, "to bin X") from None
        n_rows = X.shape[0]
        del X  # the codes are what training reads (on the GPU, X's device copy is freed here)
        pairs = _validation.check_eval_set(eval_set)
        eval_sets = [self._eval_set(Xe, ye, we, i) for i, ((Xe, ye), we) in
                     enumerate(zip(pairs, _validation.check_eval_weights(eval_sample_weight, len(pairs))))]
        if held_out is not None:  # (last: the indices of the eval_set given stay as they are)
            eval_sets.append(self._held_out_set(*held_out))

        # what the trees are trained with: prediction reads these, not the parameters, which
        # set_params may change after the fit (a failed fit restores the previous ones)
        self._trained_with = trained_with(self.get_params(deep=False))
        # the columns that can split (two codes or more among the training rows): the backend
        # holds only those (a column of one value cost as much as any other in every histogram:
        # 20,000 constant columns beside 5 took a tree 1.6 s instead of 1.4 ms), and the trees
        # are mapped back to the data's columns (boosting.boost's ``columns``): the trees of a
        # backend with every column (it keeps the data's first column, whose bins give a node's
        # totals, and the rule of histogram subtraction for every column: below). The GPU keeps
        # every column (its kernels are not tested on this yet).
        all_codes, columns = codes, (None if on_cuda_backend else _splittable_columns(codes))
        if columns is not None:
            codes = np.ascontiguousarray(codes[:, columns])
        tree_leaves = min(self.max_leaves, max(2, n_rows // self.min_samples_leaf))
        if not on_cuda_backend:  # (the GPU's arrays are on the GPU: its backend checks its memory)
            _validation.check_memory(n_rows, n_classes, vector=vector_trees, n_features=codes.shape[1],
                                     n_codes=int(self._bin_mapper.n_bins_.max()) + 1, max_leaves=tree_leaves,
                                     channels=(1 if self.algorithm == "adaboostmh" else 2) * n_classes + 1)
        if self.verbose and not on_cuda_backend:
            _say_if_compiling(vector_backend_class() if vector_trees else backend_class(device), vector_trees)
        if vector_trees:
            # their vector trees and links, and multi-label targets, are the NumPy reference
            # backend's, with its costly stages compiled (CpuVectorBackend)
            backend = vector_backend_class()(
                codes, y_codes, weight, n_classes, n_bins=int(self._bin_mapper.n_bins_.max()),
                missing_code=self._bin_mapper.missing_bin,
                link=_link(self.algorithm, self.multilabel_),
                labels=indicator if self.multilabel_ else None, n_threads=self._n_threads())
        else:
            backend = backend_class(device)(
                codes, y_codes, weight, n_classes,
                n_bins=int(self._bin_mapper.n_bins_.max()), missing_code=self._bin_mapper.missing_bin,
                n_threads=self._n_threads(),
            )
        if columns is not None and getattr(backend, "derives_histograms", False):
            from .backends.base import histograms_derivable

            channels = backend._vector_width() if hasattr(backend, "_vector_width") else 8
            if not histograms_derivable(tree_leaves, all_codes.shape[1], backend.n_codes, channels):
                # subtraction's memory rule as for every column (derived histograms differ by
                # rounding, which can move a gain at the level of rounding across 0)
                backend.derives_histograms = False
        callbacks = list(self.callbacks or [])
        if self.verbose:
            from .callback import ProgressBar

            callbacks.append(ProgressBar(every=int(self.verbose)))  # (True: every iteration)
        from .callback import EarlyStopping

        if self.early_stopping_rounds is not None:
            if not eval_sets:
                raise ValueError("early_stopping_rounds needs a validation set: pass eval_set=[(X_valid, y_valid)], or "
                                 "set validation_fraction (0.1, say) to hold out some of the training rows.")
            # the rows validation_fraction held out where there are such rows, else the first eval set
            watched = len(eval_sets) - 1 if held_out is not None else 0
            callbacks.insert(0, EarlyStopping(self.early_stopping_rounds, data=watched))  # its end state first
        for callback in callbacks:  # (before any training, or a Checkpoint's first file)
            if isinstance(callback, EarlyStopping) and callback.data >= len(eval_sets):
                has = (f"{len(eval_sets)} (data=0 .. {len(eval_sets) - 1}"
                       f"{'; the last: the rows validation_fraction holds out' if held_out is not None else ''})"
                       if eval_sets else "none: pass eval_set=[(X_valid, y_valid)], or set validation_fraction")
                raise ValueError(f"{callback!r} watches eval set {callback.data}, and the fit's eval sets are {has}.")
        # the fitted state exists from the start, so that callbacks can save the model so far
        self.device_ = device
        self.trees_ = [] if init is None else list(init.trees_)
        self.train_loss_ = [] if init is None else list(init.train_loss_)
        self.initial_loss_ = backend.set_scores(np.zeros((n_rows, n_classes)))
        self.eval_loss_, self.eval_error_ = [], []
        for callback in callbacks:
            callback.before_training(self)

        def after_iteration(trees, train_loss, eval_loss, eval_error) -> bool:
            self.trees_, self.train_loss_ = trees, train_loss
            self.eval_loss_, self.eval_error_ = eval_loss, eval_error
            stop = False
            for callback in callbacks:  # every callback sees every iteration
                stop = bool(callback.after_iteration(self, len(train_loss) - 1)) or stop
            return stop

        tree_rows = n_rows if self.subsample >= 1 else sample_size(n_rows, self.subsample)
        if tree_rows < 2 * self.min_samples_leaf:  # (a split needs min_samples_leaf rows on each side)
            warnings.warn(f"min_samples_leaf={self.min_samples_leaf} is more than half of the {tree_rows} rows each "
                          "tree is grown on: no tree can split, and the model only learns how frequent the classes are. "
                          "Lower min_samples_leaf" + (" or raise subsample." if self.subsample < 1 else "."),
                          UserWarning, stacklevel=3)
        result = boost(
            backend,
            n_rows=n_rows,
            n_classes=n_classes,
            n_estimators=self.n_estimators,
            learning_rate=float(self.learning_rate),
            tol=float(self.tol),
            grower_params=GrowerParams(
                # a tree has at most n_rows // min_samples_leaf leaves (each holds that many rows):
                # a larger max_leaves grows the same trees, but the growers allocate for
                # max_leaves nodes (max_leaves=10**9 ran out of memory)
                max_leaves=tree_leaves,
                min_samples_leaf=self.min_samples_leaf,
                min_child_weight=float(self.min_child_weight),
                max_depth=None if self.max_depth is None else int(self.max_depth),
                pair_rule=self.pair_rule,
                leaf_clip=float(self.leaf_clip),
            ),
            bin_edge=self._bin_mapper.bin_upper_edge,
            missing_code=self._bin_mapper.missing_bin,
            eval_sets=eval_sets,
            init_trees=self.trees_,
            init_train_loss=self.train_loss_,
            after_iteration=after_iteration if callbacks else None,
            algorithm=self.algorithm,
            search=self.search,
            gap=self.gap,
            subsample=float(self.subsample),
            seed=self._sampling_seed(),
            colsample_bytree=float(self.colsample_bytree),
            columns=columns,
            # (every column's codes where trees are rescored from them: a continuation's; else
            # the columns' count alone, so that the codes are not kept through the fit)
            training_codes=None if columns is None else (
                all_codes if init is not None else np.empty((0, all_codes.shape[1]), all_codes.dtype)),
        )
        n_before = 0 if init is None else len(init.train_loss_)
        if len(result.train_loss) == n_before < self.n_estimators:
            # boost() stops before its first iteration only where the loss is at tol already
            before = result.train_loss[-1] if len(result.train_loss) else result.initial_loss
            kept = (f"the model keeps its {len(result.train_loss)} iterations" if len(result.train_loss) else
                    "the model predicts its initial scores F = 0 (the same probability for every class)")
            warnings.warn(f"no tree was added: the training loss {before:.6g} is already at or below tol={self.tol}; "
                          f"{kept}. Lower tol to train.", UserWarning, stacklevel=3)
        self.n_trial_trees_ = result.trial_trees
        if self.algorithm == "adaboostmh":
            self.train_hamming_loss_ = result.train_hamming
        self.trees_ = result.trees
        self.train_loss_ = result.train_loss
        self.initial_loss_ = result.initial_loss
        self.eval_loss_ = result.eval_loss
        self.eval_error_ = result.eval_error
        self.fit_time_ = result.fit_time
        from .callback import Checkpoint

        # a Checkpoint's last save after every other callback's end (an EarlyStopping's truncation,
        # wherever it is in the list): it saves the model that fit returns
        for callback in sorted(callbacks, key=lambda c: isinstance(c, Checkpoint)):
            callback.after_training(self)
        # (the model fit returns, an EarlyStopping's truncation included)
        if len(result.train_loss) > n_before and len(self.train_loss_) and self.train_loss_[-1] > self.initial_loss_:
            warnings.warn(
                f"the training loss ended at {self.train_loss_[-1]:.6g}, above {self.initial_loss_:.6g}, the loss of "
                "the initial scores F = 0 (every class as likely): the fit diverged, and the model fits its "
                f"training rows worse than it would untrained. {lower_rate_advice(self.algorithm, self.learning_rate)}",
                ConvergenceWarning, stacklevel=3)
        return self

    def _initial_model(self, init_model):
        """The fitted model a fit continues from, or None."""
        if init_model is not None:
            if isinstance(init_model, BoostClassifier):
                check_is_fitted(init_model, "trees_")
                return copy.copy(init_model)  # its state as it is now, should it be this estimator
            if isinstance(init_model, (str, bytes, os.PathLike)):  # (bytes: a file name, as load_model takes)
                from .io import load_model

                return load_model(init_model)
            raise TypeError(
                f"init_model must be a model file path or a fitted BoostClassifier, got {type(init_model).__name__}."
            )
        if self.warm_start and hasattr(self, "trees_"):
            return copy.copy(self)
        return None

    def _check_continuation(self, init, n_features: int) -> None:
        """Refuse to continue ``init`` on data or settings its trees do not fit (this estimator's
        ``classes_``, ``multilabel_`` and ``feature_names_in_`` are already this fit's)."""
        problems = []
        if init.n_features_in_ != n_features:
            problems.append(f"it has {init.n_features_in_} features, X has {n_features}")
        else:
            problems += self._feature_name_problems(init)
        was_multilabel = bool(getattr(init, "multilabel_", False))
        if was_multilabel != self.multilabel_:
            problems.append("it was fitted on a multi-label indicator matrix, and this y holds one class label per row"
                            if was_multilabel else
                            "it was fitted on multi-class y, and this y is a multi-label indicator matrix")
        elif len(init.classes_) != len(self.classes_) or np.any(init.classes_ != self.classes_):
            problems.append(f"its classes are {init.classes_.tolist()}, y has {self.classes_.tolist()}")
        # what the trees were trained with (for warm_start, the parameters may have changed since)
        trained = getattr(init, "_trained_with", {"algorithm": init.algorithm, "learning_rate": init.learning_rate})
        if float(trained["learning_rate"]) != float(self.learning_rate):  # (a Fraction is saved as a float)
            problems.append(f"its learning_rate is {trained['learning_rate']}, this estimator's {self.learning_rate}")
        if trained["algorithm"] != self.algorithm:
            problems.append(f"its algorithm is {trained['algorithm']!r}, this estimator's {self.algorithm!r}")
        trained_class_weight = trained.get("class_weight", init.class_weight)
        if not _validation.same_class_weight(trained_class_weight, self.class_weight):
            problems.append(f"its class_weight is {trained_class_weight!r}, this estimator's {self.class_weight!r}")
        fraction, seed = trained.get("validation_fraction", init.validation_fraction), trained.get("random_state",
                                                                                                  init.random_state)
        if (None if fraction is None else float(fraction)) != (
                None if self.validation_fraction is None else float(self.validation_fraction)):
            problems.append(f"its validation_fraction is {fraction}, this estimator's {self.validation_fraction}")
        elif fraction is not None and seed is None:
            problems.append("its validation_fraction's rows were drawn with a random_state that was not an int, and "
                            "cannot be drawn again: fit a new model")
        elif fraction is not None and seed != self.random_state:
            problems.append(f"it held out validation_fraction's rows with random_state={seed!r}, this estimator's is "
                            f"{self.random_state!r}")
        if init._bin_mapper.max_bins != self.max_bins:  # (a continuation keeps the model's binning)
            problems.append(f"its max_bins is {init._bin_mapper.max_bins}, this estimator's {self.max_bins}")
        if len(init.train_loss_) > self.n_estimators:
            problems.append(f"it has {len(init.train_loss_)} iterations already, more than n_estimators={self.n_estimators}")
        if problems:
            raise ValueError("cannot continue training the given model: " + "; ".join(problems) + ".")

    def _feature_name_problems(self, init) -> list:
        """How X's feature names differ from those ``init`` was fitted with, as scikit-learn's
        ``predict`` checks them: other names are a problem; names on one side only, a warning."""
        fitted = getattr(init, "feature_names_in_", None)
        given = getattr(self, "feature_names_in_", None)
        if fitted is None or given is None:
            if fitted is not None:
                warnings.warn("X does not have valid feature names, but the model to continue was fitted with "
                              "feature names", UserWarning, stacklevel=5)
            elif given is not None:
                warnings.warn("X has feature names, but the model to continue was fitted without feature names",
                              UserWarning, stacklevel=5)
            return []
        if np.array_equal(fitted, given):
            return []

        def some(names):  # the first five
            return str([str(name) for name in names[:5]])[:-1] + (", ...]" if len(names) > 5 else "]")

        unseen = sorted(set(given) - set(fitted))
        missing = sorted(set(fitted) - set(given))
        if not unseen and not missing:
            return [f"X's feature names are the ones it was fitted with, in another order (X: {some(list(given))}, "
                    f"fitted: {some(list(fitted))})"]
        return ["X's feature names are not the ones it was fitted with ("
                + "; ".join([f"unseen at fit time: {some(unseen)}"] * bool(unseen)
                            + [f"seen at fit time, yet now missing: {some(missing)}"] * bool(missing)) + ")"]

    def _validation_split(self, y_codes, n_rows: int, weight):
        """(training rows, held-out rows) for ``validation_fraction``, both sorted.

        Only rows of positive weight are held out (rows of weight 0 stay with the training rows,
        which leave them out). round(fraction x those rows) are held out, shared among the
        classes (single-label y) in proportion to their rows of positive weight: each class its
        share rounded down, then one more to the classes with the largest remainders (the first
        classes among equal ones), and so on while rows are left to hold out; every class keeps
        one such row at least (so fewer are held out where only that stops it). Each class's
        rows are drawn with ``random_state``.
        """
        rng = check_random_state(self.random_state)  # (a continuation's: checked to be the first fit's int)
        rows = np.arange(n_rows) if weight is None else np.flatnonzero(weight > 0)
        if y_codes is None:
            groups = [rows]
        else:  # each class's rows of positive weight, in row order
            codes = y_codes[rows]
            groups = np.split(rows[np.argsort(codes, kind="stable")],
                              np.cumsum(np.bincount(codes, minlength=len(self.classes_)))[:-1])
        sizes = np.array([group.size for group in groups])
        room = np.maximum(sizes - 1, 0)  # every class keeps one row
        share = float(self.validation_fraction) * sizes
        counts = np.minimum(np.floor(share).astype(np.int64), room)
        left = int(np.floor(float(self.validation_fraction) * rows.size + 0.5)) - int(counts.sum())
        order = np.argsort(-(share - np.floor(share)), kind="stable")  # largest remainders first
        while left > 0:  # one more row each, in that order, to the classes with room for it
            open_ = order[counts[order] < room[order]][:left]
            if open_.size == 0:
                break
            counts[open_] += 1
            left -= open_.size
        held = np.sort(np.concatenate([rng.permutation(group)[:count] for group, count in zip(groups, counts)]))
        if held.size == 0:
            if not room.any():  # (no fraction could hold one out)
                kept = ("every class has one row (of positive weight) at most, which training keeps"
                        if y_codes is not None else "training keeps the one row (of positive weight)")
                raise ValueError(f"validation_fraction={self.validation_fraction} holds out no row: {kept}; give more "
                                 "rows, or pass eval_set.")
            raise ValueError(f"validation_fraction={self.validation_fraction} of {rows.size} rows (of positive weight) "
                             "holds out no row; give a larger fraction or more rows, or pass eval_set.")
        return np.setdiff1d(np.arange(n_rows), held, assume_unique=True), held

    def _held_out_set(self, X, y, weight) -> EvalSet:
        """The eval set of the rows ``validation_fraction`` held out (X checked, y as fit encoded
        it: class codes, or the indicator matrix; their weights, or None), its loss weighted."""
        if self.multilabel_:
            return self._multilabel_eval_set(X, y.astype(np.int8), weight)
        return EvalSet(self._bin_mapper.transform(X, self._n_threads()), y, weight)

    def _eval_set(self, X, y, weight=None, index: int = 0) -> EvalSet:
        try:
            return self._checked_eval_set(X, y, weight, index)
        except (TypeError, ValueError) as exc:  # say that it is about the eval set, not the training data
            if str(exc).startswith("eval_") or type(exc) not in (TypeError, ValueError):
                raise
            raise type(exc)(f"eval_set: {exc}") from None

    def _checked_eval_set(self, X, y, weight, index) -> EvalSet:
        X = self._check_X(X, reset=False)
        kept = None  # the rows of positive weight, where some have weight 0
        if weight is not None:
            try:
                weight = _validation.check_weight(weight, X.shape[0])
            except ValueError as exc:
                raise ValueError(f"eval_sample_weight[{index}]: {exc}") from None
            if not np.all(weight > 0):  # (rows of weight 0 count neither in the loss nor in the errors)
                kept = weight > 0
                weight = weight[kept]
        if self.multilabel_:
            return self._multilabel_eval_set(X, y, weight, kept)
        y = _validation._labels_1d(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"eval_set: X has {X.shape[0]} rows but y has {y.shape[0]}.")
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise ValueError(f"eval_set: labels {unknown[:5].tolist()} do not occur in the training y.")
        if kept is not None:
            X, y = X[kept], y[kept]
        return EvalSet(self._bin_mapper.transform(X, self._n_threads()), np.searchsorted(self.classes_, y), weight)

    def _multilabel_eval_set(self, X, y, weight=None, kept=None) -> EvalSet:
        """An eval set of a multi-label model: its loss is the log loss of ``predict_proba``'s
        probability model (weighted by ``weight``, one per row kept, where given), its errors
        the wrong (row, label) entries of ``predict``; ``kept``: the rows kept, or None (all)."""
        n_labels = len(self.classes_)
        expected = f"eval_set: this model is multi-label ({n_labels} labels): y must be an (n_samples, {n_labels}) " \
                   "indicator matrix of 0 and 1"
        y = _validation.host_labels(y)
        if getattr(y, "ndim", np.ndim(y)) != 2:
            raise ValueError(f"{expected}, got shape {np.shape(y)}.")
        Y = _validation.label_indicator(y, self.algorithm) if np.shape(y)[1] >= 2 else None
        if Y is None or Y.shape[1] != n_labels:
            raise ValueError(f"{expected}, got shape {np.shape(y)}.")
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"eval_set: X has {X.shape[0]} rows but y has {Y.shape[0]}.")
        if kept is not None:
            X, Y = X[kept], Y[kept]
        scale = self._label_logit_scale()
        if scale is not None:  # the labels' binary log losses of predict_proba's p = 1 / (1 + exp(-scale F))
            def loss(F):
                return losses.logistic_link(scale * F, Y, weight)[4]
        else:  # paper 004's loss; a row without labels has no target (as in training)
            eta = losses.label_targets(Y)

            def loss(F):
                return losses.multilabel_loss(F, eta, weight)[2]

        def evaluate(F):
            return loss(F), int(np.count_nonzero(self._as_prediction(F) != Y))

        return EvalSet(self._bin_mapper.transform(X, self._n_threads()), np.argmax(Y, axis=1), evaluate=evaluate)

    def _sampling_seed(self) -> int:
        """The seed of subsample's and colsample_bytree's draws (boosting.row_sample and
        feature_sample): an int random_state itself, else drawn from it (None: NumPy's global
        generator, as scikit-learn's estimators do)."""
        if self.subsample >= 1 and self.colsample_bytree >= 1:
            return 0
        if isinstance(self.random_state, numbers.Integral):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(2 ** 32, dtype=np.uint64))

    def feature_importance(self, importance_type: str = "gain") -> np.ndarray:
        """Per-feature importance, shape (n_features_in_,).

        ``"gain"``: the total split gain (eq 30, or the algorithm's gain) of the splits on the
        feature; ``"split"``: how many splits use it. Not normalised.
        """
        check_is_fitted(self, "trees_")
        if importance_type not in ("gain", "split"):
            raise ValueError(f"importance_type must be 'gain' or 'split', got {importance_type!r}.")
        importance = np.zeros(self.n_features_in_)
        for tree in self.trees_:
            inner = tree.feature >= 0
            weights = tree.gain[inner] if importance_type == "gain" else np.ones(int(inner.sum()))
            np.add.at(importance, tree.feature[inner], weights)
        return importance

    @property
    def feature_importances_(self) -> np.ndarray:
        """Total split gain per feature, normalised to sum to 1 (scikit-learn's convention)."""
        importance = self.feature_importance("gain")
        total = importance.sum()
        return importance / total if total > 0 else importance

    def predict_contributions(self, X) -> np.ndarray:
        """Each feature's contribution to each row's scores: SHAP values by TreeSHAP (as LightGBM's
        ``pred_contrib``; XGBoost's ``pred_contribs`` weights by Hessian sums where these weight
        by rows), computed on the CPU.

        Returns
        -------
        ndarray of shape (n_samples, n_classes, n_features_in_ + 1), float64 (multi-label:
        n_labels for n_classes). ``[:, k, j]`` is feature j's contribution to class k's score F_k,
        ``[:, k, -1]`` the bias (the sum of each tree's average over the rows it was grown on,
        the same for every row); summed over the last axis they give the scores F of every class
        (to rounding). For two classes ``decision_function`` is ``F_1 - F_0``: its contributions
        are ``[:, 1] - [:, 0]``. A feature's value is what the trees saw: a feature its trees
        never split on contributes 0, and a missing value is where its split sends it.
        See ``gpuboost.contributions`` for the definition.
        """
        from .contributions import contributions

        check_is_fitted(self, "trees_")
        codes = self._bin_mapper.transform(self._check_X(X, reset=False), self._n_threads())
        return contributions(list(self.trees_), codes, self._bin_mapper.missing_bin, len(self.classes_),
                             float(self._fitted("learning_rate")), self._n_threads())

    def _fitted(self, name: str):
        """The algorithm or learning rate the trees were trained with (``set_params`` after a
        fit changes the parameter, not the model)."""
        return getattr(self, "_trained_with", {}).get(name, getattr(self, name))

    def _truncate(self, n_iterations: int) -> None:
        """Keep the first ``n_iterations`` iterations' trees (early stopping's best model)."""
        per = trees_per_iteration(self._fitted("algorithm"), len(self.classes_))
        self.trees_ = self.trees_[: n_iterations * per]
        self.train_loss_ = self.train_loss_[:n_iterations]
        self.eval_loss_ = [v[:n_iterations] for v in self.eval_loss_]
        self.eval_error_ = [v[:n_iterations] for v in self.eval_error_]
        if hasattr(self, "train_hamming_loss_"):
            self.train_hamming_loss_ = self.train_hamming_loss_[:n_iterations]

    @property
    def n_estimators_(self) -> int:
        check_is_fitted(self, "trees_")
        return len(self.train_loss_)

    @property
    def n_trees_(self) -> int:
        check_is_fitted(self, "trees_")
        return len(self.trees_)

    # -- predict -------------------------------------------------------------------------
    def _codes(self, X) -> np.ndarray:
        """Bin codes of X: on the GPU (CuPy) for a GPU input where prediction runs on the GPU."""
        check_is_fitted(self, "trees_")
        if _validation.on_gpu(X) and prediction_device(self.device_) == "cuda":
            return self._bin_mapper.transform(_validation.check_X_device(self, X, reset=False))
        return self._bin_mapper.transform(self._check_X(X, reset=False), self._n_threads())

    def _scores(self, X) -> np.ndarray:
        """Scores F, shape (n_samples, n_classes), float64 (decision_function's, before the
        two-class case's difference)."""
        codes = self._codes(X)
        F = np.zeros((codes.shape[0], len(self.classes_)))
        backend = backend_class(prediction_device(self.device_))
        learning_rate = float(self._fitted("learning_rate"))
        if hasattr(backend, "add_packed") and self.trees_:
            packed = self._packed_trees(backend, learning_rate)
            with self._prediction_threads(backend)():
                backend.add_packed(F, packed, codes, self._bin_mapper.missing_bin)
        else:
            backend.add_trees(F, self.trees_, codes, self._bin_mapper.missing_bin, learning_rate)
        return F

    def _prediction_threads(self, backend):
        """A function that returns a context in which the compiled CPU backend predicts on
        n_jobs's threads (as fit and contributions run); the caller's numba thread count after.
        Other backends use no numba threads. (The count is found once: the staged methods enter
        the context at every stage.)"""
        if not hasattr(backend, "add_packed"):
            return contextlib.nullcontext
        import numba

        from .backends.cpu import _threads

        n = max(1, min(self._n_threads(), numba.config.NUMBA_NUM_THREADS))
        return lambda: _threads(n)

    def _packed_trees(self, backend, learning_rate):
        """trees_ packed for backend.add_packed, made at the first prediction and kept while
        trees_ holds the same trees (checked one by one: a continued fit, a truncation or a
        replaced tree packs again; a tree's arrays are read-only, so the same tree has the same
        nodes). Kept beside the estimator, not in it: predicting does not change the
        estimator, and neither pickles nor clones carry it. An estimator that cannot be a weak
        dictionary's key (a subclass without a hash) packs at every prediction."""
        key = (backend, len(self.classes_), learning_rate)
        try:
            with _PACKED_LOCK:
                kept = _PACKED.get(self)
        except TypeError:  # not hashable or not weakly referable
            return backend.pack_trees(list(self.trees_), len(self.classes_), learning_rate)
        if (kept is not None and kept[0] == key and len(kept[1]) == len(self.trees_)
                and all(map(operator.is_, kept[1], self.trees_))):  # (1.8x a generator's speed: 4000 trees 0.14 ms)
            return kept[2]
        trees = tuple(self.trees_)
        packed = backend.pack_trees(list(trees), len(self.classes_), learning_rate)
        with _PACKED_LOCK:
            _PACKED[self] = (key, trees, packed)
        return packed

    def _staged_scores(self, X):
        codes = self._codes(X)
        F = np.zeros((codes.shape[0], len(self.classes_)))
        backend = backend_class(prediction_device(self.device_))
        step = trees_per_iteration(self._fitted("algorithm"), len(self.classes_))
        threads = self._prediction_threads(backend)
        for start in range(0, len(self.trees_), step):
            with threads():  # (not across the yield: the caller's code runs there)
                backend.add_trees(F, self.trees_[start:start + step], codes, self._bin_mapper.missing_bin,
                                  float(self._fitted("learning_rate")))
            yield F.copy()

    # the scores' meaning, one rule each for the staged and non-staged methods
    def _as_decision(self, F: np.ndarray) -> np.ndarray:
        # scikit-learn's convention: one column for two classes (the log-odds of classes_[1]);
        # two labels of a multi-label model are two scores
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 and not getattr(self, "multilabel_", False) else F

    def _label_logit_scale(self) -> float | None:
        """Multi-label models that score each label on its own: predict_proba is
        1 / (1 + exp(-scale F)) per label, scale 2 for AdaBoost.MH (its exponential loss's
        logistic link), 1 for K-LogitBoost (its logistic model); None for the others."""
        if not getattr(self, "multilabel_", False):
            return None
        return {"adaboostmh": 2.0, "klogitboost": 1.0}.get(self._fitted("algorithm"))

    def _as_proba(self, F: np.ndarray) -> np.ndarray:
        scale = self._label_logit_scale()
        if scale is not None:
            # 1 / (1 + exp(-scale F)) without overflow, and to full precision below 1/2 (where
            # 0.5 (1 + tanh(scale F / 2)) lost every digit: exactly 0 from scale F <= -38)
            return expit(scale * F)
        return softmax_probabilities(F)

    def _as_prediction(self, F: np.ndarray) -> np.ndarray:
        if getattr(self, "multilabel_", False):
            if self._label_logit_scale() is not None:  # the sign rule: p > 1/2
                labels = F > 0
            else:  # p estimates eta = 1/|S|: the labels within half of the row's largest p
                p = softmax_probabilities(F)
                labels = p >= 0.5 * p.max(axis=1, keepdims=True)
            if not getattr(self, "empty_label_sets_", False):  # no training row was without a label
                labels[np.arange(F.shape[0]), predicted_class(F)] = True
            return labels.astype(np.int64)
        return self.classes_[predicted_class(F)]

    def decision_function(self, X) -> np.ndarray:
        """The model's scores F.

        Returns
        -------
        ndarray of shape (n_samples, n_classes), float64 (``predict_proba`` is their softmax, but
        for multi-label AdaBoost.MH and K-LogitBoost: see ``predict_proba``; the
        rows of AOSO, LogitBoost and the ABC algorithms sum to ~0); for two classes,
        as scikit-learn does, shape (n_samples,): ``F[:, 1] - F[:, 0]``, the log-odds of
        ``classes_[1]``. Multi-label models: shape (n_samples, n_labels), whatever the number
        of labels (each label has its own score).
        """
        return self._as_decision(self._scores(X))

    def staged_decision_function(self, X):
        """Yield ``decision_function`` after each iteration."""
        for F in self._staged_scores(X):
            yield self._as_decision(F)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (softmax of the scores), shape (n_samples, n_classes).

        Multi-label models (fitted on an indicator matrix), shape (n_samples, n_labels):
        AdaBoost.MH's per-label scores ``1 / (1 + exp(-2 f_l))`` in [0, 1] (the exponential
        loss's logistic link; they do not sum to 1); K-LogitBoost's per-label probabilities
        ``1 / (1 + exp(-F_l))`` (each label its own logistic model); the softmax of AOSO, MART
        and robust LogitBoost, which estimates paper 004's targets eta = 1/|S_i|.
        """
        return self._as_proba(self._scores(X))

    def staged_predict_proba(self, X):
        """Yield ``predict_proba`` after each iteration."""
        for F in self._staged_scores(X):
            yield self._as_proba(F)

    def predict(self, X) -> np.ndarray:
        """Most probable class of each row (ties, to 1e-12 of the scores: the first class in
        ``classes_``).

        Multi-label models: an indicator matrix (n_samples, n_labels): AdaBoost.MH's and
        K-LogitBoost's labels whose score is positive (AdaBoost.MH's sign rule; for
        K-LogitBoost, probability above 1/2); the softmax family's labels whose probability
        is at least half the row's largest (p estimates eta = 1/|S_i|, so the top-ranked label
        is always in); and at least the top-ranked label of each row where the training y had
        no row without labels (``empty_label_sets_`` False), else the labels as they come (an
        AdaBoost.MH or K-LogitBoost row may then have none).
        """
        return self._as_prediction(self._scores(X))

    def staged_predict(self, X):
        """Yield ``predict`` after each iteration."""
        for F in self._staged_scores(X):
            yield self._as_prediction(F)

    # -- model files ---------------------------------------------------------------------
    def save_model(self, path) -> None:
        """Write the fitted model to ``path`` as JSON (format: ``docs/model-format.md``)."""
        from .io import save_model

        save_model(self, path)

    def load_model(self, path) -> "BoostClassifier":
        """Replace this estimator's parameters and fitted state by those of a model file."""
        from .io import load_into

        load_into(self, path)
        return self

    def __sklearn_tags__(self):
        from ._validation import MULTILABEL_ALGORITHMS

        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True  # densified on input: an absent entry is the value 0
        # fit(X, Y) with an indicator matrix Y, where the algorithm has a multi-label form
        tags.classifier_tags.multi_label = getattr(self, "algorithm", None) in MULTILABEL_ALGORITHMS
        return tags
