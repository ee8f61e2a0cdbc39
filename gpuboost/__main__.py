"""The command line: ``gpuboost`` (installed) or ``python -m gpuboost``.

    gpuboost train DATA -o MODEL [--algorithm aoso] [--n-estimators 1000] [--eval DATA] ...
    gpuboost predict MODEL DATA [--proba | --contributions] [-o OUT.csv]
    gpuboost evaluate MODEL DATA
    gpuboost plot MODEL [MODEL ...] -o curve.png [--importance gain]
    gpuboost bench cpu|reproduce|klogit [ARGS]   # the benchmark scripts, from a source checkout
    gpuboost demo                       # generated poker hands, no download

DATA is a LibSVM/SVMlight text file, a CSV file with a label column, or an .npz file (see
``gpuboost.datasets.load_data``): ``train`` reads an .npz file's X_train and y_train, ``--eval``
and ``evaluate`` its X_test and y_test, ``predict`` its X_test (``--split``, ``--eval-split``).
``predict`` reads no label from a LibSVM or .npz file (a CSV file's label column is dropped, or,
with ``--unlabelled`` or as many columns as the model has features, it has none). A model
trained on a LibSVM file keeps the base (0 or 1) its feature indices were read with, and
``predict`` and ``evaluate`` read LibSVM files with it.
Multi-label data (a LibSVM file with label sets, ``0,3 1:0.5 ...``, or an .npz file with an
indicator matrix Y) trains a multi-label model; ``evaluate`` then reports the Hamming loss,
one-error, coverage and average precision, and ``predict`` writes a 0/1 column per label. Every
estimator parameter except ``callbacks`` and ``warm_start`` is a flag of
``train``. Exit status: 0 on success, 1 when the input or a file is wrong (the message says
what), 2 for a command-line usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings

import numpy as np

#: estimator parameters that are not command-line flags (objects, not values)
_NOT_FLAGS = {"callbacks", "warm_start"}
#: flag types of the parameters whose default is None
_NONE_TYPES = {"n_jobs": int, "early_stopping_rounds": int, "class_weight": str, "validation_fraction": float,
               "random_state": int, "max_depth": int}
#: the values a flag takes where not every value of its type is allowed (the command line has
#: no syntax for class_weight's dicts): listed in --help, and a usage error (exit 2) otherwise
_CHOICES = {"class_weight": ["balanced"]}


def _choices(name):
    from ._device import DEVICES
    from .algorithms import ALGORITHMS
    from .losses import PAIR_RULES

    return {**_CHOICES, "algorithm": list(ALGORITHMS), "device": list(DEVICES), "pair_rule": list(PAIR_RULES)}.get(name)


def _add_estimator_flags(parser) -> None:
    from . import BoostClassifier

    for name, default in BoostClassifier().get_params().items():
        if name in _NOT_FLAGS:
            continue
        kind = _NONE_TYPES.get(name, type(default))
        parser.add_argument(f"--{name.replace('_', '-')}", type=kind, default=default, dest=name,
                            choices=_choices(name), help=f"(default: {default})")


def _load(path, label_column, split, n_features=None, zero_based="auto", n_labels=None, names=None, classes=None):
    """(X, y, zero_based, names): a LibSVM file read with n_features columns and n_labels labels
    (a model's, or the training file's) and the base the file was read with, for the files read
    with it ("auto" if none); an .npz file's split ("train": X_train and y_train); names, a CSV
    file's header's feature columns (None for other files, and a CSV file without a header).
    names and classes: the feature names (None: none) and classes (None: multi-label) of the
    model or training file a CSV file is read against (datasets._load_csv: they tell its
    header, and read its labels as the classes' type)."""
    from .datasets import _load_csv, _load_data

    if _is_csv(path):
        X, y, names = _load_csv(path, label_column, names=names, classes=classes)
        return X, y, "auto", names
    return (*_load_data(path, label_column=label_column, split=split, n_features=n_features, zero_based=zero_based,
                        n_labels=n_labels), None)


def _n_labels(y):
    """A multi-label y's number of labels (an indicator matrix's columns), else None."""
    return y.shape[1] if np.ndim(y) == 2 and np.shape(y)[1] > 1 else None


def _at_least(low: int):
    """An argparse type: an integer of at least low (argparse names the flag in its message)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer of at least {low}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def _is_stdout(path) -> bool:
    """Whether path is this process's standard output (-o /dev/stdout, or a path to what stdout
    was redirected to)."""
    try:
        here, out = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):  # (no such path yet; a stdout without a descriptor)
        return False
    return (here.st_dev, here.st_ino) == (out.st_dev, out.st_ino)


def _train(args) -> int:
    """train; where the model goes to standard output (-o /dev/stdout), what it says (and what
    the fit prints: compilation, progress lines) goes to standard error, so that the output is
    the model file alone."""
    if _is_stdout(args.output):
        with contextlib.redirect_stdout(sys.stderr):
            return _train_and_save(args)
    return _train_and_save(args)


def _train_and_save(args) -> int:
    from . import BoostClassifier
    from .io import check_writable

    check_writable(args.output)  # a missing folder fails now, not after the training
    _check_output(args.output, args.data, args.eval)
    X, y, zero_based, names = _load(args.data, args.label_column, args.split)
    params = {name: getattr(args, name) for name in BoostClassifier().get_params() if name not in _NOT_FLAGS}
    eval_set = None
    if args.eval:
        # the training file's width and base: a test file's rows may lack the last features, and
        # one that happens not to use feature 0 of a 0-based training set is still read 0-based
        X_eval, y_eval, _, eval_names = _load(args.eval, args.label_column, args.eval_split, n_features=X.shape[1],
                                              zero_based=zero_based, n_labels=_n_labels(y), names=names,
                                              classes=None if _n_labels(y) else np.unique(y).tolist())
        eval_set = [(_named_columns(names, X_eval, eval_names, args.eval), y_eval)]
    model = BoostClassifier(**params)
    # the labels checked as fit checks them before the summary counts them (a NaN was a class,
    # a 2-D y of other values than 0 and 1 "labels"): a bad y is fit's error, told before anything
    from . import _validation

    with warnings.catch_warnings():  # (fit gives them: a column of labels' warning once)
        warnings.simplefilter("ignore")
        if _validation.label_indicator(y, params["algorithm"]) is None:
            kind = f"{len(_validation.encode_labels(y)[0])} classes"
        else:
            kind = f"{y.shape[1]} labels (multi-label)"
    print(f"training {params['algorithm']} on {args.data}: {X.shape[0]} rows, {X.shape[1]} features, {kind}",
          flush=True)
    if names is not None:  # (a guess where the file does not say: shown, so that a data row taken for one is seen)
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        print(f"{args.data}: line 1 read as the header, features named {shown} (if it is a row of data, add a "
              "header line of column names to the file)", flush=True)
    started = time.perf_counter()
    model.fit(X, y, eval_set=eval_set)
    seconds = time.perf_counter() - started
    if names is not None:  # a CSV header: the model keeps its feature names (predict matches columns by them)
        model.feature_names_in_ = np.asarray(names, dtype=object)
    if zero_based != "auto":
        # the base the training file was read with (a guess where it has no index 0: 1-based), so that predict
        # and evaluate read LibSVM files as it was read; set after fit, which clears fitted attributes
        model.libsvm_zero_based_ = zero_based
    model.save_model(args.output)
    if model.n_estimators_:
        line = (f"{model.n_estimators_} iterations, {model.n_trees_} trees in {seconds:.1f} s; "
                f"training loss {model.train_loss_[-1]:.6g}")
    else:  # stopped before the first tree: the model predicts from its initial scores alone
        line = f"0 iterations, no tree added in {seconds:.1f} s; training loss {model.initial_loss_:.6g}"
        if model.initial_loss_ <= model.tol:
            line += f", already at or below tol={model.tol:g}"
    if eval_set:
        X_eval, y_eval = eval_set[0]
        errors = model.eval_error_[0][-1] if model.n_estimators_ else int(np.sum(model.predict(X_eval) != y_eval))
        if model.multilabel_:
            line += f"; {args.eval}: {errors} of {y_eval.size} (row, label) entries wrong"
        else:
            line += f"; {args.eval}: {errors} errors of {len(y_eval)}"
    print(line)
    print(f"model saved to {args.output}")
    return 0


def _predict(args) -> int:
    import csv
    import io

    from . import load_model
    from .datasets import _csv_features, _load_csv, load_features

    if args.output:  # (a folder that is missing or read-only fails now, not after the predictions)
        from .io import check_writable

        check_writable(args.output, "the predictions")
        _check_output(args.output, args.model, args.data)
    model = load_model(args.model)
    names = None  # a CSV header's feature names
    if not _is_csv(args.data):  # LibSVM and .npz: X alone; a label is neither needed nor read
        X = load_features(args.data, split=args.split, n_features=model.n_features_in_, zero_based=_base(model))
    elif args.unlabelled:
        X, names = _csv_features(args.data, getattr(model, "feature_names_in_", None))
    else:
        # (its labels unread: they may be empty; a file of the model's width has none)
        X, _, names = _load_csv(args.data, args.label_column, labelled=False, n_features=model.n_features_in_,
                                names=getattr(model, "feature_names_in_", None),
                                classes=_model_classes(model))
    X = _named_columns(getattr(model, "feature_names_in_", None), X, names, args.data)
    # the whole output first, then written at once: a failure leaves an existing file as it was
    out = io.StringIO()
    # the csv module quotes a label holding a comma or a quote; "\n" ends lines, as print does
    writer = csv.writer(out, lineterminator="\n")
    if args.contributions:  # class by class: a column per feature, then the class's bias (predict_contributions)
        phi = model.predict_contributions(X)
        features = [str(f) for f in getattr(model, "feature_names_in_", [f"f{j}" for j in range(X.shape[1])])]
        bias = "bias"
        while bias in features:  # a feature of that name keeps it: the bias column takes another
            bias = f"_{bias}_"
        writer.writerow([f"{c}:{f}" for c in model.classes_ for f in features + [bias]])
        writer.writerows([repr(float(v)) for v in row] for row in phi.reshape(len(phi), -1))
    elif args.proba:
        proba = model.predict_proba(X)
        writer.writerow([str(c) for c in model.classes_])
        writer.writerows([repr(float(v)) for v in row] for row in proba)
    elif model.multilabel_:  # the indicator matrix: a 0/1 column per label id
        writer.writerow([str(c) for c in model.classes_])
        writer.writerows([str(int(v)) for v in row] for row in model.predict(X))
    else:
        writer.writerow(["label"])
        writer.writerows([str(label)] for label in model.predict(X))
    if args.output:
        from .io import write_text_atomically  # (replaced whole or not at all; checked before: check_writable)

        write_text_atomically(args.output, out.getvalue())
    else:
        sys.stdout.write(out.getvalue())
    return 0


def _named_columns(fitted, X, names, path):
    """X's columns in the order of the model's feature names fitted, where the model and the file
    both name them (a model trained on a CSV file with a header, a CSV file with one): the same
    names in another order are put in the model's, other names are an error; else X as it is
    (by position). fitted: model.feature_names_in_ (None: none)."""
    if fitted is None or names is None:
        return X
    fitted = [str(name) for name in fitted]
    if names == fitted:
        return X
    if sorted(names) == sorted(fitted) and len(set(names)) == len(names):
        return X[:, [names.index(name) for name in fitted]]
    missing = [name for name in fitted if name not in names]
    unknown = [name for name in names if name not in fitted]
    raise ValueError(f"{path}: its columns are not the model's features: missing {missing[:5]}, not in the model "
                     f"{unknown[:5]} (the model's: {fitted[:8]}{' ...' if len(fitted) > 8 else ''}).")


def _is_csv(path) -> bool:
    import os

    return os.path.splitext(os.fspath(path))[1].lower() == ".csv"


def _base(model):
    """The base the model's training LibSVM file was read with ("auto" for a model trained on
    other data, or saved before models kept it)."""
    return getattr(model, "libsvm_zero_based_", "auto")


def _check_output(output, *inputs) -> None:
    """-o must not name a file the command reads (the training data, the model): it would be
    replaced by what was made from it."""
    import os

    if not output or not os.path.exists(output):
        return
    for path in inputs:
        if path and os.path.exists(path) and os.path.samefile(output, path):
            raise ValueError(f"-o {output} is the input file {path}: writing there would replace it; give another "
                             "output file.")


def _evaluate(args) -> int:
    from sklearn.metrics import confusion_matrix, log_loss

    from . import load_model
    from .functional import _codes, _indicator

    model = load_model(args.model)
    X, y, _, names = _load(args.data, args.label_column, args.split, n_features=model.n_features_in_,
                           zero_based=_base(model), n_labels=_model_labels(model),
                           names=getattr(model, "feature_names_in_", None),
                           classes=_model_classes(model))
    X = _named_columns(getattr(model, "feature_names_in_", None), X, names, args.data)
    if y is not None and np.shape(y)[0] != X.shape[0]:
        raise ValueError(f"{args.data}: X has {X.shape[0]} rows but y has {np.shape(y)[0]} labels; give one label "
                         "per row.")
    if model.multilabel_:
        try:
            y = _indicator(y, model)
        except ValueError as exc:
            raise ValueError(f"{args.data}: {exc}") from None
        return _evaluate_label_sets(args.data, model, X, y)
    if np.ndim(y) == 2 and np.shape(y)[1] > 1:
        raise ValueError(f"{args.data} holds label sets (multi-label data, {np.shape(y)[1]} labels), but {args.model} "
                         f"is a single-label model ({len(model.classes_)} classes): evaluate it on data with one label "
                         "per row, or train a multi-label model on this data.")
    y = np.asarray(y).reshape(-1)
    _codes(y, model, name=str(args.data))  # every label one the model knows, else an error that names them
    predicted = model.predict(X)
    errors = int(np.sum(predicted != y))
    print(f"{args.data}: {len(y)} rows; {errors} errors ({100 * errors / len(y):.2f}%), "
          f"accuracy {1 - errors / len(y):.4f}")
    print(f"log loss {log_loss(y, model.predict_proba(X), labels=model.classes_):.6g}")
    matrix = confusion_matrix(y, predicted, labels=model.classes_)
    width = max(6, max(len(str(c)) for c in model.classes_) + 1)
    print("confusion matrix (rows: true class, columns: predicted)")
    print(" " * width + "".join(f"{str(c):>{width}}" for c in model.classes_))
    for c, row in zip(model.classes_, matrix):
        print(f"{str(c):>{width}}" + "".join(f"{v:>{width}d}" for v in row))
    return 0


def _model_classes(model):
    """A single-label model's classes as a list (a CSV file's labels are read against them),
    else None."""
    return None if model.multilabel_ else model.classes_.tolist()


def _model_labels(model):
    """A multi-label model's number of labels (its files are read as indicator matrices of
    them), else None."""
    return len(model.classes_) if getattr(model, "multilabel_", False) else None


def _evaluate_label_sets(path, model, X, Y) -> int:
    from . import metrics

    scores = model.decision_function(X)
    predicted = model.predict(X)
    wrong = int(np.sum(predicted != Y))
    print(f"{path}: {len(Y)} rows, {Y.shape[1]} labels (multi-label); Hamming loss {wrong / Y.size:.4f} "
          f"({wrong} of {Y.size} (row, label) entries wrong)")
    print(f"one-error {metrics.one_error(Y, scores):.4f}, coverage {metrics.coverage(Y, scores):.4f} (from 0), "
          f"average precision {metrics.average_precision(Y, scores):.4f}")
    return 0


def _plot(args) -> int:
    try:
        import matplotlib
    except ImportError:
        raise ImportError('gpuboost plot needs matplotlib: pip install "gpuboost[plot]" (or matplotlib)') from None
    matplotlib.use("Agg")
    import os

    from . import load_model
    from .plotting import plot_importance, plot_training_curves

    from .io import check_writable, write_text_atomically

    check_writable(args.output, "the plot")
    _check_output(args.output, *args.models)
    models = [load_model(path) for path in args.models]
    if args.importance:
        ax = plot_importance(models[0], importance_type=args.importance)
        figure = ax.figure
    else:
        axes = plot_training_curves(models, labels=args.labels or [str(p) for p in args.models])
        figure = axes[0].figure
    figure.tight_layout()
    # a name without an extension is written as PNG under that very name (matplotlib would add ".png")
    import io

    image = io.BytesIO()  # (written whole or not at all, as models and predictions are)
    figure.savefig(image, dpi=110, format=os.path.splitext(args.output)[1][1:].lower() or "png")
    write_text_atomically(args.output, image.getvalue())
    print(f"plot saved to {args.output}")
    return 0


BENCH_SCRIPTS = {"cpu": "bench_cpu.py", "reproduce": "reproduce.py", "klogit": "klogit_vs_aoso.py"}


def _bench(args) -> int:
    """Run a script of the source tree's benchmarks/ folder with the remaining arguments."""
    import runpy
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    script = folder / BENCH_SCRIPTS[args.script]
    if not script.exists():
        raise OSError(f"{script} is not there: the benchmarks ship with the source tree, not the "
                      "installed package; run gpuboost bench from a checkout (pip install -e .).")
    sys.argv = [str(script), *args.args]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:  # the script's own exit: argparse's status, or its message
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            return 1
        return int(exc.code or 0)
    return 0


def _demo(args) -> int:
    from sklearn.base import clone

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
    if args.n_estimators >= 1:
        # a machine's first fit compiles the kernels (numba caches them): a small fit first, so
        # that the time below is training alone
        print("preparing the kernels (compiled on a machine's first run, 2 to 3 minutes on 2 cores; cached for later "
              "runs) ...", flush=True)
        started = time.perf_counter()
        clone(model).set_params(n_estimators=2, verbose=0).fit(X_train[:500], y_train[:500])
        print(f"kernels ready in {time.perf_counter() - started:.1f} s", flush=True)
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
    parser = argparse.ArgumentParser(prog="gpuboost", description="Multi-class boosting (AOSO-LogitBoost and family).")
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="train a model on a data file and save it")
    train.add_argument("data", help="training data: .libsvm/.svm/.txt, .csv or .npz")
    train.add_argument("-o", "--output", required=True, help="model file to write (JSON)")
    train.add_argument("--eval", help="a labelled data file to report test errors on after every iteration")
    train.add_argument("--split", default="train", help=".npz DATA: the arrays X_SPLIT, y_SPLIT (default: train)")
    train.add_argument("--eval-split", default="test", help=".npz --eval file: its split (default: test)")
    train.add_argument("--label-column", help="CSV: the label column's name or index (default: label/class/target/y, else the last)")
    _add_estimator_flags(train)

    predict = commands.add_parser("predict", help="predict labels or probabilities for a data file, as CSV")
    predict.add_argument("model")
    predict.add_argument("data")
    shown = predict.add_mutually_exclusive_group()
    shown.add_argument("--proba", action="store_true", help="class probabilities instead of labels")
    shown.add_argument("--contributions", action="store_true",
                       help="each feature's contribution to each class's score (SHAP values), and each class's bias: "
                            "columns CLASS:FEATURE class by class, each class's ending with CLASS:bias (_bias_ if a "
                            "feature is named bias); they add up to the class's score")
    predict.add_argument("-o", "--output", help="CSV file to write (default: standard output)")
    predict.add_argument("--label-column", help="CSV: the label column (ignored for prediction)")
    predict.add_argument("--unlabelled", action="store_true",
                         help="the CSV has feature columns only (LibSVM and .npz files need no label: it is not read)")
    predict.add_argument("--split", default="test", help=".npz DATA: the arrays X_SPLIT, y_SPLIT (default: test)")

    evaluate = commands.add_parser("evaluate", help="errors, log loss and confusion matrix of a model on labelled data")
    evaluate.add_argument("model")
    evaluate.add_argument("data")
    evaluate.add_argument("--label-column")
    evaluate.add_argument("--split", default="test", help=".npz DATA: the arrays X_SPLIT, y_SPLIT (default: test)")

    plot = commands.add_parser("plot", help="plot saved models' training loss against trees, or feature importance (PNG)")
    plot.add_argument("models", nargs="+", help="model files")
    plot.add_argument("-o", "--output", required=True, help="image file to write (.png, .pdf, .svg)")
    plot.add_argument("--labels", nargs="+", help="legend labels (default: the file names)")
    plot.add_argument("--importance", choices=["gain", "split"], help="feature importance of the first model instead")

    bench = commands.add_parser("bench", help="run a benchmark script of the source tree (cpu, reproduce, klogit)")
    bench.add_argument("script", choices=sorted(BENCH_SCRIPTS), help="cpu: bench_cpu.py; reproduce: the papers' "
                       "comparisons; klogit: K-LogitBoost vs AOSO")
    bench.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments (see gpuboost bench SCRIPT --help)")

    demo = commands.add_parser("demo", help="train and evaluate on generated poker hands (no download)")
    demo.add_argument("--n-train", type=_at_least(1), default=25010, help="training hands (default: 25010)")
    demo.add_argument("--n-test", type=_at_least(1), default=50000, help="test hands (default: 50000)")
    demo.add_argument("--n-estimators", type=int, default=300, help="boosting iterations (default: 300)")
    demo.add_argument("--max-leaves", type=int, default=20, help="leaves per tree, J (default: 20)")
    demo.add_argument("--learning-rate", type=float, default=0.1, help="shrinkage (default: 0.1)")
    demo.add_argument("--device", default="auto", choices=_choices("device"))
    demo.add_argument("--seed", type=_at_least(0), default=0, help="seed of the generated data (default: 0)")
    demo.add_argument("--verbose", type=int, default=50, help="print the loss every N iterations")

    args = parser.parse_args(argv)
    if args.command == "plot" and args.labels and not args.importance and len(args.labels) != len(args.models):
        plot.error(f"the numbers of --labels ({len(args.labels)}) and of models ({len(args.models)}) differ: give one "
                   "label per model (or none: the file names)")
    run = {"train": _train, "predict": _predict, "evaluate": _evaluate, "bench": _bench, "plot": _plot,
           "demo": _demo}[args.command]
    try:
        with warnings.catch_warnings():
            # columns are matched by the header's names where a CSV file has one (_named_columns);
            # X then goes to the model as an array, which scikit-learn would warn about
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            return run(args)
    except BrokenPipeError:  # the reader went away (gpuboost predict ... | head): not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, TypeError, RuntimeError, OSError, MemoryError, ImportError, FloatingPointError) as exc:
        print(f"gpuboost {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
