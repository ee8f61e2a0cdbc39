"""Model files: versioned JSON, no pickle (format described in ``docs/model-format.md``).

A file holds the estimator's parameters, the classes, the binning and the trees. Floats are
written with ``repr`` precision, so a loaded model predicts bit for bit as the saved one.
Files are written to a temporary name and renamed, so an interrupted save never leaves a
half-written file in place of a good one.
"""

from __future__ import annotations

import errno
import hashlib
import json
import numbers
import os
import re
import stat
import sys

import numpy as np

from . import _validation
from ._validation import _plain
from ._version import __version__
from .binning import BinMapper
from .tree import Tree

__all__ = ["save_model", "load_model", "load_into", "FORMAT_NAME", "FORMAT_VERSION", "ModelFormatError"]

FORMAT_NAME = "gpuboost-model"
FORMAT_VERSION = 1


class ModelFormatError(ValueError):
    """A file is not a gpuboost model this version can read."""


def _classes_to_json(classes: np.ndarray) -> dict:
    kind = classes.dtype.kind
    if kind in "iu":  # (the dtype, so that a uint8 y predicts uint8 labels after loading too)
        return {"kind": "int", "values": classes.tolist(), "dtype": classes.dtype.name}
    if kind == "b":
        return {"kind": "bool", "values": classes.tolist()}
    if kind == "f":
        return {"kind": "float", "values": classes.tolist(), "dtype": classes.dtype.name}
    if kind in "US" or (kind == "O" and all(isinstance(c, str) for c in classes)):
        return {"kind": "str", "values": [str(c) for c in classes], **({"dtype": "object"} if kind == "O" else {})}
    raise TypeError(
        f"classes of dtype {classes.dtype} cannot be saved; use integer or string labels."
    )


#: what each kind's values are in JSON (bool is an int subclass: kept out of "int" and "float")
_CLASS_KINDS = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
}


def _classes_from_json(data: dict) -> np.ndarray:
    """The classes, checked: values of the kind named, distinct and sorted, as ``fit`` makes them.

    "int" values are JSON integers of any size: int64 when all of them fit in it, else uint64
    (labels up to 2**64 - 1, from a uint64 y), so that every integer class array round-trips.
    """
    if not isinstance(data, dict) or not isinstance(data.get("values"), list):
        raise ModelFormatError("'classes' must be an object with a 'kind' and a list of 'values'")
    kind, values = data.get("kind"), data["values"]
    if not isinstance(kind, str) or kind not in _CLASS_KINDS:
        raise ModelFormatError(
            f"unknown class label kind {kind!r}; this gpuboost ({__version__}) reads {sorted(_CLASS_KINDS)}. "
            "A newer gpuboost may have written it: upgrade gpuboost to load it"
        )
    if not all(map(_CLASS_KINDS[kind], values)):
        raise ModelFormatError(f"the classes of kind {kind!r} hold values of another type")
    if kind == "int":
        low, high = min(values, default=0), max(values, default=0)
        if low >= -(1 << 63) and high < (1 << 63):
            classes = np.asarray(values, dtype=np.int64)
        elif low >= 0 and high < (1 << 64):
            classes = np.asarray(values, dtype=np.uint64)
        else:
            raise ModelFormatError(f"integer classes from {low} to {high} fit neither int64 nor uint64")
    else:
        classes = np.asarray(values, dtype={"bool": bool, "float": np.float64, "str": str}[kind])
    if kind == "float" and not np.all(np.isfinite(classes)):
        raise ModelFormatError("the classes hold a non-finite value")
    if classes.size > 1 and not np.all(classes[1:] > classes[:-1]):
        raise ModelFormatError("the classes are not distinct and sorted")
    return _with_dtype(classes, kind, data.get("dtype"))


#: the dtypes a kind of classes may name (optional: files before it name none)
_CLASS_DTYPES = {"int": {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"},
                 "float": {"float16", "float32", "float64"}, "str": {"object"}}


def _with_dtype(classes: np.ndarray, kind: str, dtype) -> np.ndarray:
    """The classes in the dtype the file names (fit's classes_ keep y's dtype), checked to hold
    the same values in it."""
    if dtype is None:
        return classes
    if not isinstance(dtype, str) or dtype not in _CLASS_DTYPES.get(kind, ()):
        raise ModelFormatError(f"classes of kind {kind!r} cannot have dtype {dtype!r}")
    if dtype == "object":
        return classes.astype(object)
    with np.errstate(all="ignore"):
        typed = classes.astype(dtype)
    if not np.array_equal(typed.astype(classes.dtype), classes):
        raise ModelFormatError(f"the classes do not fit their dtype {dtype}")
    return typed


def _finite_or_none(values: np.ndarray) -> list:
    return [float(v) if np.isfinite(v) else None for v in values]


def _trained_params(estimator) -> dict:
    """The parameters a model file holds: the estimator's, with what its trees were trained
    with where set_params has changed them since."""
    return {**estimator.get_params(deep=False), **getattr(estimator, "_trained_with", {})}


def _params(estimator) -> dict:
    params = {name: _json_number(value) for name, value in _trained_params(estimator).items()}
    # A RandomState instance has no JSON form; the fitted model does not depend on it.
    if not (params["random_state"] is None or isinstance(params["random_state"], int)):
        params["random_state"] = None
    params["callbacks"] = None  # code, not data: never saved
    params["verbose"] = int(params["verbose"])  # (True as 1: files that versions before bools could read)
    if isinstance(params.get("class_weight"), dict):  # (a JSON object's keys are strings: pairs keep the labels')
        params["class_weight"] = [[_plain(label), _json_number(value)]
                                  for label, value in params["class_weight"].items()]
    return params


def _json_number(value):
    """A parameter's value as JSON takes it: NumPy scalars as the Python values they hold,
    other numbers (fractions.Fraction, say) as floats."""
    value = _plain(value)
    if isinstance(value, numbers.Real) and not isinstance(value, (int, float)):
        return float(value)
    return value


def _class_weight_from_pairs(pairs, classes: np.ndarray) -> dict:
    """A saved class_weight's [label, weight] pairs as the dict fit took: a label of one of the
    classes as that class (in the classes' type), others (a dict made for more classes than the
    model's y had) as they are."""
    class_of = {c: c for c in classes.tolist()}
    weights = {}
    for pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (str, int, float))):
            raise ModelFormatError(f"'class_weight' must hold [label, weight] pairs, got {pair!r}")
        weights[class_of.get(pair[0], pair[0])] = pair[1]
    return weights


def _tree_entry(tree: Tree) -> dict:
    entry = tree.to_dict()
    entry["threshold"] = _finite_or_none(tree.threshold)
    return entry


def model_to_dict(estimator, trees: bool = True) -> dict:
    """The model file's content (without its checksum); with ``trees`` False, None in the place
    of the trees (model_text writes them)."""
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "gpuboost_version": __version__,
        "params": _params(estimator),
        "n_features": int(estimator.n_features_in_),
        "feature_names": (
            [str(n) for n in estimator.feature_names_in_] if hasattr(estimator, "feature_names_in_") else None
        ),
        "classes": _classes_to_json(np.asarray(estimator.classes_)),
        "binning": estimator._bin_mapper.to_dict(),
        "initial_loss": float(estimator.initial_loss_),
        "train_loss": [float(v) for v in estimator.train_loss_],
        "trees": [_tree_entry(tree) for tree in estimator.trees_] if trees else None,
        **({"multilabel": True} if getattr(estimator, "multilabel_", False) else {}),
        **({"empty_label_sets": True} if getattr(estimator, "empty_label_sets_", False) else {}),
        **({"train_hamming_loss": [float(v) for v in estimator.train_hamming_loss_]}
           if hasattr(estimator, "train_hamming_loss_") else {}),
        # the feature index base of the LibSVM file the command line trained on (its predict
        # and evaluate read LibSVM files with it)
        **({"libsvm_zero_based": bool(estimator.libsvm_zero_based_)}
           if hasattr(estimator, "libsvm_zero_based_") else {}),
        # early stopping's choice (guide.md: refit with best_iteration_ + 1 trees on every row)
        **({"best_iteration": int(estimator.best_iteration_),
            "best_score": _finite_or_none(np.asarray([estimator.best_score_], dtype=np.float64))[0]}
           if hasattr(estimator, "best_iteration_") else {}),
    }


def _model_path(path, action: str) -> str:
    """A model file's path as a str (bytes decoded as file names are); an int (a file
    descriptor, which open() would take and then close) or another type is refused."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{action} needs a file path (str or os.PathLike), got {type(path).__name__} {path!r}.")
    path = os.fsdecode(path)  # (a str, from bytes or a path-like one too)
    if path == "":
        raise ValueError(f"{action} needs a file path, got an empty string.")
    return path


def check_writable(path, what: str = "the model") -> str:
    """The path a file (a model, by default) will be written to, checked before anything is
    written (or trained): it names a file, not a folder (nor a path ending in a separator, ``.``
    or ``..``); its folder exists and a file can be made there (a read-only folder or file
    system fails now, not after the training); an existing file is not read-only. This
    process's descriptors and devices (/dev/stdout) are taken as they are."""
    path = _model_path(path, "save_model" if what == "the model" else "writing")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot save {what} to {path!r}: it is a directory; give a file name in it.")
    last = os.path.basename(path)  # ("" where it ends in a separator)
    if last in ("", ".", ".."):
        ending = last or path[-1]
        raise IsADirectoryError(f"cannot save {what} to {path!r}: a path that ends in {ending!r} names a directory; "
                                "give a file name.")
    if _own_descriptor(path) is not None or _is_stream(path):
        return path
    target = os.path.realpath(path)  # (a symbolic link: the file it names)
    for directory in dict.fromkeys((os.path.dirname(path) or os.curdir, os.path.dirname(target))):
        if not os.path.isdir(directory):
            above = directory
            while above and not os.path.exists(above) and os.path.dirname(above) != above:
                above = os.path.dirname(above)
            if above and os.path.exists(above) and not os.path.isdir(above):
                raise NotADirectoryError(f"cannot save {what} to {path!r}: {above!r} is a file, not a directory.")
            raise FileNotFoundError(f"cannot save {what} to {path!r}: the directory {directory!r} does not exist; "
                                    "create it first.")
    directory = os.path.dirname(target)
    if os.path.exists(target) and not os.access(target, os.W_OK):
        if _read_only_file_system(directory):  # (access says no there too, whatever the file's mode)
            raise PermissionError(f"cannot save {what} to {path!r}: its file system is mounted read-only; give a "
                                  "path on a writable one.")
        raise PermissionError(f"cannot save {what} to {path!r}: the file is read-only; make it writable "
                              "(chmod u+w) to replace it, or give another path.")
    fd, probe = _new_file(directory, f"cannot save {what} to {path!r}")
    os.close(fd)
    os.unlink(probe)
    return path


def save_model(estimator, path, tree_texts: dict | None = None) -> None:
    """Write a fitted estimator to ``path`` (JSON), atomically (tree_texts: see model_text)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "trees_")
    path = check_writable(path)
    _check_saved_params(estimator)
    write_text_atomically(path, model_text(estimator, tree_texts))


def model_text(estimator, tree_texts: dict | None = None) -> str:
    """The model file's text: ``_dumps`` of model_to_dict's content with its checksum as the last
    key, the same text, written in one pass: each tree's JSON once (and a dict tree_texts,
    given, keeps it for the next call: Checkpoint saves a model of more trees each time, and
    wrote every tree again at each save, a checkpointed fit's time growing with the square of
    its trees), the checksum of that text without encoding it again."""
    payload = model_to_dict(estimator, trees=False)
    keys = list(payload)
    at = keys.index("trees")
    head = _dumps({key: payload[key] for key in keys[:at]})
    tail = _dumps({key: payload[key] for key in keys[at + 1:]})
    trees = ",".join(_tree_text(tree, tree_texts) for tree in estimator.trees_)
    body = head[:-1] + ',"trees":[' + trees + "]" + ("," + tail[1:] if len(tail) > 2 else "}")
    return body[:-1] + ',"checksum":' + json.dumps(_text_checksum(body)) + "}"


def _tree_text(tree: Tree, kept: dict | None) -> str:
    """The tree's JSON (as _dumps writes it in a model file); kept: a dict of the texts made
    before, by the tree's id, each with the tree's arrays (read-only: the same arrays, the
    same text; a tree given new arrays, or a new tree at a freed id, is written again)."""
    if kept is None:
        return _dumps(_tree_entry(tree))
    arrays = tuple(vars(tree).values())
    entry = kept.get(id(tree))
    if entry is not None and len(entry[0]) == len(arrays) and all(a is b for a, b in zip(entry[0], arrays)):
        return entry[1]
    text = _dumps(_tree_entry(tree))
    kept[id(tree)] = (arrays, text)
    return text


def write_text_atomically(path, text) -> None:
    """Write text (str, as UTF-8, or bytes) to path through a temporary file in its folder,
    renamed over it: an existing file is replaced whole or not at all (a failed or interrupted
    write leaves it) and keeps its permissions.

    A symbolic link is written through, as the shell's ``>`` does: the file it names is replaced,
    the link kept. This process's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
    /proc/self/fd/N) are written to as they are, whatever they were opened on (a file opened to
    append, an unlinked file, a pipe); a device, pipe or socket is written directly: there is no
    file to keep, and its folder is no place for a new one.
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    fd = _own_descriptor(path)
    if fd is not None:
        sys.stdout.flush()  # (what this process printed before comes first)
        sys.stderr.flush()
        while data:
            data = data[os.write(fd, data):]
        return
    if _is_stream(path):
        with open(path, "wb") as f:
            f.write(data)
        return
    target = os.path.realpath(path)
    fd, tmp = _new_file(os.path.dirname(target), f"cannot write {path!r}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:  # a file replaced keeps its permissions (as the shell's > keeps them); a new one has the umask's
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode) & 0o777)
        except FileNotFoundError:
            pass
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _own_descriptor(path) -> int | None:
    """The descriptor number that path names in this process (/dev/stdout: 1, /dev/fd/3: 3,
    /proc/self/fd/3: 3), or None."""
    text = os.path.abspath(os.fspath(path))
    named = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
    if text in named:
        return named[text]
    for folder in ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/"):
        if text.startswith(folder) and text[len(folder):].isdigit():
            return int(text[len(folder):])
    return None


def _is_stream(path) -> bool:
    """Whether path is (or links to) something other than a file or folder: a device, pipe or
    socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # not there (or a dangling link): a new file
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _dumps(payload: dict) -> str:
    return json.dumps(payload, allow_nan=False, separators=(",", ":"))


def _checksum(payload: dict) -> str:
    """sha256 of the file's text without its checksum: edits and damage do not load silently.

    Floats are written with repr, which parses back to the same float and prints again the
    same way, so a reader re-serialising what it parsed gets the writer's exact text.
    """
    return _text_checksum(_dumps(payload))


def _text_checksum(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The end of a file that model_text wrote: its checksum, the last key
_CHECKSUM_END = re.compile(r',"checksum":"(sha256:[0-9a-f]{64})"}\s*\Z')


def _written_intact(text: str, checksum) -> bool:
    """Whether text ends as model_text ends a file, with this checksum, that of the text before
    it (then the file is intact without writing its content again; a file written otherwise, by
    another tool or with its keys in another order, is checked from its content)."""
    end = _CHECKSUM_END.search(text, max(0, len(text) - 200))
    return end is not None and end.group(1) == checksum and _text_checksum(text[:end.start()] + "}") == checksum


def _read_only_file_system(directory) -> bool:
    """Whether directory is on a file system mounted read-only (False where that cannot be told)."""
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # (no statvfs: Windows)
        return False


def _new_file(directory, action: str) -> tuple[int, str]:
    """(descriptor, path) of a new empty file of a free name in directory, made with mode 0o666
    less the process's umask, as open() makes files (mkstemp's are private, and reading the
    umask means setting it, process-wide). Failing, an OSError that begins with ``action``
    (what could not be done) and says why."""
    import secrets

    for _ in range(100):
        name = os.path.join(directory, f".gpuboost-{secrets.token_hex(8)}.tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), name
        except FileExistsError:
            continue
        except OSError as exc:
            raise type(exc)(exc.errno, f"{action}: cannot create a file in {directory!r} ({exc.strerror})") from None
    raise FileExistsError(errno.EEXIST, f"{action}: no free temporary file name in {directory!r}")


def _no_constant(name):
    """JSON's NaN and Infinity, which gpuboost never writes (allow_nan=False): not a model file's."""
    raise ValueError(f"it holds {name}, which gpuboost never writes")


def _read(path) -> dict:
    path = _model_path(path, "load_model")
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
        data = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ModelFormatError(f"{path} is not a gpuboost model file: its JSON is nested too deeply.") from None
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:  # (ValueError: a huge integer)
        raise ModelFormatError(
            f"{path} is not a gpuboost model file: it is not valid JSON ({exc}). "
            "The file may be truncated or damaged; save the model again."
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"{path} is not a gpuboost model file (no 'format': '{FORMAT_NAME}').")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFormatError(f"{path}: format_version {version!r} is not valid.")
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"{path} was written by gpuboost {data.get('gpuboost_version', '?')} in model format "
            f"{version}; this gpuboost ({__version__}) reads formats up to {FORMAT_VERSION}. "
            "Upgrade gpuboost to load it."
        )
    if "checksum" not in data:  # a file of format 1 written before checksums (added 2026-11-22)
        import warnings

        warnings.warn(f"{path} has no checksum (files written by gpuboost before 2026-11-22 have none), so it "
                      "is loaded without the check that it is intact; save the model again to add one.", UserWarning,
                      stacklevel=4)
        return data
    checksum = data.pop("checksum")
    try:
        intact = _written_intact(text, checksum) or checksum == _checksum(data)
    except (TypeError, ValueError):  # NaN or other values JSON of ours never holds
        intact = False
    if not intact:
        raise ModelFormatError(
            f"{path} was edited or damaged after it was saved: its checksum does not match its content. "
            "Save the model again from the estimator, or load an intact copy."
        )
    return data


def _check_tree(tree: Tree, index: int, n_features: int, n_classes: int, max_bins: int) -> None:
    n = tree.n_nodes
    arrays = (tree.bin, tree.threshold, tree.missing_left, tree.left, tree.right, tree.value,
              tree.n_samples, tree.gain)
    problems = []
    if n < 1 or any(a.shape != (n,) for a in arrays) or tree.pair.shape != (n, 2):
        problems.append("node arrays of different lengths")
    else:
        internal = ~tree.is_leaf
        children = np.concatenate([tree.left[internal], tree.right[internal]])
        if np.any(tree.feature >= n_features) or np.any(tree.feature < -1):  # (-1: a leaf)
            problems.append("a feature index out of range")
        if np.any(tree.left[~internal] != -1) or np.any(tree.right[~internal] != -1):
            problems.append("a leaf with children")
        if children.size and (children.min() < 1 or children.max() >= n or np.unique(children).size != children.size):
            problems.append("child links that do not form a tree")
        if np.any(tree.left[internal] <= np.flatnonzero(internal)) or np.any(
                tree.right[internal] <= np.flatnonzero(internal)):
            problems.append("a child that does not come after its parent")
        if np.any(tree.bin[internal] < 0) or np.any(tree.bin[internal] >= max_bins):
            problems.append("a bin threshold out of range")
        if (tree.pair[:, 0].min() < 0 or tree.pair[:, 1].min() < -3 or tree.pair.max() >= n_classes
                or np.any(tree.pair[:, 0] == tree.pair[:, 1])):
            problems.append("a class pair out of range")
        if not np.all(np.isfinite(tree.value)):
            problems.append("a non-finite node value")
        if not np.all(np.isfinite(tree.gain)):
            problems.append("a non-finite split gain")
        if np.any(tree.n_samples < 0):
            problems.append("a negative row count")
        if tree.vector is not None and (tree.vector.shape != (n, n_classes) or not np.all(np.isfinite(tree.vector))):
            problems.append("node vectors of the wrong shape or not finite")
    if problems:
        raise ModelFormatError(f"tree {index} is damaged: {', '.join(problems)}.")


def load_into(estimator, path) -> None:
    """Set an estimator's parameters and fitted state from a model file."""
    data = _read(path)
    try:
        classes = _classes_from_json(data["classes"])
        if data.get("multilabel", False) and not np.array_equal(classes, np.arange(len(classes))):
            raise ModelFormatError("a multi-label model's classes must be its label indices 0 .. L-1")
        mapper = BinMapper.from_dict(data["binning"])
        n_features = data["n_features"]
        if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features < 1:
            raise ModelFormatError(f"'n_features' must be an integer >= 1, got {n_features!r}")
        trees = []
        for k, entry in enumerate(data["trees"]):
            entry = dict(entry)
            # null: +inf for a split of values from missing values, NaN (no threshold) for a leaf
            entry["threshold"] = [(np.inf if f >= 0 else np.nan) if v is None else v
                                  for v, f in zip(entry["threshold"], entry["feature"])]
            tree = Tree.from_dict(entry)
            _check_tree(tree, k, n_features, len(classes), mapper.max_bins)
            trees.append(tree)
        params = dict(data["params"])
        if len(mapper.edges_) != n_features or len(classes) < 2:
            raise ModelFormatError("the binning or the classes do not match the number of features")
        train_loss = np.asarray(data["train_loss"], dtype=np.float64)
        hamming = data.get("train_hamming_loss")  # (AdaBoost.MH's, optional)
        if hamming is not None:
            if not (isinstance(hamming, list) and len(hamming) == len(train_loss)
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in hamming)):
                raise ModelFormatError("'train_hamming_loss' must be a list of numbers, one per iteration")
            hamming = np.asarray(hamming, dtype=np.float64)
        initial_loss = float(data["initial_loss"])
        feature_names = data["feature_names"]
        if feature_names is not None and not (
            isinstance(feature_names, list) and len(feature_names) == n_features
            and all(isinstance(name, str) for name in feature_names)
        ):
            raise ModelFormatError(f"'feature_names' must be null or a list of {n_features} strings")
        for key in ("multilabel", "libsvm_zero_based", "empty_label_sets"):
            if not isinstance(data.get(key, False), bool):
                raise ModelFormatError(f"{key!r} must be true or false, got {data[key]!r}")
        best = data.get("best_iteration")
        if best is not None:
            score = data.get("best_score")
            if not (isinstance(best, int) and not isinstance(best, bool) and 0 <= best < len(train_loss)
                    and (score is None or isinstance(score, (int, float)) and not isinstance(score, bool))):
                raise ModelFormatError(f"'best_iteration' must be an iteration of the model (0 .. "
                                       f"{len(train_loss) - 1}) and 'best_score' a number or null, got {best!r} "
                                       f"and {score!r}")
            best_score = np.inf if score is None else float(score)
        if isinstance(params.get("class_weight"), list):
            params["class_weight"] = _class_weight_from_pairs(params["class_weight"], classes)
            try:  # labels of other classes only where it names every class, as fit takes it
                _validation.class_weights(params["class_weight"], classes, np.arange(len(classes)))
            except (TypeError, ValueError) as exc:
                raise ModelFormatError(str(exc)) from None
        seed = params.get("random_state")
        if isinstance(seed, int) and not 0 <= seed < 2 ** 32:
            params["random_state"] = None  # (an earlier version took any int; the model does not depend on it)
        _check_loaded_params(params)
        overflow = _scores_overflow(params["learning_rate"], trees)
        if overflow:
            raise ModelFormatError(overflow)
        from .algorithms import trees_per_iteration

        per = trees_per_iteration(params["algorithm"], len(classes))
        if len(trees) != per * len(train_loss):
            raise ModelFormatError(
                f"it has {len(trees)} trees for {len(train_loss)} iterations of {params['algorithm']} "
                f"({per} trees each)"
            )
        # last: a file that fails to parse changes nothing; the parameters a file of an earlier
        # version lacks take their defaults (the estimator's own would not be the model's)
        from .sklearn import BoostClassifier, trained_with

        estimator.set_params(**{**BoostClassifier().get_params(), **params})
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None
    # OverflowError: a number too large for its array's type (a tree's feature index, say)
    except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
        raise ModelFormatError(
            f"{path} is damaged or was edited: {type(exc).__name__}: {exc}. Save the model again."
        ) from None
    # no fitted attribute of a model the estimator held before survives (best_iteration_ of an
    # earlier early stopping, fit_time_, what a callback added), as in fit
    for name in [name for name in vars(estimator) if name.endswith("_") and not name.startswith("_")]:
        delattr(estimator, name)
    estimator.classes_ = classes
    estimator._bin_mapper = mapper
    estimator.n_features_in_ = n_features
    if feature_names is not None:
        estimator.feature_names_in_ = np.asarray(feature_names, dtype=object)
    estimator.trees_ = trees
    estimator.train_loss_ = train_loss
    if hamming is not None:
        estimator.train_hamming_loss_ = hamming
    estimator.initial_loss_ = initial_loss
    estimator.eval_loss_, estimator.eval_error_ = [], []
    if best is not None:
        estimator.best_iteration_, estimator.best_score_ = best, best_score
    estimator.device_ = "cpu"
    estimator.multilabel_ = bool(data.get("multilabel", False))
    if estimator.multilabel_:
        estimator.empty_label_sets_ = data.get("empty_label_sets", False)
    if "libsvm_zero_based" in data:
        estimator.libsvm_zero_based_ = data["libsvm_zero_based"]
    estimator._trained_with = trained_with(params)


def _scores_overflow(learning_rate, trees) -> str | None:
    """Why the scores predict adds up could overflow (a file edited to learning_rate=1e308 would
    predict NaN), or None: learning_rate x the trees' largest values, summed, bounds them."""
    largest = sum(float(np.max(np.abs(t.value))) + (0.0 if t.vector is None else float(np.max(np.abs(t.vector))))
                  for t in trees)
    if float(learning_rate) * largest < 1e300:
        return None
    return (f"its scores would overflow: learning_rate {learning_rate} times its trees' values ({largest:.3g} at "
            "most, summed) is beyond 1e300")


def _check_saved_params(estimator) -> None:
    """The parameters a model file would hold, checked as load_model checks them: set_params
    after fit can set a value that fit would refuse (n_estimators=0), and a file written with
    it could not be loaded (nor replace a good one)."""
    params = {**_trained_params(estimator), "callbacks": None}
    try:
        _check_param_values(params)
    except ValueError as exc:
        raise ValueError(f"cannot save the model: {exc} Set a valid value (set_params) before saving; "
                         "nothing was written.") from None
    overflow = _scores_overflow(params["learning_rate"], estimator.trees_)
    if overflow:  # (load_model refuses such a file)
        raise ValueError(f"cannot save the model: {overflow}. Train with a smaller learning_rate; nothing was "
                         "written.")
    if isinstance(params.get("class_weight"), dict):  # its labels as a file holds them (_class_weight_from_pairs)
        for label in params["class_weight"]:
            plain = _plain(label)
            if not (isinstance(plain, (str, int, float)) and (not isinstance(plain, float) or np.isfinite(plain))):
                raise ValueError(f"cannot save the model: class_weight has the label {label!r}, which is none of the "
                                 "classes and which a model file cannot hold (labels are strings or finite numbers). "
                                 "Leave it out of the dict (set_params(class_weight=...)) before saving; nothing was "
                                 "written.")


def _check_loaded_params(params: dict) -> None:
    """The parameters of a model file, checked as fit checks them (a file edited by hand
    might hold an unknown algorithm or a negative learning rate)."""
    from .sklearn import BoostClassifier

    unknown = sorted(set(params) - set(BoostClassifier().get_params()))
    if unknown:
        raise ModelFormatError(f"unknown parameters {unknown}; a newer gpuboost may have written the file")
    try:
        _check_param_values(params)
    except ValueError as exc:
        raise ModelFormatError(f"its parameters are not valid: {exc}") from None


def _check_param_values(params: dict) -> None:
    """fit's checks of the parameters (_validation.check_params) on an estimator that has
    them: a ValueError that names the first one out of range."""
    from .algorithms import ALGORITHMS
    from .sklearn import BoostClassifier

    _validation.check_params(BoostClassifier(**params), ALGORITHMS)


def load_model(path):
    """Load a model file into a new ``BoostClassifier``."""
    from .sklearn import BoostClassifier

    estimator = BoostClassifier()
    load_into(estimator, path)
    return estimator
