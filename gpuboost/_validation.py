"""Checks of what a user passes in: each failure says what is wrong and what to do.

``docs/bad-inputs.md`` lists every case with the message a user sees; the tests in
``tests/test_validation.py`` hold the two together.
"""

from __future__ import annotations

import collections
import datetime
import itertools
import numbers
import os

import numpy as np

from ._device import DEVICES
from .losses import PAIR_RULES

__all__ = ["check_params", "check_X", "encode_labels", "check_weight", "check_eval_set", "check_memory",
           "MAX_CLASSES"]

#: Class indices are stored in 16 bits where it matters (pairs on the GPU, model files).
MAX_CLASSES = 1 << 16


def check_params(est, algorithms) -> None:
    """Every constructor parameter of a BoostClassifier, with its allowed range."""
    if est.algorithm not in algorithms:
        raise ValueError(f"algorithm={est.algorithm!r} is not known; this version implements {algorithms}.")

    def integer(name, low, high=None):
        # (the compiled kernels take 64-bit integers: a larger bound than any is below 2**63)
        value = getattr(est, name)
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low or (
            value > (2 ** 63 - 1 if high is None else high)
        ):
            bound = f">= {low}" if high is None else f"in [{low}, {high}]"
            if high is None and isinstance(value, numbers.Integral) and value >= 2 ** 63:
                bound += " and below 2**63"
            raise ValueError(f"{name} must be an integer {bound}, got {value!r}.")

    def real(name, within, what):
        value = getattr(est, name)
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not within(value):
            raise ValueError(f"{name} must be {what}, got {value!r}.")

    def positive(name):
        real(name, lambda v: 0 < float(v) < np.inf, "a finite number > 0")

    integer("n_estimators", 1)
    integer("max_leaves", 2)
    if est.max_depth is not None:
        integer("max_depth", 1)
    integer("max_bins", 2, 65535)
    integer("min_samples_leaf", 1)
    if not isinstance(est.verbose, (bool, np.bool_)):  # (True and False as 1 and 0, as scikit-learn's)
        integer("verbose", 0)
    integer("search", 0)
    integer("gap", 0)
    positive("learning_rate")
    positive("leaf_clip")
    real("tol", lambda v: v >= 0, "a number >= 0")
    if est.pair_rule not in PAIR_RULES:
        raise ValueError(f"pair_rule must be one of {PAIR_RULES}, got {est.pair_rule!r}.")
    if not isinstance(est.device, str) or est.device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {est.device!r}.")
    if est.n_jobs is not None and (
        not isinstance(est.n_jobs, numbers.Integral) or isinstance(est.n_jobs, bool) or est.n_jobs == 0
    ):
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {est.n_jobs!r}.")
    if est.early_stopping_rounds is not None:
        integer("early_stopping_rounds", 1)
    if not (est.random_state is None or isinstance(est.random_state, (numbers.Integral, np.random.RandomState))) \
            or isinstance(est.random_state, bool) or (isinstance(est.random_state, numbers.Integral)
                                                      and not 0 <= est.random_state < 2 ** 32):
        raise ValueError(f"random_state must be None, an int in [0, 2**32 - 1] or a numpy RandomState, got "
                         f"{est.random_state!r}.")
    if not isinstance(est.warm_start, (bool, np.bool_)):
        raise ValueError(f"warm_start must be True or False, got {est.warm_start!r}.")
    _check_class_weight(est.class_weight)
    real("min_child_weight", lambda v: 0 <= float(v) < np.inf, "a finite number >= 0")
    real("subsample", lambda v: 0 < v <= 1, "a number in (0, 1]")
    real("colsample_bytree", lambda v: 0 < v <= 1, "a number in (0, 1]")
    if est.validation_fraction is not None:
        real("validation_fraction", lambda v: 0 < v < 1, "None or a number in (0, 1)")
    if est.callbacks is not None:
        from .callback import Callback

        if not isinstance(est.callbacks, (list, tuple)) or not all(isinstance(c, Callback) for c in est.callbacks):
            raise ValueError(
                "callbacks must be a list of gpuboost.callback.Callback instances, "
                f"got {est.callbacks!r}."
            )


_DATE_CLASSES = (datetime.date, datetime.time, datetime.timedelta, np.datetime64, np.timedelta64)


def _is_date_type(t: type) -> bool:
    """A type of dates, times or durations (Python's, NumPy's or pandas'), whose values float()
    would take as a count of their unit (NumPy's) or refuse with an unhelpful message."""
    return issubclass(t, _DATE_CLASSES) or t.__name__ == "Period"


def _is_date(value) -> bool:
    return _is_date_type(type(value))


def _value_types(values) -> set:
    """The types of the values of an object array, a pandas column or lists of rows (the loop in
    C: a few hundredths of a second for a million values)."""
    if isinstance(values, (list, tuple)):
        try:
            return set(map(type, itertools.chain.from_iterable(values)))
        except TypeError:  # a row that is not a sequence
            return set(map(type, values))
    return set(map(type, np.asarray(values, dtype=object).ravel()))


def _dates_among(types: set) -> bool:
    return any(map(_is_date_type, types))


def _first_bad_value(column):
    for value in np.asarray(column, dtype=object).ravel():
        if value is None or type(value).__name__ == "NAType":  # None, pandas.NA: missing values
            continue
        if _is_date(value):
            return value
        try:
            float(value)
        except (TypeError, ValueError, OverflowError):
            return value
    return None


def _described(where: str, bad) -> tuple[str, str]:
    if _is_date(bad):
        return "dates", f"{where} holds dates or durations ({bad!r})"
    if isinstance(bad, numbers.Integral):
        text = str(abs(bad))
        return "large", f"{where} holds an integer too large for a float ({str(bad)[:12]}..., {len(text)} digits)"
    return ("text" if isinstance(bad, str) else "other"), f"{where} holds {bad!r}"


def _date_dtype(dtype) -> bool:
    """A pandas or NumPy dtype of dates or durations, a categorical one of them included."""
    categories = getattr(getattr(dtype, "categories", None), "dtype", None)  # (pandas' CategoricalDtype)
    return any(getattr(d, "kind", None) in ("m", "M") or str(d).startswith("period") for d in (dtype, categories)
               if d is not None)


def _non_numeric(X) -> tuple[str, str] | None:
    """What makes X non-numeric (its first such column), as (kind, text): kind "complex",
    "dates", "large" (an integer beyond float64), "text" (a string) or "other"; or None when
    it converts to float."""
    if hasattr(X, "toarray"):  # scipy.sparse: numeric by construction
        return None
    frame = hasattr(X, "columns") and hasattr(X, "dtypes")
    if frame:  # pandas: dates by their columns' dtypes
        for name, dtype in zip(X.columns, X.dtypes):
            if _date_dtype(dtype):
                return "dates", f"column {name!r} holds dates or durations (dtype {dtype})"
    else:
        try:
            dtype = np.asarray(X).dtype
            if dtype.kind in "biuf":  # (every such value converts: no float64 copy of X made to find out)
                return None
            if dtype.kind == "c":
                return "complex", "X has complex values (Complex data not supported)"
            if dtype.kind in "mM":  # (NumPy would convert them to integers of their unit)
                return "dates", f"X holds dates or durations (dtype {dtype})"
        except (TypeError, ValueError):
            pass
    objects = [X[name] for name, dtype in zip(X.columns, X.dtypes) if dtype == object] if frame else \
        [X] if getattr(X, "dtype", None) == object or isinstance(X, (list, tuple)) else []
    if not any(_dates_among(_value_types(column)) for column in objects):  # (NumPy makes datetime64 objects
        try:                                                                # counts of their unit)
            np.asarray(X, dtype=np.float64)
            return None
        except (TypeError, ValueError, OverflowError):
            pass
    if hasattr(X, "columns"):  # pandas DataFrame: name the column
        for name in X.columns:
            bad = _first_bad_value(X[name])
            if bad is not None:
                return _described(f"column {name!r} (dtype {X[name].dtype})", bad)
    try:
        array = np.asarray(X, dtype=object)
    except ValueError:  # ragged lists: the conversion below says so
        return None
    if array.ndim == 2:
        for f in range(array.shape[1]):
            bad = _first_bad_value(array[:, f])
            if bad is not None:
                return _described(f"column {f}", bad)
    return None  # let the conversion below say what it finds


def to_host(array):
    """An array that lives on a GPU (CuPy, or anything with ``__cuda_array_interface__``) as a
    NumPy array, copied once; anything else unchanged. (Training and prediction on the GPU use
    such arrays where they are: ``check_X_device``.)"""
    if not hasattr(array, "__cuda_array_interface__"):
        return array
    try:
        import cupy
    except ImportError:
        raise TypeError(
            f"{type(array).__name__} lives on a GPU; reading it needs CuPy (pip install \"gpuboost[cuda12]\" "
            "or [cuda13]), or pass a NumPy array."
        ) from None
    return cupy.asnumpy(cupy.asarray(array))


def on_gpu(array) -> bool:
    """Whether ``array`` lives on a GPU (CuPy, or anything with ``__cuda_array_interface__``)."""
    return hasattr(array, "__cuda_array_interface__")


def like(X, index):
    """``index`` (a NumPy mask or index array) where X lives: on X's GPU for a CuPy X."""
    if on_gpu(X):
        import cupy

        return cupy.asarray(index)
    return index


def gpu_memory_error(needed: int, what: str = "") -> MemoryError:
    """The MemoryError for a GPU allocation that failed (after freeing CuPy's cached blocks)."""
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()
    free, total = cupy.cuda.runtime.memGetInfo()
    what = f" {what}" if what else ""
    rmm = _rmm_resource()
    rmm = (f"; CuPy allocates through RMM's {rmm}, whose own limit can be lower than the free memory" if rmm
           else "")
    return MemoryError(
        f"The GPU ran out of memory: this needs about {needed / 2**30:.2f} GiB on the device{what} "
        f"({free / 2**30:.2f} GiB of {total / 2**30:.2f} GiB free{rmm}). Train on fewer rows, use max_bins <= 255 "
        "(one byte per value), free other GPU memory, or use device='cpu'."
    )


def _rmm_resource() -> str:
    """The name of RMM's current device resource where CuPy allocates through RMM, else ""."""
    import cupy

    if not str(getattr(cupy.cuda.get_allocator(), "__module__", "") or "").startswith("rmm"):
        return ""
    try:
        import rmm

        return type(rmm.mr.get_current_device_resource()).__name__
    except Exception:
        return "memory resource"


def upload_X(X: np.ndarray):
    """A host X copied to the current GPU as it is (its own dtype: a float32 X moves half the
    bytes, and becomes float64 there); a clear MemoryError if the GPU cannot hold it."""
    import cupy

    try:
        return cupy.asarray(X)
    except (cupy.cuda.memory.OutOfMemoryError, MemoryError):  # CuPy's pool, or RMM's
        raise gpu_memory_error(X.nbytes, "to hold X") from None


def check_X_device(est, X, reset: bool):
    """X that lives on a GPU as a CuPy float64 (n_samples, n_features) array on that GPU,
    checked there: no copy to the host (a float32 or integer X is converted on the device)."""
    import cupy

    X = cupy.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, shape (n_samples, n_features); got shape {X.shape}.")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must be numeric (bool, integer or float), got dtype {X.dtype}.")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X has shape {X.shape}; it needs at least one row and one feature.")
    X = cupy.ascontiguousarray(X, dtype=cupy.float64)
    if reset:
        est.n_features_in_ = int(X.shape[1])
        if hasattr(est, "feature_names_in_"):
            del est.feature_names_in_
    elif X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    return X


def check_X(est, X, reset: bool) -> np.ndarray:
    """X as float64, or float32 where it is (n_samples, n_features), NaN and +-inf allowed;
    names kept from pandas."""
    from sklearn.utils.validation import validate_data

    if X is None:
        raise ValueError("X is None: give the data as a 2-D array of shape (n_samples, n_features).")
    if getattr(getattr(X, "dtype", None), "names", None):
        raise ValueError(f"X is a structured array (fields {list(X.dtype.names)[:5]}): give a plain 2-D array, "
                         "for example numpy.lib.recfunctions.structured_to_unstructured(X), or a pandas DataFrame.")
    ndim = getattr(X, "ndim", None)
    if ndim == 1 or (ndim is None and isinstance(X, (list, tuple)) and X and np.ndim(X[0]) == 0):
        raise ValueError(
            f"X must be 2-D, shape (n_samples, n_features); got a 1-D array of {len(X)} values. "
            "Reshape your data: X.reshape(-1, 1) if it is one feature, X.reshape(1, -1) if it is one row."
        )
    X = to_host(X)
    names = list(X.columns) if hasattr(X, "columns") and hasattr(X, "dtypes") else []  # (pandas, polars: a list)
    if len(set(names)) != len(names):
        repeated = [repr(name) for name, count in collections.Counter(names).items() if count > 1]
        raise ValueError(f"X has repeated column names ({', '.join(repeated[:5])}): give each column a "
                         "name of its own (pandas.concat of frames with a shared column repeats it).")
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # scipy.sparse: an absent entry is the value 0
        check_dense_memory(X.shape, 4 if X.dtype == np.float32 else 8)  # (float32 stays float32)
        X = X.toarray()
    if hasattr(X, "sparse") and hasattr(X, "dtypes") and len(X.columns) \
            and all(type(dtype).__name__ == "SparseDtype" for dtype in X.dtypes):
        X = X.sparse.to_dense()  # (scikit-learn refuses a DataFrame of only sparse columns as sparse data)
    if isinstance(X, np.ma.MaskedArray):  # a masked entry is a missing value (NumPy would drop the mask)
        kind = X.dtype.kind
        if kind in "biuf":
            X = np.ma.filled(np.ma.asarray(X, dtype=np.float32 if X.dtype == np.float32 else np.float64), np.nan)
        elif kind in "OUS":  # (objects and strings: the unmasked ones checked as a plain array's)
            X = np.ma.filled(X.astype(object), np.nan)
        else:  # complex numbers, dates: refused as a plain array of them is
            X = np.ma.getdata(X)
    found = _non_numeric(X)
    if found is not None:
        kind, problem = found
        advice = {"complex": "", "dates": " Convert them to numbers first (seconds since a date, say).",
                  "large": " Scale it, or give it as a float."}.get(kind, (
                      " Encode categorical or text columns as numbers first (for example with "
                      "sklearn.preprocessing.OrdinalEncoder); missing values may be NaN."))
        if kind != "other":  # a string, complex numbers, dates, a huge integer
            raise ValueError(f"X must be numeric, but {problem}.{advice}")
        # another kind of object: a TypeError, as float() itself raises
        raise TypeError(f"X must be numeric, but {problem} (float() argument must be a string or a real "
                        f"number).{advice}")
    # float32 stays float32 (the binning converts a block of columns at a time, exactly: the same
    # edges and codes as from a float64 copy of X, which would take twice X's memory)
    return validate_data(est, _na_as_nan(X), reset=reset, dtype=[np.float64, np.float32], ensure_all_finite=False)


def _na_as_nan(X):
    """X with pandas.NA in object, string or categorical columns (or an object array, or lists)
    as NaN: a missing value, as None is (NumPy converts None to NaN, not pandas.NA). Other X
    unchanged."""
    def is_na(value):
        return type(value).__name__ == "NAType"

    def holds_na(values) -> bool:
        return any(t.__name__ == "NAType" for t in _value_types(values))

    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        columns = [name for name, dtype in zip(X.columns, X.dtypes)
                   if (dtype == object or str(dtype).startswith("string") or str(dtype) == "category")
                   and X[name].isna().any()]  # (vectorised: a column without missing values is left alone)
        if columns:
            X = X.copy()
            for name in columns:
                X[name] = X[name].astype(object).where(X[name].notna(), np.nan)
        return X
    if isinstance(X, (list, tuple)):
        if not holds_na(X):
            return X
        array = np.array(X, dtype=object)
        if array.ndim != 2:  # (ragged, or not rows: validate_data says what it finds in the lists)
            return X
        X = array
    if isinstance(X, np.ndarray) and X.dtype == object and holds_na(X):
        na = np.frompyfunc(is_na, 1, 1)(X).astype(bool)
        X = X.copy()
        X[na] = np.nan
    return X


#: Algorithms that learn from a multi-label indicator y: AdaBoost.MH natively, K-LogitBoost with
#: a logistic model per label, AOSO / MART / robust LogitBoost with paper 004's targets
#: eta = 1/|S_i| (on the CPU's vector backend).
MULTILABEL_ALGORITHMS = ("adaboostmh", "aoso", "mart", "robustlogit", "klogitboost")


def host_labels(y, name: str = "y"):
    """y on the host, a scipy.sparse matrix densified (scikit-learn accepts a sparse multi-label
    indicator matrix; an absent entry is 0), a masked array without masked entries as its data
    (one with them is refused: they are missing labels, where NumPy would drop the mask and train
    on what they hold); anything else unchanged."""
    y = to_host(y)
    if hasattr(y, "toarray") and hasattr(y, "nnz"):
        y = y.toarray()
    if isinstance(y, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(y)
        if mask.ndim >= 1 and mask.any():  # (a 0-d one: told by the shape checks that follow)
            rows = mask.ndim == 1 or mask.shape[1:] == (1,)  # (a column of labels: rows)
            where = np.flatnonzero(mask.reshape(mask.shape[0], -1).any(axis=1)) if rows else np.argwhere(mask)
            at = [int(i) if rows else tuple(i) for i in where[:5].tolist()]
            what = ("a masked label is a missing one. Drop those rows, or give them their labels." if name in ("y", "Y")
                    else "a masked entry is a missing value. Drop those rows, or fill them in.")
            column = "label" if name in ("y", "Y") else "column"
            raise ValueError(f"{name} has {len(where)} masked entries, at {'rows' if rows else f'[row, {column}]'} "
                             f"{at}{' ...' if len(where) > 5 else ''}: {what}")
        y = np.ma.getdata(y)
    return y


def label_indicator(y, algorithm: str):
    """y as a multi-label indicator matrix (n, L), L >= 2, of 0/1, or None for single-label y.

    scikit-learn's convention: a 2-D y of 0/1 with two or more columns is multi-label (an
    array, a list of lists or a DataFrame; a sparse one goes through ``host_labels`` first);
    shape (n, 1) is an ordinary single-label y.
    """
    try:
        ndim = getattr(y, "ndim", np.ndim(y) if isinstance(y, (list, tuple)) else 0)
    except ValueError:  # rows of different lengths (label lists, not an indicator matrix)
        raise ValueError("y is a list of rows of different lengths: give a multi-label y as an indicator matrix of "
                         "0 and 1 (one column per label; sklearn.preprocessing.MultiLabelBinarizer makes one from "
                         "label lists), or one class label per row.") from None
    if ndim != 2:
        return None
    Y = np.asarray(y)
    if Y.shape[1] < 2:
        return None
    numbers = nullable_numbers(Y)
    Y = Y if numbers is None else numbers
    if Y.dtype.kind not in "biuf" or not np.isin(Y, (0, 1)).all():
        where = _first_other_value(Y)
        raise ValueError(
            f"y has shape {Y.shape}{', and ' + where if where else ''}: a 2-D y must be a multi-label indicator "
            "matrix of 0 and 1 (one column per label), or give one class label per row (shape (n_samples,))."
        )
    if algorithm not in MULTILABEL_ALGORITHMS:
        raise ValueError(
            f"y is a multi-label indicator matrix (shape {Y.shape}); multi-label learning is implemented for "
            f"algorithm in {MULTILABEL_ALGORITHMS} in this version, not {algorithm!r}."
        )
    # (C order: a DataFrame's F-ordered values made the multi-label kernels compile again)
    return np.ascontiguousarray(Y, dtype=bool)


def nullable_numbers(Y: np.ndarray):
    """An object array of numbers (a pandas nullable Int64 or boolean frame's values) as float64
    (a missing value as NaN), or None where Y is not one (another dtype, text, other objects)."""
    if Y.dtype.kind != "O" or any(isinstance(v, (str, bytes)) for v in Y.ravel()):
        return None
    try:
        return Y.astype(np.float64)
    except (TypeError, ValueError):
        return None


def _first_other_value(Y: np.ndarray, name: str = "y") -> str:
    """Where a 2-D y first holds a value other than 0 and 1, for a message: 'y[i, j] is v' (a
    missing value named so), or '' where there is none."""
    try:
        def number(v):
            return type(v) in (int, float, bool) or isinstance(v, (np.integer, np.floating, np.bool_))

        other = ~np.isin(Y, (0, 1)) if Y.dtype.kind in "biuf" else np.array(
            [not number(v) or v not in (0, 1) for v in Y.ravel()], dtype=bool).reshape(Y.shape)
    except (TypeError, ValueError):
        return ""
    if not other.any():
        return ""
    i, j = np.argwhere(other)[0]
    value = Y[i, j]
    what = "missing" if _is_missing(value) else repr(value.item() if isinstance(value, np.generic) else value)
    return f"{name}[{i}, {j}] is {what}"


def _is_missing(value) -> bool:
    """None, NaN or pandas.NA: a missing label or value."""
    return (value is None or type(value).__name__ == "NAType"
            or (isinstance(value, (float, np.floating)) and np.isnan(value)))


def _labels_1d(y) -> np.ndarray:
    if y is None:
        raise ValueError("BoostClassifier requires y to be passed, but the target y is None.")
    y = host_labels(y)  # (a scipy.sparse column of labels densified, as fit takes it)
    if isinstance(y, (list, tuple)):
        # np.asarray would make one type of a list's labels ([1, 'a'] -> ['1', 'a'], [True, 2] ->
        # [1, 2]): its values are checked as an object array's are
        as_object = np.empty(len(y), dtype=object)
        try:
            as_object[:] = y
        except ValueError:  # nested lists: a 2-D y, told below
            pass
        else:
            if not any(isinstance(v, (list, tuple, np.ndarray)) for v in as_object):
                _object_labels(as_object[[not _is_missing(v) for v in as_object]])  # (raises for mixed types)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        from sklearn.utils.validation import column_or_1d

        y = column_or_1d(y, warn=True)  # scikit-learn's convention: a warning, then 1-D
    if y.ndim != 1:
        raise ValueError(f"y must hold one class label per row (shape (n_samples,)), got shape {y.shape}.")
    missing = np.array([_is_missing(v) for v in y], dtype=bool) \
        if y.dtype.kind == "O" else (np.isnan(y) if y.dtype.kind == "f" else np.zeros(len(y), bool))
    if missing.any():
        rows = np.flatnonzero(missing)
        raise ValueError(
            f"y has {rows.size} missing labels (NaN or None), at rows {rows[:5].tolist()}"
            f"{' ...' if rows.size > 5 else ''}; drop those rows or give them a class."
        )
    y = _object_labels(y) if y.dtype.kind == "O" else y
    if y.dtype.kind == "f" and np.isinf(y).any():  # (scikit-learn's message named X's infinities)
        rows = np.flatnonzero(np.isinf(y))
        raise ValueError(f"y has {rows.size} infinite labels, at rows {rows[:5].tolist()}"
                         f"{' ...' if rows.size > 5 else ''}; a class label is a finite number or a string.")
    return y


def _object_labels(y: np.ndarray) -> np.ndarray:
    """An object array of labels in the dtype its values share: Python or NumPy integers as
    int64, other real numbers as float64, strings (or another single type) unchanged.

    scikit-learn's ``type_of_target`` calls an object array of numbers 'unknown' (what a pandas
    column of Python ints gives), and a y that mixes strings, numbers or booleans too; the
    latter has no one order for ``classes_``: a clear error here.
    """
    def kind(value):
        if isinstance(value, str):
            return "str"
        if isinstance(value, (bool, np.bool_)):
            return "bool"
        if isinstance(value, numbers.Integral):
            return "int"
        if isinstance(value, numbers.Real):
            return "float"
        return type(value).__name__

    kinds = {kind(v) for v in y}
    if len(kinds) > 1 and kinds != {"int", "float"}:
        raise ValueError(f"y mixes label types ({', '.join(sorted(kinds))}); use one type for all labels "
                         "(all strings, or all numbers).")
    try:
        if kinds == {"int"}:
            return y.astype(np.int64)
        if kinds <= {"int", "float"}:
            return y.astype(np.float64)
        if kinds == {"bool"}:
            return y.astype(bool)
    except OverflowError:  # integers beyond int64: uint64 where they fit it, else refused
        if kinds == {"int"}:
            try:
                return y.astype(np.uint64)
            except OverflowError:
                raise ValueError(f"y holds integers from {min(y)} to {max(y)}, a range neither int64 nor uint64 holds, so a "
                                 "model cannot keep them as numbers; give the labels as strings (y.astype(str)).") from None
    return y


def encode_labels(y):
    """(classes, codes): the sorted distinct labels and each row's index into them."""
    from sklearn.preprocessing import LabelEncoder
    from sklearn.utils.multiclass import type_of_target

    y = _labels_1d(y)
    counted = _count_labels(y)
    if counted is not None:
        classes, codes = counted
        _check_n_classes(classes)
        return classes, codes
    if y.dtype.kind == "f" and y.size and (y.max() >= 2.0 ** 63 or y.min() < -2.0 ** 63) and np.all(np.mod(y, 1) == 0):
        # whole numbers beyond int64: scikit-learn's type_of_target (and so its metrics, score's
        # accuracy among them) casts them to int64, which overflows ("continuous", with a warning)
        raise ValueError(f"y holds whole-number labels up to {np.abs(y).max():.6g} in magnitude, beyond int64, which "
                         "scikit-learn's metrics cannot take as classes; give the labels as strings (y.astype(str)) "
                         "or number the classes 0, 1, 2, ...")
    kind = type_of_target(y)
    if kind == "continuous":
        raise ValueError(
            "y holds continuous values (non-integer floats): BoostClassifier needs class labels. "
            "Convert them to integers or strings if they are classes."
        )
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Unknown label type {kind!r}: y must hold one class label per row.")
    try:
        encoder = LabelEncoder().fit(y)
    except TypeError as exc:
        raise ValueError(f"y mixes label types that cannot be sorted ({exc}); use one type for all labels.") from None
    classes = encoder.classes_
    _check_n_classes(classes)
    return classes, encoder.transform(y).astype(np.intp)


def _check_n_classes(classes) -> None:
    if len(classes) < 2:
        raise ValueError(f"y has only 1 class ({classes[0]}); a classifier needs at least 2 classes.")
    if len(classes) > MAX_CLASSES:
        raise ValueError(f"y has {len(classes)} classes; gpuboost supports at most {MAX_CLASSES}.")


def _count_labels(y: np.ndarray):
    """``encode_labels``'s (classes, codes) of integer or bool labels in a range of at most
    max(1024, n) values, by counting instead of sorting (linear in n: ten million labels of 10
    classes in 0.04 s, against 0.36 s for LabelEncoder's fit and transform): the same sorted
    classes, in y's dtype, and the same codes. None otherwise."""
    if y.dtype.kind not in "biu" or y.size == 0:
        return None
    low, high = int(y.min()), int(y.max())
    if high - low > max(1024, y.size) or high > np.iinfo(np.int64).max:
        return None
    shifted = y.astype(np.int64) - low
    present = np.flatnonzero(np.bincount(shifted, minlength=high - low + 1))
    lookup = np.zeros(high - low + 1, dtype=np.intp)
    lookup[present] = np.arange(present.size)
    return (present + low).astype(y.dtype), lookup[shifted]


def check_weight(sample_weight, n_rows: int):
    """sample_weight as float64 (n_rows,), C-contiguous and writable (a copy where it was not:
    numba compiles its kernels again for a read-only array, minutes on a first fit, and a pandas
    Series' values are read-only under pandas' copy-on-write), or None; finite, >= 0, not all
    0."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, np.ma.MaskedArray) and np.ma.getmaskarray(sample_weight).any():
        rows = np.flatnonzero(np.ma.getmaskarray(sample_weight).reshape(-1))
        raise ValueError(f"sample_weight has {rows.size} masked entries, at rows {rows[:5].tolist()}"
                         f"{' ...' if rows.size > 5 else ''}: give every row a weight (0 leaves a row out).")
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("sample_weight must be numbers, one per row of X.") from None
    if w.ndim == 0:  # one number: every row's weight, as scikit-learn takes it
        w = np.full(n_rows, float(w))
    if w.ndim > 1:  # (flattened, an (n, 2) array would give 2 n weights in an order of its own)
        raise ValueError(f"sample_weight must be 1-D, one weight per row of X (shape ({n_rows},)); got shape "
                         f"{w.shape}.")
    w = w.reshape(-1)
    if w.shape[0] != n_rows:
        raise ValueError(f"sample_weight has {w.shape[0]} entries but X has {n_rows} rows.")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(
            f"sample_weight must be finite and >= 0; rows {rows[:5].tolist()}{' ...' if rows.size > 5 else ''} "
            f"have {w[rows[:5]].tolist()}."
        )
    if not w.sum() > 0:
        raise ValueError(
            "sample_weight is zero for every row (it sums to 0): at least one row needs a positive weight."
        )
    if w.max() > MAX_WEIGHT:  # (weights of 1e160 overflowed G^2 in the gains: another model, silently)
        raise ValueError(
            f"sample_weight has values up to {w.max():.3g}, beyond {MAX_WEIGHT:g}: the sums of weighted gradients "
            "and their squares would overflow. Divide the weights by a constant (their maximum, say): the model "
            "depends only on their ratios, up to rounding (tol bounds the weighted loss: scale it alike)."
        )
    return np.require(w, requirements=["C", "W"])


def _check_class_weight(class_weight) -> None:
    """class_weight as check_params takes it: None, "balanced" or a dict of label -> weight."""
    if class_weight is None or (isinstance(class_weight, str) and class_weight == "balanced"):
        return
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict {{label: weight}}, got {class_weight!r}.")
    for label, value in class_weight.items():
        number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else np.nan
        if not 0 <= number <= MAX_WEIGHT:  # (NaN and the infinities too)
            raise ValueError(f"class_weight[{label!r}] must be a finite number in [0, {MAX_WEIGHT:g}], got {value!r}.")


def class_weights(class_weight, classes: np.ndarray, y_codes: np.ndarray) -> np.ndarray | None:
    """Each row's weight from class_weight (checked by check_params) given the classes (fit's
    classes_) and the rows' class codes, or None where every row's weight is 1.

    "balanced": n_samples / (n_classes * the class's count), counted over every row, as
    scikit-learn's ``compute_sample_weight`` counts them (sample weights are not counted). A
    dict: its weight for each class it names, 1 for the others. As in scikit-learn, labels
    that are not classes of y are ignored where the dict names every class of y (a dict made
    for all the classes, fitted on a fold without some of them), and an error otherwise (a
    misspelt label would leave its class at 1).
    """
    if class_weight is None:
        return None
    n_classes = len(classes)
    if isinstance(class_weight, str):  # "balanced"
        counts = np.bincount(y_codes, minlength=n_classes).astype(np.float64)
        per_class = y_codes.shape[0] / (n_classes * counts)
    else:
        code_of = {_plain(c): k for k, c in enumerate(classes.tolist())}
        unknown = [label for label in class_weight if _plain(label) not in code_of]
        named = {_plain(label) for label in class_weight}
        unweighted = [c for c in classes.tolist() if c not in named]
        if unknown and unweighted:
            raise ValueError(f"class_weight names labels that are not classes of y ({unknown[:5]}) and leaves classes "
                             f"of y at weight 1 ({unweighted[:5]}); y's classes are {classes[:10].tolist()}"
                             f"{' ...' if n_classes > 10 else ''}. Use y's labels as keys.")
        per_class = np.ones(n_classes)
        for label, value in class_weight.items():
            if _plain(label) in code_of:
                per_class[code_of[_plain(label)]] = float(value)
    if np.all(per_class == 1.0):
        return None  # (the unweighted fit: the same model, without the weighted passes)
    return per_class[y_codes]


def same_class_weight(a, b) -> bool:
    """Whether two class_weight parameters (checked) weigh every class alike for any y: None, {}
    and dicts whose weights are all 1 are the same; a dict's keys compare as labels."""
    def normal(class_weight):
        if isinstance(class_weight, dict):
            return {_plain(label): float(value) for label, value in class_weight.items() if float(value) != 1.0} or None
        return class_weight

    return normal(a) == normal(b)


def weight_classes(sample_weight, per_row):
    """sample_weight (checked, or None) times the rows' class weights (class_weights' per_row,
    or None), checked as check_weight checks sample weights."""
    if per_row is None:
        return sample_weight
    weight = per_row if sample_weight is None else sample_weight * per_row
    if not weight.sum() > 0:
        raise ValueError("class_weight and sample_weight leave every row a weight of 0: at least one row needs a "
                         "positive weight.")
    if weight.max() > MAX_WEIGHT:
        raise ValueError(f"sample_weight times class_weight reaches {weight.max():.3g}, beyond {MAX_WEIGHT:g}: the "
                         "sums of weighted gradients would overflow. Divide the weights by a constant.")
    return weight


def _plain(value):
    """A NumPy scalar as the Python number, boolean or string it holds (np.int64(3) -> 3): for
    dict lookups of labels, and for JSON (model files' parameters)."""
    return value.item() if isinstance(value, np.generic) else value


#: The largest sample weight check_weight takes: a node's gradient sum is at most n_samples
#: times it, and its square (the gains) must stay far below float64's 1.8e308
MAX_WEIGHT = 1e100


def check_eval_set(eval_set) -> list:
    """eval_set as a list of (X, y) pairs."""
    if eval_set is None:
        return []
    message = "eval_set must be a list of (X, y) pairs, such as [(X_test, y_test)]."
    if not isinstance(eval_set, (list, tuple)):
        raise ValueError(message)
    pairs = []
    for item in eval_set:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise ValueError(message)
        pairs.append(tuple(item))
    return pairs


def check_eval_weights(eval_sample_weight, n_sets: int) -> list:
    """eval_sample_weight as a list of n_sets entries (arrays or None; each checked with its
    eval set)."""
    if eval_sample_weight is None:
        return [None] * n_sets
    if not isinstance(eval_sample_weight, (list, tuple)) or len(eval_sample_weight) != n_sets:
        got = f"{len(eval_sample_weight)} entries" if isinstance(eval_sample_weight, (list, tuple)) else \
            type(eval_sample_weight).__name__
        raise ValueError(f"eval_sample_weight must be a list of one weight array (or None) per eval_set entry, "
                         f"{n_sets} here; got {got}.")
    return list(eval_sample_weight)


def check_dense_memory(shape, itemsize: int = 8) -> None:
    """Refuse, before scipy allocates it, the dense array of a sparse X (itemsize bytes a value:
    4 where it stays float32, else 8) whose memory cannot hold it (the kernels read a dense X: a
    100,000 x 1,000,000 matrix failed inside scipy, asking for 745 GiB, without a word of the
    densifying)."""
    n_rows, n_features = (int(v) for v in shape)
    needed = itemsize * n_rows * n_features
    available = available_memory()
    if available is not None and needed > available:
        raise MemoryError(
            f"X is a sparse matrix of {n_rows} rows and {n_features} features, which gpuboost makes dense: that "
            f"needs {needed / 2**30:.1f} GiB and {available / 2**30:.1f} GiB of memory is available. Keep fewer "
            "features (sklearn.feature_selection), or reduce them (sklearn.decomposition.TruncatedSVD).")


def available_memory(meminfo="/proc/meminfo", cgroup="/sys/fs/cgroup") -> int | None:
    """Bytes of memory this process may still take, where the system says (Linux), else None:
    the kernel's estimate of what new allocations can get without swapping (MemAvailable,
    which counts reclaimable caches; the free pages where it is missing), and no more than a
    container's (cgroup v2 or v1) memory limit leaves, its inactive page cache not counted as
    used (a parent group's limit is not read)."""
    limits = []
    try:
        with open(meminfo, encoding="ascii") as f:
            limits += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
    except (OSError, ValueError, IndexError):
        pass
    if not limits:
        try:
            limits.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    for limit_file, usage_file, stat_file, cache_key in (
            ("memory.max", "memory.current", "memory.stat", "inactive_file"),  # v2
            ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes", "memory/memory.stat",
             "total_inactive_file")):  # v1
        try:
            with open(os.path.join(cgroup, limit_file), encoding="ascii") as f:
                limit = f.read().strip()
            with open(os.path.join(cgroup, usage_file), encoding="ascii") as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        try:  # the page cache the kernel can drop (files read) counts as usage: it is not taken
            with open(os.path.join(cgroup, stat_file), encoding="ascii") as f:
                usage -= next((int(line.split()[1]) for line in f if line.split()[:1] == [cache_key]), 0)
        except (OSError, ValueError, IndexError):
            pass
        if limit.isdigit() and int(limit) < 2 ** 60:  # ("max", or v1's near 2^63: no limit)
            limits.append(max(0, int(limit) - max(0, usage)))
        break
    return min(limits) if limits else None


#: float64 (n_samples, n_classes) arrays a fit holds at once: F, p, the exponentials and the
#: update's buffers (measured: 48 bytes per row and class for AOSO and MART, 64 for the vector
#: trees' backend, which also keeps the targets and the working response)
SCORE_ARRAYS = 6
VECTOR_SCORE_ARRAYS = 8


def check_memory(n_rows: int, n_classes: int, vector: bool = False, n_features: int = 0, n_codes: int = 0,
                 max_leaves: int = 0, channels: int | None = None) -> None:
    """Refuse, before allocating, a problem whose arrays cannot fit in memory: the per-sample
    arrays of the scores and probabilities, and for the vector trees (K-LogitBoost, AdaBoost.MH,
    multi-label learning) their histograms, each (n_features, n_codes, channels) float64 (2
    n_classes + 1 numbers a bin, n_classes + 1 for AdaBoost.MH's):
    a split's two children's and the parent's, or where a child's may be derived from its
    parent's (base.histograms_derivable), every open node's, max_leaves + 1 (they counted 3:
    a K-LogitBoost fit of 150 labels held 7 times the estimate, 2026-11-27)."""
    from .backends.base import histograms_derivable

    per_row = (VECTOR_SCORE_ARRAYS if vector else SCORE_ARRAYS) * 8 * n_classes
    channels = 2 * n_classes + 1 if channels is None else int(channels)
    kept = (max_leaves + 1 if max_leaves and histograms_derivable(max_leaves, n_features, n_codes, channels)
            else 3)  # (max_leaves >= 2: at least the 3)
    histograms = kept * n_features * n_codes * channels * 8 if vector else 0
    needed = n_rows * per_row + histograms
    available = available_memory()
    if available is not None and needed > available:
        advice = "Train on fewer rows, or merge rare classes."
        if histograms > n_rows * per_row:
            advice = ("Most of it is histograms: use fewer features or a smaller max_bins, or an algorithm of pair "
                      "trees (aoso, mart), whose histograms have 2-3 numbers a bin instead of 2K + 1.")
        raise MemoryError(
            f"training on {n_rows} rows, {n_classes} classes{f' and {n_features} features' if vector else ''} "
            f"needs about {needed / 2**30:.1f} GiB for its scores and probabilities"
            f"{' and histograms' if vector else ''}, and {available / 2**30:.1f} GiB of memory is available. "
            f"{advice}"
        )
