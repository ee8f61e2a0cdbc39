"""Bad input gets a clear error; docs/bad-inputs.md lists each case with the message a user sees.

The table in the docs is checked against the messages raised here, so the two cannot drift
apart. ``python tests/test_validation.py`` prints the table afresh.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
import pytest

import gpuboost
from gpuboost import BoostClassifier

DOC = Path(__file__).resolve().parents[1] / "docs" / "bad-inputs.md"

rng = np.random.default_rng(0)
X = rng.normal(size=(20, 3))
y = np.arange(20) % 3


def small(**params):
    return BoostClassifier(n_estimators=2, max_leaves=4, **params)


def _object_X():
    bad = X.astype(object)
    bad[4, 1] = "red"
    return bad


def _pandas_category():
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"size": X[:, 0], "colour": pd.Categorical(["red", "blue"] * 10)})


def _pandas_dates(categorical=False):
    pd = pytest.importorskip("pandas")
    days = pd.date_range("2026-11-01", periods=20).astype("datetime64[ns]")
    return pd.DataFrame({"size": X[:, 0], "day": pd.Categorical(days) if categorical else days})


def _object_dates():
    dates = X.astype(object)
    dates[:, 2] = np.arange(20).astype("datetime64[D]").astype(object)
    dates[3, 2] = np.datetime64("2026-11-27T12:00:00")
    return dates


def _object_huge():
    huge = X.astype(object)
    huge[2, 0] = 10 ** 400
    return huge


def _repeated_columns():
    pd = pytest.importorskip("pandas")
    return pd.concat([pd.DataFrame({"a": X[:, 0], "b": X[:, 1].astype(object)}), pd.DataFrame({"a": X[:, 2]})], axis=1)


def _too_large_sparse():
    import scipy.sparse

    from gpuboost import _validation

    rows = np.arange(100_000)
    wide = scipy.sparse.csr_matrix((np.ones(100_000), (rows, rows * 7 % 1_000_000)), shape=(100_000, 1_000_000))
    real = _validation.available_memory
    _validation.available_memory = lambda: 64 * 2**30  # (the message's figure, whatever this machine has)
    try:
        small().fit(wide, np.arange(100_000) % 3)
    finally:
        _validation.available_memory = real


CASES = {
    "X and y of different lengths": lambda: small().fit(X, y[:10]),
    "empty X": lambda: small().fit(X[:0], y[:0]),
    "1-D X": lambda: small().fit(X[:, 0], y),
    "3-D X": lambda: small().fit(X[:, :, None], y),
    "a text value in an object array": lambda: small().fit(_object_X(), y),
    "a pandas column of text categories": lambda: small().fit(_pandas_category(), y),
    "complex X": lambda: small().fit(X.astype(complex), y),
    "X of dates (datetime64)": lambda: small().fit(np.arange(60).astype("datetime64[D]").reshape(20, 3), y),
    "a pandas column of dates": lambda: small().fit(_pandas_dates(), y),
    "a pandas categorical column of dates (converted, counts of nanoseconds)": lambda: small().fit(
        _pandas_dates(categorical=True), y),
    "dates in an object array (NumPy would make counts of their unit)": lambda: small().fit(_object_dates(), y),
    "an integer too large for a float in an object array": lambda: small().fit(_object_huge(), y),
    "dates in lists of rows": lambda: small().fit([[np.datetime64("2026-11-27") + i, 1.0] for i in range(20)], y),
    "a structured array": lambda: small().fit(np.zeros(20, dtype=[("a", float), ("b", float)]), y),
    "a masked array of complex numbers (a masked array is checked as the plain one)": lambda: small().fit(
        np.ma.masked_array(X.astype(complex), mask=X > 1), y),
    "a masked object array holding text": lambda: small().fit(np.ma.masked_array(_object_X()), y),
    "a pandas DataFrame with a repeated column name": lambda: small().fit(_repeated_columns(), y),
    "a sparse matrix too large to make dense": lambda: _too_large_sparse(),
    "y with one class only": lambda: small().fit(X, np.zeros(20)),
    "y of Python integers beyond 64 bits": lambda: small().fit(X, np.array([0, 1, 2**70, 3] * 5, dtype=object)),
    "y with a NaN label": lambda: small().fit(X, np.where(np.arange(20) == 3, np.nan, y)),
    "y with an infinite label": lambda: small().fit(X, np.where(np.arange(20) == 4, np.inf, y)),
    "y of whole-number floats beyond int64": lambda: small().fit(X, np.array([0.0, 1.0, 1e20])[y]),
    "y with a None label": lambda: small().fit(X, np.array([None] + ["a", "b"] * 9 + ["a"], dtype=object)),
    "y a masked array with a masked label (a masked entry is a missing label)": lambda: small().fit(
        X, np.ma.masked_array(y, mask=np.arange(20) == 5)),
    "a multi-label y with a masked entry": lambda: small().fit(
        X, np.ma.masked_array(np.eye(3, dtype=int)[y], mask=np.eye(20, 3, k=-4, dtype=bool))),
    "y mixing strings and numbers": lambda: small().fit(X, np.array([1, "a", 2.0, "b"] * 5, dtype=object)),
    "continuous y": lambda: small().fit(X, rng.normal(size=20)),
    "2-D y (several labels per row)": lambda: small().fit(X, np.stack([y, y], axis=1)),
    "multi-label y (0/1 indicator) for an algorithm without multi-label learning": lambda: small(
        algorithm="abcmart").fit(X, np.eye(3, dtype=int)[y]),
    "y is None": lambda: small().fit(X, None),
    "more than 65536 classes": lambda: small().fit(np.zeros((70000, 1)), np.arange(70000)),
    "negative sample_weight": lambda: small().fit(X, y, sample_weight=np.r_[-1.0, np.ones(19)]),
    "NaN sample_weight": lambda: small().fit(X, y, sample_weight=np.r_[np.nan, np.ones(19)]),
    "a masked sample_weight entry": lambda: small().fit(
        X, y, sample_weight=np.ma.masked_array(np.ones(20), mask=np.arange(20) % 9 == 2)),
    "sample_weight all zero": lambda: small().fit(X, y, sample_weight=np.zeros(20)),
    "positive sample_weight in one class only": lambda: small().fit(X, y, sample_weight=(y == 0) * 1.0),
    "sample_weight of another length": lambda: small().fit(X, y, sample_weight=np.ones(5)),
    "2-D sample_weight": lambda: small().fit(X, y, sample_weight=np.ones((10, 2))),
    "sample_weight so large that the sums would overflow": lambda: small().fit(X, y, sample_weight=np.full(20, 1e160)),
    "y a list mixing strings and numbers": lambda: small().fit(X, [1, "a", 2, "b"] * 5),
    "y a list mixing booleans and numbers": lambda: small().fit(X, [True, 0, 2, False] * 5),
    "y a pandas string column with a missing label": lambda: small().fit(X, _pandas_string_y()),
    "class_weight not None, 'balanced' or a dict": lambda: small(class_weight="auto").fit(X, y),
    "class_weight with a negative weight": lambda: small(class_weight={0: -1.0}).fit(X, y),
    "class_weight naming a label that is not a class of y": lambda: small(class_weight={0: 2.0, 7: 1.0}).fit(X, y),
    "class_weight for a multi-label indicator y": lambda: small(class_weight="balanced").fit(X, np.eye(3)[y]),
    "class_weight leaving rows of one class only": lambda: small(class_weight={1: 0, 2: 0}).fit(X, y),
    "min_child_weight < 0": lambda: small(min_child_weight=-1.0).fit(X, y),
    "subsample not in (0, 1]": lambda: small(subsample=0.0).fit(X, y),
    "subsample < 1 for AdaBoost.MH": lambda: small(algorithm="adaboostmh", subsample=0.5).fit(X, y),
    "colsample_bytree not in (0, 1]": lambda: small(colsample_bytree=1.5).fit(X, y),
    "validation_fraction not in (0, 1)": lambda: small(validation_fraction=1.5).fit(X, y),
    "validation_fraction holding out no row": lambda: small(validation_fraction=0.01).fit(X, y),
    "early_stopping_rounds without eval_set or validation_fraction": lambda: small(early_stopping_rounds=3).fit(X, y),
    "max_leaves < 2": lambda: BoostClassifier(max_leaves=1).fit(X, y),
    "max_depth < 1": lambda: small(max_depth=0).fit(X, y),
    "min_samples_leaf of 2**63 or more (beyond the kernels' 64-bit integers)": lambda: small(
        min_samples_leaf=2 ** 70).fit(X, y),
    "learning_rate <= 0": lambda: small(learning_rate=0.0).fit(X, y),
    "n_estimators not an integer": lambda: BoostClassifier(n_estimators=2.5).fit(X, y),
    "max_bins above 65535": lambda: small(max_bins=70000).fit(X, y),
    "min_samples_leaf < 1": lambda: small(min_samples_leaf=0).fit(X, y),
    "leaf_clip <= 0": lambda: small(leaf_clip=0).fit(X, y),
    "tol < 0": lambda: small(tol=-1.0).fit(X, y),
    "unknown pair_rule": lambda: small(pair_rule="eq31").fit(X, y),
    "unknown algorithm": lambda: small(algorithm="xgboost").fit(X, y),
    "unknown device": lambda: small(device="gpu").fit(X, y),
    "random_state not an int or RandomState": lambda: small(random_state="abc").fit(X, y),
    "random_state an int outside [0, 2**32 - 1]": lambda: small(random_state=-1).fit(X, y),
    "device='cuda' where CuPy is not installed": lambda: _without_cupy(lambda: small(device="cuda").fit(X, y)),
    "device='cuda' for an algorithm the GPU does not train": lambda: small(device="cuda", algorithm="mart").fit(X, y),
    "n_jobs = 0": lambda: small(n_jobs=0).fit(X, y),
    "callbacks that are not Callback objects": lambda: small(callbacks=[print]).fit(X, y),
    "eval_set not a list of pairs": lambda: small().fit(X, y, eval_set=(X, y)),
    "eval_set with labels unseen in training": lambda: small().fit(X, y, eval_set=[(X, y + 5)]),
    "eval_sample_weight not one entry per eval_set entry": lambda: small().fit(
        X, y, eval_set=[(X, y)], eval_sample_weight=[np.ones(20), np.ones(20)]),
    "eval_sample_weight of another length than its eval set": lambda: small().fit(
        X, y, eval_set=[(X, y)], eval_sample_weight=[np.ones(5)]),
    "predict before fit": lambda: small().predict(X),
    "predict with the wrong number of features": lambda: small().fit(X, y).predict(X[:, :2]),
    "init_model trained with another learning_rate": lambda: small(learning_rate=0.2).fit(
        X, y, init_model=small().fit(X, y)),
    "load a truncated model file": lambda: gpuboost.load_model(_truncated_file()),
    "load_model given a number (a file descriptor)": lambda: gpuboost.load_model(1),
    "save_model to a folder that does not exist": lambda: small().fit(X, y).save_model("/nonexistent/model.json"),
    "save_model after set_params gave an invalid parameter": lambda: small().fit(X, y).set_params(
        n_estimators=0).save_model(Path(tempfile.mkdtemp()) / "model.json"),
    "K-LogitBoost at a learning rate that overflows its scores": lambda: small(
        algorithm="klogitboost", learning_rate=1000.0).fit(X, y),
}


def _pandas_string_y():
    pd = pytest.importorskip("pandas")
    return pd.array([None] + ["a", "b"] * 9 + ["a"], dtype="string")


def _without_cupy(fit):
    """Run fit as on a machine without CuPy (the message then reads the same everywhere)."""
    saved = sys.modules.get("cupy", False)
    sys.modules["cupy"] = None  # makes "import cupy" fail
    try:
        return fit()
    finally:
        if saved is False:
            del sys.modules["cupy"]
        else:
            sys.modules["cupy"] = saved


def _truncated_file():
    import tempfile

    path = Path(tempfile.mkdtemp()) / "model.json"
    small().fit(X, y).save_model(path)
    path.write_text(path.read_text()[:10])  # cut inside the first key: the same text whatever the params
    return path


def raised(name: str) -> tuple[str, str]:
    """(exception type, message) raised by a case."""
    try:
        CASES[name]()
    except Exception as exc:  # noqa: BLE001 - recording whatever a user would see
        message = re.sub(r"/tmp/\S+/model\.json", "model.json", str(exc))
        return type(exc).__name__, " ".join(message.split())
    raise AssertionError(f"{name}: no error")


def documented() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("input", "---"):
            rows[cells[0]] = (cells[1].strip("`"), cells[2].replace("\\|", "|"))
    return rows


@pytest.mark.parametrize("name", list(CASES))
def test_each_bad_input_has_a_clear_documented_error(name):
    kind, message = raised(name)
    assert kind in ("ValueError", "TypeError", "RuntimeError", "NotFittedError", "ModelFormatError",
                    "FileNotFoundError", "FloatingPointError", "MemoryError")
    assert "Traceback" not in message and len(message) > 20
    doc = documented()
    assert name in doc, f"docs/bad-inputs.md lacks {name!r}"
    assert doc[name] == (kind, message), "docs/bad-inputs.md is out of date: run python tests/test_validation.py"


def test_nan_and_inf_in_X_are_not_errors():
    X_missing = X.copy()
    X_missing[::3, 0] = np.nan
    X_missing[1, 1] = np.inf
    assert small().fit(X_missing, y).predict(X_missing).shape == (20,)


def test_pandas_na_in_X_is_a_missing_value():
    """pandas.NA in an object column (or an object array) is a missing value, as None and NaN
    are: the same model as with NaN there (it raised float()'s TypeError from inside pandas)."""
    pd = pytest.importorskip("pandas")
    X_nan = X.copy()
    X_nan[[2, 5], 1] = np.nan
    column = pd.Series(X[:, 1], dtype=object)
    column[[2, 5]] = pd.NA
    frame = pd.DataFrame({"a": X[:, 0], "b": column, "c": X[:, 2]})
    X_object = X.astype(object)
    X_object[[2, 5], 1] = pd.NA
    expected = small().fit(X_nan, y).predict_proba(X_nan)
    np.testing.assert_array_equal(small().fit(frame, y).predict_proba(frame), expected)
    np.testing.assert_array_equal(small().fit(X_object, y).predict_proba(X_object), expected)


@pytest.mark.parametrize("dtype", [float, object])
def test_a_masked_entry_is_a_missing_value(dtype):
    """A masked entry is a missing value, whatever it holds; a masked object array's unmasked
    entries are checked and converted as a plain object array's (it trained on the real part of
    complex numbers, and raised NumPy's own errors on text)."""
    X_values = X.astype(dtype)
    if dtype is object:
        X_values[[1, 7], 2] = "n/a"  # (masked: missing, not text)
    X_masked = np.ma.masked_array(X_values, mask=np.zeros(X.shape, bool))
    X_masked.mask[[1, 7], 2] = True
    X_nan = X.copy()
    X_nan[[1, 7], 2] = np.nan
    np.testing.assert_array_equal(small().fit(X_masked, y).predict_proba(X_masked),
                                  small().fit(X_nan, y).predict_proba(X_nan))


def test_a_masked_y_or_weight_without_a_masked_entry_is_the_plain_one():
    """A masked y (or sample_weight) is refused only where an entry is masked (tested in CASES);
    with none masked it is the plain array. NumPy would drop the mask, so a masked label used to
    train as whatever value it held."""
    plain = small().fit(X, y, sample_weight=np.arange(1.0, 21.0)).predict_proba(X)
    masked = small().fit(X, np.ma.masked_array(y), sample_weight=np.ma.masked_array(np.arange(1.0, 21.0)))
    np.testing.assert_array_equal(masked.predict_proba(X), plain)
    Y = np.eye(3, dtype=int)[y]
    np.testing.assert_array_equal(small().fit(X, np.ma.masked_array(Y)).predict_proba(X),
                                  small().fit(X, Y).predict_proba(X))


def test_masked_entries_are_named_where_they_are():
    """A column y of shape (n, 1) names rows; a 0-d masked y is refused by its shape; masked
    multi-label Y in gpuboost.test and masked scores in gpuboost.metrics are named as such."""
    import gpuboost
    from gpuboost import metrics

    with pytest.raises(ValueError, match=r"y has 1 masked entries, at rows \[4\]"):
        small().fit(X, np.ma.masked_array(y[:, None], mask=(np.arange(20) == 4)[:, None]))
    with pytest.raises(ValueError, match="y must hold one class label per row"):
        small().fit(X, np.ma.masked)
    Y = np.eye(3, dtype=int)[y]
    model = small().fit(X, Y)
    masked_Y = np.ma.masked_array(Y, mask=np.eye(20, 3, k=-2, dtype=bool))
    with pytest.raises(ValueError, match=r"Y has 3 masked entries, at \[row, label\] \[\(2, 0\), \(3, 1\)"):
        gpuboost.test(masked_Y, X, model)
    with pytest.raises(ValueError, match="scores has 3 masked entries.*a masked entry is a missing value"):
        metrics.average_precision(Y, np.ma.masked_array(model.decision_function(X), mask=masked_Y.mask))


def test_a_masked_array_of_dates_is_refused_as_the_plain_one():
    dates = np.ma.masked_array(np.arange(60).astype("datetime64[D]").reshape(20, 3))
    with pytest.raises(ValueError, match="holds dates or durations"):
        small().fit(dates, y)


class _ListColumnsFrame:
    """A data frame whose columns are a list of names (polars'), not a pandas Index."""

    def __init__(self, values, names):
        self._values, self.columns, self.dtypes = values, list(names), [values.dtype] * len(names)
        self.shape = values.shape

    def __array__(self, dtype=None, copy=None):
        return self._values if dtype is None else self._values.astype(dtype)

    def __len__(self):
        return len(self._values)


def test_a_frame_with_a_list_of_column_names_is_checked_for_repeats():
    """Column names are compared as a list (polars' frames have one; asking it for pandas'
    Index.is_unique broke every polars fit): distinct ones train, repeated ones are a clear
    error."""
    model = small().fit(_ListColumnsFrame(X, ["a", "b", "c"]), y)
    np.testing.assert_array_equal(model.predict_proba(X), small().fit(X, y).predict_proba(X))
    with pytest.raises(ValueError, match=r"X has repeated column names \('b'\)"):
        small().fit(_ListColumnsFrame(X, ["b", "a", "b"]), y)


def test_n_jobs_none_follows_openmps_limits():
    """n_jobs=None runs on the CPUs the process may use, or as many threads as OpenMP is
    limited to (OMP_NUM_THREADS, threadpoolctl), as scikit-learn's estimators do."""
    from threadpoolctl import threadpool_limits

    from gpuboost.sklearn import openmp_threads, usable_cpus

    model = BoostClassifier()
    assert model._n_threads() == min(usable_cpus(), openmp_threads())
    with threadpool_limits(limits=1, user_api="openmp"):
        assert openmp_threads() == 1 and model._n_threads() == 1
        assert BoostClassifier(n_jobs=2)._n_threads() == min(2, usable_cpus())  # (an explicit n_jobs is kept)


def test_usable_cpus_are_counted_again_after_a_second_or_a_change(monkeypatch):
    """usable_cpus keeps loky's count for CPUS_KEPT_SECONDS (it reads cgroup files, twice a
    prediction), and counts again after that, or where the affinity or LOKY_MAX_CPU_COUNT
    changed."""
    from joblib.externals import loky

    from gpuboost import sklearn as module

    counted = []
    monkeypatch.setattr(loky, "cpu_count", lambda: counted.append(1) or 3)
    monkeypatch.setattr(module, "_cpus_kept", None)
    clock = [100.0]
    monkeypatch.setattr(module, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    assert module.usable_cpus() == 3 and module.usable_cpus() == 3 and len(counted) == 1
    clock[0] += 0.9
    assert module.usable_cpus() == 3 and len(counted) == 1
    clock[0] += 0.2  # past the second
    assert module.usable_cpus() == 3 and len(counted) == 2
    monkeypatch.setenv("LOKY_MAX_CPU_COUNT", "12345")  # (a value no environment has already: a change)
    assert module.usable_cpus() == 3 and len(counted) == 3
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {10_000})
        assert module.usable_cpus() == 3 and len(counted) == 4
    before = len(counted)
    clock[0] -= 50.0  # a clock that went back counts again too
    assert module.usable_cpus() == 3 and len(counted) == before + 1


def test_python_integer_labels_of_uint64_are_uint64():
    """An object y of Python integers that fit uint64 but not int64 (ids, hashes) trains as the
    uint64 array of them does (it was refused as an 'unknown' label type)."""
    labels = np.array([1, 2**63 + 5, 2**64 - 1], dtype=np.uint64)
    as_uint64 = small().fit(X, labels[y])
    as_objects = small().fit(X, np.array([int(v) for v in labels[y]], dtype=object))
    assert as_objects.classes_.dtype == np.uint64
    np.testing.assert_array_equal(as_objects.classes_, labels)
    np.testing.assert_array_equal(as_objects.predict_proba(X), as_uint64.predict_proba(X))


def test_a_list_of_one_label_type_is_unchanged():
    """The check of a list's label types leaves lists of one type as NumPy reads them."""
    assert small().fit(X, list(y)).classes_.tolist() == [0, 1, 2]
    strings = small().fit(X, ["a", "b", "c", "d"] * 5)
    assert strings.classes_.dtype.kind == "U" and strings.classes_.tolist() == ["a", "b", "c", "d"]
    assert small().fit(X, [1, 2.0, 3] * 6 + [1, 2.0]).classes_.tolist() == [1.0, 2.0, 3.0]


def test_an_object_array_of_integers_is_integer_labels():
    # what a pandas column of Python ints gives; scikit-learn's type_of_target calls it 'unknown'
    model = small().fit(X, y.astype(object), eval_set=[(X, y.astype(object))])
    assert model.classes_.dtype.kind == "i" and model.classes_.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(model.predict_proba(X), small().fit(X, y).predict_proba(X))


@pytest.mark.parametrize("labels", [
    np.array([3, 1, 3, 7, 1]), np.array([-5, 2, -5, 0], dtype=np.int8), np.array([True, False, True]),
    np.array([0, 2**63 + 5, 7], dtype=np.uint64), np.array([2**64 - 1, 2**64 - 3], dtype=np.uint64),
    np.array([10, 10**9, 10]), rng.integers(100, 140, size=5000).astype(np.uint16),
])
def test_labels_counted_are_labels_sorted(labels):
    """encode_labels counts small-range integer labels (linear time) instead of sorting them:
    the same classes, in y's dtype, and the same codes as scikit-learn's LabelEncoder."""
    from sklearn.preprocessing import LabelEncoder

    from gpuboost._validation import encode_labels

    classes, codes = encode_labels(labels)
    encoder = LabelEncoder().fit(labels)
    assert classes.dtype == encoder.classes_.dtype
    np.testing.assert_array_equal(classes, encoder.classes_)
    np.testing.assert_array_equal(codes, encoder.transform(labels))
    assert codes.dtype == np.intp


@pytest.mark.parametrize("labels", [np.ones(5, bool), np.zeros(4, bool), np.full(3, 7, np.uint8),
                                    np.full(4, -2, np.int64)])
def test_one_counted_label_is_a_clear_error(labels):
    """A y of one integer or bool value (all True included) gets encode_labels' clear error,
    not an error from inside its counting."""
    from gpuboost._validation import encode_labels

    with pytest.raises(ValueError, match="only 1 class"):
        encode_labels(labels)


def table() -> str:
    lines = ["| input | error | message |", "| --- | --- | --- |"]
    for name in CASES:
        kind, message = raised(name)
        lines.append(f"| {name} | `{kind}` | {message.replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    print(table())



def test_available_memory_reads_memavailable_and_a_containers_limit(tmp_path):
    from gpuboost._validation import available_memory

    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemFree:          100000 kB\nMemAvailable:    8000000 kB\n")
    nothing = tmp_path / "no-cgroup"
    assert available_memory(meminfo, nothing) == 8000000 * 1024  # (not MemFree: caches can be reclaimed)
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.max").write_text("2147483648\n")
    (v2 / "memory.current").write_text("536870912\n")
    assert available_memory(meminfo, v2) == 2 ** 31 - 2 ** 29
    (v2 / "memory.stat").write_text("anon 100\nfile 400000000\ninactive_file 300000000\n")
    assert available_memory(meminfo, v2) == 2 ** 31 - 2 ** 29 + 300000000  # (files read: reclaimable)
    (v2 / "memory.max").write_text("max\n")
    assert available_memory(meminfo, v2) == 8000000 * 1024
    v1 = tmp_path / "v1"
    (v1 / "memory").mkdir(parents=True)
    (v1 / "memory" / "memory.limit_in_bytes").write_text("1073741824\n")
    (v1 / "memory" / "memory.usage_in_bytes").write_text("2147483648\n")
    assert available_memory(meminfo, v1) == 0  # (over its limit already)
    (v1 / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no limit"
    assert available_memory(meminfo, v1) == 8000000 * 1024


@pytest.mark.parametrize("algorithm, per_cell", [("aoso", 48), ("mart", 48), ("klogitboost", 64)])
def test_a_fit_memory_cannot_hold_is_refused_before_it_allocates(monkeypatch, algorithm, per_cell):
    """The estimate counts what a fit holds (6 or 8 float64 arrays of n x K, measured 48 and 64
    bytes a cell; it counted 3), so that a fit that would fail or be killed later is a clear
    MemoryError now."""
    from gpuboost import _validation

    n, K = 3000, 4
    X, y = np.random.default_rng(0).normal(size=(n, 3)), np.arange(n) % K
    monkeypatch.setattr(_validation, "available_memory", lambda: per_cell * n * K - 1)
    with pytest.raises(MemoryError, match=f"training on {n} rows, {K} classes.*GiB of memory is available"):
        BoostClassifier(algorithm=algorithm, n_estimators=1).fit(X, y)
    if algorithm != "klogitboost":
        monkeypatch.setattr(_validation, "available_memory", lambda: per_cell * n * K)
        BoostClassifier(algorithm=algorithm, n_estimators=1).fit(X, y)


def test_vector_trees_count_their_histograms(monkeypatch):
    """The vector trees' histograms count, for the columns the backend holds (the ones that can
    split), with as many bins as the binning made."""
    from gpuboost import _validation

    n, K, D = 300, 50, 200
    X, y = np.random.default_rng(0).normal(size=(n, D)), np.arange(n) % K
    histograms = 3 * D * 256 * (2 * K + 1) * 8  # (max_bins 255 and the missing values' code)
    monkeypatch.setattr(_validation, "available_memory", lambda: histograms)
    with pytest.raises(MemoryError, match="Most of it is histograms: use fewer features or a smaller max_bins"):
        BoostClassifier(algorithm="klogitboost", n_estimators=1).fit(X, y)
    BoostClassifier(algorithm="aoso", n_estimators=1, max_leaves=4).fit(X, y)  # (pair trees: no such term)
    wide = np.concatenate([X[:, :5], np.ones((n, 20000))], axis=1)  # (constant columns: not in the backend)
    BoostClassifier(algorithm="klogitboost", n_estimators=1).fit(wide, y)


@pytest.mark.parametrize("algorithm, width", [("klogitboost", lambda K: 2 * K + 1), ("adaboostmh", lambda K: K + 1)])
def test_vector_trees_count_every_open_nodes_histogram_where_children_derive_theirs(monkeypatch, algorithm, width):
    """Where a child's histogram may be derived from its parent's (histograms_derivable), every
    open node keeps its own until its children have theirs: max_leaves + 1 of them, not 3 (a
    K-LogitBoost fit of 150 labels held 7 times the estimate), each of 2K + 1 numbers a bin,
    K + 1 for AdaBoost.MH."""
    from gpuboost import _validation
    from gpuboost.backends.base import histograms_derivable

    n, K, D, leaves = 300, 10, 20, 16
    X, y = np.random.default_rng(0).normal(size=(n, D)), np.arange(n) % K
    one = D * 256 * width(K) * 8
    assert histograms_derivable(leaves, D, 256, width(K))
    scores = _validation.VECTOR_SCORE_ARRAYS * 8 * K * n
    monkeypatch.setattr(_validation, "available_memory", lambda: scores + (leaves + 1) * one - 1)
    with pytest.raises(MemoryError, match="Most of it is histograms"):
        BoostClassifier(algorithm=algorithm, n_estimators=1, max_leaves=leaves).fit(X, y)
    monkeypatch.setattr(_validation, "available_memory", lambda: scores + (leaves + 1) * one)
    BoostClassifier(algorithm=algorithm, n_estimators=1, max_leaves=leaves).fit(X, y)
    # a tree of n / min_samples_leaf leaves at most (4) keeps as many, and one more
    monkeypatch.setattr(_validation, "available_memory", lambda: scores + 5 * one)
    BoostClassifier(algorithm=algorithm, n_estimators=1, max_leaves=leaves, min_samples_leaf=n // 4).fit(X, y)


def test_float32_sparse_and_masked_X_stay_float32(monkeypatch):
    """A float32 scipy.sparse X is made dense as float32 (and its memory counted so: 4 bytes a
    value), a masked float32 X filled as float32: neither becomes a float64 copy."""
    import scipy.sparse

    from gpuboost import _validation

    dense = np.where(np.abs(X) > 1, X, 0).astype(np.float32)
    sparse = scipy.sparse.csr_matrix(dense)
    masked = np.ma.masked_array(dense, mask=np.abs(X) > 1.5)
    est = small()
    assert _validation.check_X(est, sparse, reset=True).dtype == np.float32
    assert _validation.check_X(est, masked, reset=True).dtype == np.float32
    monkeypatch.setattr(_validation, "available_memory", lambda: 5 * 20 * 3)  # (20 x 3 values: 240 bytes in float32)
    assert _validation.check_X(est, sparse, reset=True).shape == (20, 3)
    with pytest.raises(MemoryError, match="needs 0.0 GiB"):
        _validation.check_X(est, scipy.sparse.csr_matrix(dense.astype(np.float64)), reset=True)
