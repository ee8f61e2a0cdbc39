"""Model files: round trips with identical predictions, clear errors on bad files."""

import json
import re

import numpy as np
import pytest

import gpuboost
from gpuboost import BoostClassifier
from gpuboost.io import FORMAT_VERSION, ModelFormatError


@pytest.fixture
def fitted(small_multiclass):
    X, y = small_multiclass
    X = X.copy()
    X[::7, 1] = np.nan
    X[::11, 2] = np.inf
    return BoostClassifier(n_estimators=15, max_leaves=6).fit(X, y), X


def test_round_trip_predicts_identically(fitted, tmp_path):
    model, X = fitted
    path = tmp_path / "model.json"
    model.save_model(path)
    loaded = gpuboost.load_model(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(loaded.classes_, model.classes_)
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.train_loss_, model.train_loss_)
    # the estimator method loads in place, and saving again writes the same bytes
    again = BoostClassifier().load_model(path)
    again.save_model(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_loading_into_a_fitted_estimator_leaves_nothing_of_its_model(fitted, small_multiclass, tmp_path):
    """load_model replaces the fitted state whole: an estimator that had stopped early (its
    best_iteration_, best_score_) holds what a fresh load of the file holds, no more."""
    model, X = fitted
    model.save_model(tmp_path / "m.json")
    Xs, ys = small_multiclass
    earlier = BoostClassifier(algorithm="abcmart", n_estimators=30, max_leaves=4, learning_rate=0.5,
                              early_stopping_rounds=1).fit(Xs[:200], ys[:200], eval_set=[(Xs[200:], ys[200:])])
    earlier.custom_ = "set by a callback"
    assert hasattr(earlier, "best_iteration_")
    earlier.load_model(tmp_path / "m.json")
    fresh = gpuboost.load_model(tmp_path / "m.json")
    assert sorted(vars(earlier)) == sorted(vars(fresh))
    np.testing.assert_array_equal(earlier.predict_proba(X), model.predict_proba(X))


def test_saving_a_parameter_no_load_would_take_keeps_the_file(fitted, tmp_path):
    """set_params after fit can set what fit refuses (n_estimators=0): save_model says so and
    leaves the file it would have replaced, which loads as before."""
    model, X = fitted
    model.save_model(tmp_path / "m.json")
    before = (tmp_path / "m.json").read_bytes()
    model.set_params(n_estimators=0)
    with pytest.raises(ValueError, match="cannot save the model: n_estimators must be an integer >= 1, got 0"):
        model.save_model(tmp_path / "m.json")
    assert (tmp_path / "m.json").read_bytes() == before
    np.testing.assert_array_equal(gpuboost.load_model(tmp_path / "m.json").predict_proba(X), model.predict_proba(X))


def test_string_labels_and_feature_names_survive(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(80, 2)), columns=["height", "width"])
    y = np.where(df["height"] > 0, "tall", "short")
    model = BoostClassifier(n_estimators=5, max_leaves=4).fit(df, y)
    model.save_model(tmp_path / "m.json")
    loaded = gpuboost.load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.feature_names_in_, ["height", "width"])
    np.testing.assert_array_equal(loaded.predict(df), model.predict(df))


def test_the_file_is_documented_json(fitted, tmp_path):
    model, _ = fitted
    model.save_model(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    assert data["format"] == "gpuboost-model" and data["format_version"] == FORMAT_VERSION
    assert len(data["trees"]) == 15
    assert set(data["trees"][0]) == {"feature", "bin", "threshold", "missing_left", "left", "right",
                                     "pair", "value", "n_samples", "gain"}


def test_newer_format_is_refused_with_advice(fitted, tmp_path):
    model, _ = fitted
    path = tmp_path / "m.json"
    model.save_model(path)
    data = json.loads(path.read_text())
    data["format_version"] = FORMAT_VERSION + 1  # (a newer writer would also checksum differently)
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFormatError, match="Upgrade gpuboost"):
        gpuboost.load_model(path)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda text: text[: len(text) // 2], "not valid JSON"),
        (lambda text: text.replace('"gpuboost-model"', '"other"'), "not a gpuboost model"),
        (lambda text: text.replace('"trees":', '"forest":'), "damaged"),
        (lambda text: "\x00\xff" + text, "not"),
    ],
)
def test_damaged_files_are_refused(fitted, tmp_path, damage, message):
    model, _ = fitted
    path = tmp_path / "m.json"
    model.save_model(path)
    path.write_text(damage(path.read_text()), encoding="latin-1")
    with pytest.raises(ModelFormatError, match=message):
        gpuboost.load_model(path)


def test_edited_file_is_refused(fitted, tmp_path):
    model, _ = fitted
    path = tmp_path / "m.json"
    model.save_model(path)
    data = json.loads(path.read_text())
    data["trees"][3]["value"][0] *= 1.5  # still a well-formed model, but not the one saved
    path.write_text(json.dumps(data, separators=(",", ":")))
    with pytest.raises(ModelFormatError, match="edited or damaged"):
        gpuboost.load_model(path)


def test_structurally_broken_tree_is_refused_even_with_a_valid_checksum(fitted, tmp_path):
    def bad_link(data):
        data["trees"][3]["left"][0] = 999  # a writer's bug rather than an edit

    path = _saved_with_valid_checksum(fitted[0], tmp_path, bad_link)
    with pytest.raises(ModelFormatError, match="tree 3 is damaged"):
        gpuboost.load_model(path)


def test_saving_an_unfitted_model_fails(tmp_path):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        BoostClassifier().save_model(tmp_path / "m.json")
    assert not any(tmp_path.iterdir())  # no stray temporary file


def test_saved_file_is_an_ordinary_readable_file(fitted, tmp_path):
    import os
    import stat

    model, _ = fitted
    model.save_model(tmp_path / "m.json")
    mode = stat.S_IMODE(os.stat(tmp_path / "m.json").st_mode)
    assert mode & stat.S_IRUSR and mode & stat.S_IWUSR
    assert mode == 0o666 & ~_current_umask()


def _current_umask():
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_same_data_same_bytes_across_processes(tmp_path):
    import subprocess
    import sys

    from conftest import REPO

    script = (
        "import sys, numpy as np\n"
        "from gpuboost import BoostClassifier\n"
        "rng = np.random.default_rng(3)\n"
        "X = rng.normal(size=(500, 5)); X[::9, 2] = np.nan\n"
        "y = np.digitize(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=500), [-1, 0, 1])\n"
        "BoostClassifier(n_estimators=15, max_leaves=10).fit(X, y).save_model(sys.argv[1])\n"
    )
    outputs = []
    for seed in ("1", "2"):
        path = tmp_path / f"m{seed}.json"
        env = {"PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
        subprocess.run([sys.executable, "-c", script, str(path)], check=True, env=env)
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1]


def test_tree_count_must_match_the_iterations(fitted, tmp_path):
    path = _saved_with_valid_checksum(fitted[0], tmp_path, lambda data: data["trees"].pop())
    target = BoostClassifier(learning_rate=0.3)
    with pytest.raises(ModelFormatError, match="14 trees for 15 iterations"):
        target.load_model(path)
    assert target.learning_rate == 0.3  # a failed load changes nothing


def test_leaf_thresholds_survive_the_round_trip(fitted, tmp_path):
    model, _ = fitted
    model.save_model(tmp_path / "m.json")
    loaded = gpuboost.load_model(tmp_path / "m.json")
    for a, b in zip(model.trees_, loaded.trees_):
        np.testing.assert_array_equal(a.threshold, b.threshold)  # NaN at leaves, inf kept


def test_labels_beyond_int64_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    labels = np.array([1, 2**63 + 5, 2**64 - 1], dtype=np.uint64)  # as a uint64 y (ids, hashes) has
    y = labels[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0)]
    model = BoostClassifier(n_estimators=3, max_leaves=4).fit(X, y)
    model.save_model(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    assert data["classes"] == {"kind": "int", "values": [1, 2**63 + 5, 2**64 - 1], "dtype": "uint64"}
    loaded = gpuboost.load_model(tmp_path / "m.json")
    assert loaded.classes_.dtype == np.uint64
    np.testing.assert_array_equal(loaded.classes_, labels)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    # a file written before classes named their dtype: uint64 from the values alone, as then
    older = gpuboost.load_model(_saved_with_valid_checksum(model, tmp_path, lambda d: d["classes"].pop("dtype")))
    assert older.classes_.dtype == np.uint64
    np.testing.assert_array_equal(older.predict(X), model.predict(X))


@pytest.mark.parametrize("classes, message", [
    ({"kind": "int", "values": [-(2**63) - 1, 0, 1, 2]}, "fit neither int64 nor uint64"),
    ({"kind": "int", "values": [0, 1, 2, 2**64]}, "fit neither int64 nor uint64"),
    ({"kind": "int", "values": [-1, 0, 1, 2**63]}, "fit neither int64 nor uint64"),
    ({"kind": "int", "values": [0, 1, 2, 3.5]}, "of kind 'int' hold values of another type"),
    ({"kind": "int", "values": [0, 1, 2, "3"]}, "of kind 'int' hold values of another type"),
    ({"kind": "int", "values": [False, 1, 2, 3]}, "of kind 'int' hold values of another type"),
    ({"kind": "float", "values": [0.0, 1.0, 2.0, None]}, "of kind 'float' hold values of another type"),
    ({"kind": "str", "values": ["a", "b", "c", 4]}, "of kind 'str' hold values of another type"),
    ({"kind": "str", "values": [["a"], ["b"], ["c"], ["d"]]}, "of kind 'str' hold values of another type"),
    ({"kind": "int", "values": [3, 2, 1, 0]}, "not distinct and sorted"),
    ({"kind": "int", "values": [0, 1, 1, 2]}, "not distinct and sorted"),
    ({"kind": "complex", "values": [0, 1, 2, 3]}, "unknown class label kind 'complex'.*upgrade gpuboost"),
    ({"kind": ["int"], "values": [0, 1, 2, 3]}, "unknown class label kind"),
    ({"kind": "int", "values": 4}, "a list of 'values'"),
    ([0, 1, 2, 3], "a list of 'values'"),
], ids=["below int64", "beyond uint64", "int64 and uint64", "a float", "a string", "a bool", "a null", "a number",
        "lists", "unsorted", "repeated", "unknown kind", "kind a list", "values a number", "a list"])
def test_damaged_classes_are_refused(fitted, tmp_path, classes, message):
    path = _saved_with_valid_checksum(fitted[0], tmp_path, lambda data: data.update(classes=classes))
    with pytest.raises(ModelFormatError, match=message):
        gpuboost.load_model(path)


def test_multi_label_classes_must_be_label_indices(fitted, tmp_path):
    def edit(data):
        data.update(multilabel=True, classes={"kind": "int", "values": [0, 1, 2, 5]})

    with pytest.raises(ModelFormatError, match="label indices"):
        gpuboost.load_model(_saved_with_valid_checksum(fitted[0], tmp_path, edit))


def test_a_number_too_large_for_its_array_is_refused(fitted, tmp_path):
    def edit(data):
        data["trees"][0]["feature"][0] = 2**40  # an OverflowError inside, a ModelFormatError outside

    with pytest.raises(ModelFormatError, match="damaged or was edited: OverflowError"):
        gpuboost.load_model(_saved_with_valid_checksum(fitted[0], tmp_path, edit))


def _saved_with_valid_checksum(model, tmp_path, edit):
    """A saved model whose content ``edit(data)`` changed and whose checksum was then redone,
    as a buggy writer (not an edit after saving) would produce."""
    from gpuboost.io import _checksum

    path = tmp_path / "m.json"
    model.save_model(path)
    data = json.loads(path.read_text())
    del data["checksum"]
    edit(data)
    data["checksum"] = _checksum(data)
    path.write_text(json.dumps(data, separators=(",", ":")))
    return path


def test_a_tree_keeps_read_only_views_and_leaves_its_arrays_writable():
    # an estimator keeps its trees packed for prediction, so a tree's arrays cannot be changed
    # through the tree; the arrays it was built from stay the caller's, writable
    from gpuboost.tree import Tree

    arrays = dict(feature=np.array([-1], np.int32), bin=np.array([-1], np.int32), threshold=np.array([np.nan]),
                  missing_left=np.array([False]), left=np.array([-1], np.int32), right=np.array([-1], np.int32),
                  pair=np.array([[0, 1]], np.int32), value=np.array([0.5]), n_samples=np.array([3]),
                  gain=np.array([0.0]))
    tree = Tree(**arrays)
    tree.vector = np.zeros((1, 2))
    for name in [*arrays, "vector"]:
        assert not getattr(tree, name).flags.writeable, name
    assert all(a.flags.writeable for a in arrays.values())
    with pytest.raises(ValueError, match="read-only"):
        tree.value[0] = 1.0
    import copy
    import pickle

    for again in (pickle.loads(pickle.dumps(tree)), copy.deepcopy(tree)):  # (unpickled arrays are writable)
        assert not any(getattr(again, name).flags.writeable for name in [*arrays, "vector"])
        np.testing.assert_array_equal(again.value, tree.value)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["params"].update(algorithm="nope"), "parameters are not valid: algorithm='nope'"),
    (lambda d: d["params"].update(learning_rate=-1), "learning_rate must be a finite number > 0"),
    (lambda d: d["params"].update(learning_rate="0.1"), "learning_rate must be a finite number > 0"),
    (lambda d: d["params"].update(shrinkage=0.1), r"unknown parameters \['shrinkage'\]"),
    (lambda d: d["binning"]["edges"][0].__setitem__(0, None), "bin edges of feature 0 are not all finite"),
    (lambda d: d["trees"][0]["feature"].__setitem__(0, -5), "a feature index out of range"),
    (lambda d: d["trees"][0]["feature"].__setitem__(0, -1), "a leaf with children"),
    (lambda d: d.update(feature_names=["a"]), "'feature_names' must be null or a list of 5 strings"),
    (lambda d: d.update(feature_names=7), "'feature_names' must be null or a list of 5 strings"),
    (lambda d: d.update(n_features=4.7), "'n_features' must be an integer >= 1"),
    (lambda d: d.update(multilabel="yes"), "'multilabel' must be true or false"),
    (lambda d: d.update(libsvm_zero_based=1), "'libsvm_zero_based' must be true or false"),
    (lambda d: d.update(format_version=True), "format_version True is not valid"),
    (lambda d: d["params"].update(learning_rate=1e308), r"its scores would overflow: learning_rate 1e\+308"),
    (lambda d: d["trees"][0]["gain"].__setitem__(0, None), "a non-finite split gain"),
    (lambda d: d["trees"][0]["n_samples"].__setitem__(0, -3), "a negative row count"),
], ids=["unknown algorithm", "negative rate", "rate a string", "unknown parameter", "null edge", "negative feature", "a leaf split",
        "names too few", "names a number", "n_features a float", "multilabel a string", "base an int",
        "version a bool", "rate that overflows", "null gain", "negative count"])
def test_a_file_with_valid_checksum_but_invalid_content_is_refused(fitted, tmp_path, edit, message):
    """A file edited by hand (its checksum redone) that fit could not have written: a clear
    ModelFormatError, not a model that predicts something else (these loaded before)."""
    with pytest.raises(ModelFormatError, match=message):
        gpuboost.load_model(_saved_with_valid_checksum(fitted[0], tmp_path, edit))


def test_numpy_scalar_parameters_are_saved_as_numbers(fitted, tmp_path):
    """Parameters from a NumPy grid (np.int64, np.float32, np.bool_) fit, and they save: JSON
    has no NumPy types (this raised 'Object of type int64 is not JSON serializable')."""
    X = fitted[1]
    y = np.arange(len(X)) % 3
    model = BoostClassifier(n_estimators=np.int64(3), max_leaves=np.int32(4), learning_rate=np.float32(0.5),
                            warm_start=np.bool_(False)).fit(X, y)
    model.save_model(tmp_path / "m.json")
    params = json.loads((tmp_path / "m.json").read_text())["params"]
    assert params["n_estimators"] == 3 and params["max_leaves"] == 4 and params["warm_start"] is False
    assert params["learning_rate"] == float(np.float32(0.5))
    np.testing.assert_array_equal(gpuboost.load_model(tmp_path / "m.json").predict_proba(X), model.predict_proba(X))


def test_paths_are_checked_before_writing(fitted, tmp_path):
    """save_model names the user's path (not its temporary file) when the folder is missing or
    the path is a folder; load_model refuses a file descriptor (open() would close it)."""
    model = fitted[0]
    with pytest.raises(FileNotFoundError, match=r"cannot save the model to .*nodir/m.json.*does not exist"):
        model.save_model(tmp_path / "nodir" / "m.json")
    with pytest.raises(IsADirectoryError, match="it is a directory"):
        model.save_model(tmp_path)
    with pytest.raises(ValueError, match="empty string"):
        model.save_model("")
    with pytest.raises(TypeError, match="needs a file path"):
        gpuboost.load_model(1)
    with pytest.raises(TypeError, match="needs a file path"):
        BoostClassifier().load_model(0)
    model.save_model(bytes(tmp_path / "b.json"))  # a bytes path, as load_model takes it
    assert gpuboost.load_model(bytes(tmp_path / "b.json")).n_trees_ == model.n_trees_


def _iteration_counter():
    """(a callback that records the iterations it sees, their list): none where a check runs
    before the training."""
    from gpuboost.callback import Callback

    seen = []

    class Count(Callback):
        def after_iteration(self, model, iteration):
            seen.append(iteration)

    return Count(), seen


def test_a_checkpoint_to_a_missing_folder_fails_before_training(small_multiclass, tmp_path):
    from gpuboost.callback import Checkpoint

    X, y = small_multiclass
    count, seen = _iteration_counter()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        BoostClassifier(n_estimators=3, callbacks=[Checkpoint(tmp_path / "no" / "c.json"), count]).fit(X, y)
    assert seen == []


@pytest.mark.parametrize("y", [
    np.arange(90, dtype=np.uint8) % 3, (np.arange(90) % 3).astype(np.int16), (np.arange(90) % 3).astype(np.float32),
    np.array(["a", "b", "c"] * 30, dtype=object), np.array(["a", "b", "c"] * 30), np.arange(90) % 2 == 0,
], ids=["uint8", "int16", "float32", "object strings", "str", "bool"])
def test_the_labels_dtype_survives_the_round_trip(tmp_path, y):
    """A loaded model's classes_ and predictions keep the dtype of the y it was fitted on (a
    uint8 y predicted int64 labels after loading, an object y '<U' strings)."""
    X = np.random.default_rng(0).normal(size=(90, 3))
    model = BoostClassifier(n_estimators=2, max_leaves=4).fit(X, y)
    model.save_model(tmp_path / "m.json")
    loaded = gpuboost.load_model(tmp_path / "m.json")
    assert loaded.classes_.dtype == model.classes_.dtype == y.dtype
    assert loaded.predict(X).dtype == model.predict(X).dtype
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("dtype, message", [("uint8", "do not fit their dtype uint8"), ("complex64", "cannot have dtype"),
                                            (7, "cannot have dtype")])
def test_a_classes_dtype_that_does_not_hold_them_is_refused(fitted, tmp_path, dtype, message):
    def edit(data):
        data["classes"].update(values=[-1, 0, 1, 300], dtype=dtype)

    with pytest.raises(ModelFormatError, match=message):
        gpuboost.load_model(_saved_with_valid_checksum(fitted[0], tmp_path, edit))


def test_a_right_child_before_its_parent_is_refused(tmp_path):
    # the format's nodes come after their parents (docs/model-format.md); predict_contributions
    # sizes its walk by the depth found in that order. Node 3's right child is node 2:
    from gpuboost.tree import Tree

    X = np.random.default_rng(0).normal(size=(200, 3))
    model = BoostClassifier(n_estimators=1, max_leaves=2).fit(X, (X[:, 0] > 0).astype(int))
    model.trees_ = [Tree(feature=np.array([0, -1, 1, 2, -1, -1, -1], np.int32),
                         bin=np.array([5, 0, 5, 5, 0, 0, 0], np.int32), threshold=np.zeros(7),
                         missing_left=np.zeros(7, bool), left=np.array([3, -1, 5, 4, -1, -1, -1], np.int32),
                         right=np.array([1, -1, 6, 2, -1, -1, -1], np.int32), pair=np.array([[0, 1]] * 7, np.int32),
                         value=np.arange(7.0), n_samples=np.array([100, 40, 30, 60, 30, 10, 20]), gain=np.zeros(7))]
    model.save_model(tmp_path / "m.json")
    with pytest.raises(ModelFormatError, match="a child that does not come after its parent"):
        gpuboost.load_model(tmp_path / "m.json")


def test_a_folder_no_file_can_be_made_in_fails_before_training(fitted, small_multiclass, tmp_path, monkeypatch):
    """A read-only folder or file system is found before the training (save_model, a
    Checkpoint, the command line's -o), not after it: check_writable makes and removes a file
    there. Simulated with the file's creation failing with EROFS (root may write to any folder)."""
    import errno
    import os

    from gpuboost import io
    from gpuboost.callback import Checkpoint

    model = fitted[0]
    model.save_model(tmp_path / "m.json")
    before = (tmp_path / "m.json").read_bytes()

    make = os.open

    def read_only(path, flags, *args, **kwargs):  # (the temporary files gpuboost makes; others as they are)
        if os.path.basename(path).startswith(".gpuboost-") and flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system")
        return make(path, flags, *args, **kwargs)

    monkeypatch.setattr(io.os, "open", read_only)
    with pytest.raises(OSError, match=r"cannot save the model to .*m.json.*cannot create a file in .*Read-only"):
        model.save_model(tmp_path / "m.json")
    assert (tmp_path / "m.json").read_bytes() == before
    X, y = small_multiclass
    count, seen = _iteration_counter()
    with pytest.raises(OSError, match="cannot create a file"):
        BoostClassifier(n_estimators=3, callbacks=[Checkpoint(tmp_path / "c.json", every=2), count]).fit(X, y)
    assert seen == []


def test_a_path_that_names_a_folder_or_runs_through_a_file_is_refused(fitted, tmp_path):
    model = fitted[0]
    model.save_model(tmp_path / "m.json")
    before = (tmp_path / "m.json").read_bytes()
    for ending, named in (("/", "/"), ("/.", "."), ("/x/..", "..")):
        with pytest.raises(IsADirectoryError, match=f"ends in '{re.escape(named)}' names a directory"):
            model.save_model(str(tmp_path / "m.json") + ending)
        assert (tmp_path / "m.json").read_bytes() == before
    with pytest.raises(IsADirectoryError, match="names a directory"):
        model.save_model(str(tmp_path / "new") + "/.")
    assert not (tmp_path / "new").exists()
    with pytest.raises(NotADirectoryError, match=r"m.json' is a file, not a directory"):
        model.save_model(tmp_path / "m.json" / "sub" / "x.json")


def test_saving_over_a_file_keeps_its_mode_and_leaves_the_umask(fitted, tmp_path, monkeypatch):
    """A file replaced keeps its permission bits (not setuid and the like); a new one gets the
    umask's, applied by the kernel: the umask is never read by setting it (os.umask), which
    would change it process-wide for a moment."""
    import os
    import stat

    model = fitted[0]
    path = tmp_path / "private.json"
    model.save_model(path)
    mask = _current_umask()
    monkeypatch.setattr(os, "umask", lambda *a: pytest.fail("the umask was set"))
    for mode, kept in ((0o600, 0o600), (0o640, 0o640), (0o4755, 0o755)):
        os.chmod(path, mode)
        model.save_model(path)
        assert stat.S_IMODE(os.stat(path).st_mode) == kept
    model.save_model(tmp_path / "new.json")
    assert stat.S_IMODE(os.stat(tmp_path / "new.json").st_mode) == 0o666 & ~mask


def test_a_file_the_user_may_not_write_is_refused(fitted, tmp_path, monkeypatch):
    """(as another user than root: os.access says so; simulated, root may write anything)"""
    import os

    model = fitted[0]
    path = tmp_path / "m.json"
    model.save_model(path)
    before = path.read_bytes()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **k: False if os.fspath(p) == str(path) else real_access(p, m, **k))
    with pytest.raises(PermissionError, match="the file is read-only"):
        model.save_model(path)
    assert path.read_bytes() == before


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() == 0,
                    reason="root writes to read-only files and folders")
def test_a_read_only_file_or_folder_is_not_replaced(fitted, tmp_path):
    import os

    model = fitted[0]
    path = tmp_path / "m.json"
    model.save_model(path)
    before = path.read_bytes()
    os.chmod(path, 0o444)
    with pytest.raises(PermissionError, match="the file is read-only"):
        model.save_model(path)
    assert path.read_bytes() == before
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o555)
    try:
        with pytest.raises(PermissionError, match="cannot create a file"):
            model.save_model(folder / "m.json")
    finally:
        os.chmod(folder, 0o755)


@pytest.mark.parametrize("extra", [None, (1, 2), float("nan")])
def test_a_class_weight_label_a_file_cannot_hold_is_refused_before_writing(small_multiclass, tmp_path, extra):
    """fit takes a class_weight dict with labels beyond the classes (as scikit-learn does); a
    label a model file cannot hold is refused at save, not written into a file that would not
    load; a Checkpoint refuses it before the training."""
    from gpuboost.callback import Checkpoint

    X, y = small_multiclass
    weights = {**{c: 1.0 for c in np.unique(y)}, extra: 2.0}
    model = BoostClassifier(n_estimators=3, max_leaves=4, class_weight=weights).fit(X, y)
    BoostClassifier(n_estimators=3, max_leaves=4).fit(X, y).save_model(tmp_path / "m.json")
    before = (tmp_path / "m.json").read_bytes()
    with pytest.raises(ValueError, match="class_weight has the label .*nothing was written"):
        model.save_model(tmp_path / "m.json")
    assert (tmp_path / "m.json").read_bytes() == before
    with pytest.raises(ValueError, match="class_weight has the label"):
        BoostClassifier(n_estimators=3, class_weight=weights, callbacks=[Checkpoint(tmp_path / "c.json")]).fit(X, y)
    assert not (tmp_path / "c.json").exists()
    # a label of no class that a file holds (a number, a string) is kept
    other = BoostClassifier(n_estimators=3, max_leaves=4, class_weight={**{c: 1.0 for c in np.unique(y)}, 99: 2.0})
    other.fit(X, y).save_model(tmp_path / "m.json")
    assert gpuboost.load_model(tmp_path / "m.json").class_weight[99] == 2.0


def test_a_file_from_before_checksums_loads_with_a_warning():
    """Format 1 files written before model files had a checksum (2026-11-22) load, and predict
    as they did; the warning says the integrity check was not made."""
    from conftest import REPO

    fixtures = REPO / "tests" / "fixtures"
    with pytest.warns(UserWarning, match="has no checksum"):
        model = gpuboost.load_model(fixtures / "model_v1_no_checksum.json")
    expected = json.loads((fixtures / "model_v1_expected.json").read_text())
    X = np.array([[float(v) for v in row] for row in expected["X"]])
    np.testing.assert_array_equal(model.predict(X), np.array(expected["predict"]))
    np.testing.assert_array_equal(model.predict_proba(X), np.array(expected["predict_proba"]))


def test_early_stopping_choice_survives_the_round_trip(small_multiclass, tmp_path):
    X, y = small_multiclass
    model = BoostClassifier(n_estimators=200, max_leaves=4, learning_rate=0.5, early_stopping_rounds=3,
                            validation_fraction=0.3, random_state=0).fit(X, y)
    assert model.n_estimators_ < 200
    model.save_model(tmp_path / "m.json")
    loaded = gpuboost.load_model(tmp_path / "m.json")
    assert (loaded.best_iteration_, loaded.best_score_) == (model.best_iteration_, model.best_score_)
    plain = BoostClassifier(n_estimators=3, max_leaves=4).fit(X, y)
    plain.save_model(tmp_path / "plain.json")
    assert not hasattr(gpuboost.load_model(tmp_path / "plain.json"), "best_iteration_")
    for best, score in [(len(model.train_loss_), 0.5), (-1, 0.5), (True, 0.5), (0, "low")]:
        path = _saved_with_valid_checksum(model, tmp_path, lambda d: d.update(best_iteration=best, best_score=score))
        with pytest.raises(ModelFormatError, match="'best_iteration' must be"):
            gpuboost.load_model(path)


def test_a_bytes_path_is_a_model_file_for_init_model(fitted, small_multiclass, tmp_path):
    model, _ = fitted
    X, y = small_multiclass
    model.save_model(tmp_path / "m.json")
    more = BoostClassifier(n_estimators=17, max_leaves=6).fit(X, y, init_model=bytes(tmp_path / "m.json"))
    assert more.n_estimators_ == 17


def _one_dict_text(model):
    """The model file as one json.dumps of its content and checksum (how save_model wrote it
    before model_text)."""
    from gpuboost.io import _checksum, _dumps, model_to_dict

    payload = model_to_dict(model)
    payload["checksum"] = _checksum(payload)
    return _dumps(payload)


def test_model_text_is_the_content_dumped_whole(fitted, small_multiclass):
    """model_text writes the trees' texts and the checksum into the other keys' text: the same
    text as the whole content dumped at once, with keys after the trees (multi-label, AdaBoost.MH's
    Hamming losses, early stopping's choice) and without."""
    from gpuboost.io import model_text

    X, y = small_multiclass
    Y = np.stack([y == 0, y == 1, X[:, 0] > 0], axis=1).astype(int)
    models = [fitted[0],
              BoostClassifier(algorithm="adaboostmh", n_estimators=3, max_leaves=4).fit(X, Y),
              BoostClassifier(n_estimators=20, max_leaves=4, early_stopping_rounds=2,
                              validation_fraction=0.3, random_state=0).fit(X, y)]
    assert hasattr(models[2], "best_iteration_") and hasattr(models[1], "train_hamming_loss_")
    for model in models:
        assert model_text(model) == _one_dict_text(model)
        assert model_text(model, {}) == _one_dict_text(model)


def test_a_checkpoint_writes_each_tree_once_and_the_same_files(small_multiclass, tmp_path, monkeypatch):
    """Checkpoint keeps each tree's text between its saves (a checkpointed fit wrote every tree
    again at each save): its files are those save_model writes, and a tree given new arrays is
    written again."""
    from gpuboost import io
    from gpuboost.callback import Checkpoint

    X, y = small_multiclass
    written = []
    dumps = io._tree_entry

    def counting(tree):
        written.append(id(tree))
        return dumps(tree)

    monkeypatch.setattr(io, "_tree_entry", counting)
    path = tmp_path / "checkpoint.json"
    model = BoostClassifier(n_estimators=12, max_leaves=4, callbacks=[Checkpoint(path, every=3)]).fit(X, y)
    assert len(written) == len(model.trees_) == 12 and len(set(written)) == 12
    model.save_model(tmp_path / "saved.json")
    assert path.read_bytes() == (tmp_path / "saved.json").read_bytes()
    kept = {}
    first = io.model_text(model, kept)
    tree = model.trees_[4]
    tree.value = tree.value * 2.0  # (new arrays: the tree's text again)
    written.clear()
    text = io.model_text(model, kept)
    assert written == [id(tree)]
    assert text == _one_dict_text(model) != first


def test_a_file_written_in_another_layout_is_checked_from_its_content(fitted, tmp_path):
    """A file whose JSON was laid out again (indented, its keys in another order) loads when its
    content is the saved one, and not when a value differs."""
    model, X = fitted
    model.save_model(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    (tmp_path / "indented.json").write_text(json.dumps(data, indent=2))
    np.testing.assert_array_equal(gpuboost.load_model(tmp_path / "indented.json").predict_proba(X),
                                  model.predict_proba(X))
    moved = {"checksum": data.pop("checksum"), **data}
    (tmp_path / "moved.json").write_text(json.dumps(moved, separators=(",", ":")))
    assert gpuboost.load_model(tmp_path / "moved.json").n_trees_ == model.n_trees_
    moved["initial_loss"] += 1.0
    (tmp_path / "edited.json").write_text(json.dumps(moved, separators=(",", ":")))
    with pytest.raises(ModelFormatError, match="edited or damaged"):
        gpuboost.load_model(tmp_path / "edited.json")


def test_nan_or_infinity_in_a_file_is_refused_whatever_its_checksum(fitted, tmp_path):
    """gpuboost never writes JSON's NaN or Infinity: a file that holds one is refused, even with
    the checksum of its own text (the check from the text would otherwise take it)."""
    from gpuboost.io import _text_checksum

    model, _ = fitted
    model.save_model(tmp_path / "m.json")
    text = (tmp_path / "m.json").read_text()
    body = text[:text.rindex(',"checksum":')]
    edited = re.sub(r'"initial_loss":[^,]+', '"initial_loss":NaN', body, count=1) + "}"
    (tmp_path / "nan.json").write_text(edited[:-1] + ',"checksum":"' + _text_checksum(edited) + '"}')
    with pytest.raises(ModelFormatError, match="holds NaN, which gpuboost never writes"):
        gpuboost.load_model(tmp_path / "nan.json")


def test_a_checkpoint_pickles_without_the_texts_of_an_interrupted_fit(small_multiclass, tmp_path):
    """A fit that stops with an exception leaves no tree texts in what its Checkpoint pickles,
    copies or clones (it held them until the next fit)."""
    import copy
    import pickle

    from gpuboost.callback import Callback, Checkpoint

    class Interrupt(Callback):
        def after_iteration(self, model, iteration):
            if iteration == 5:
                raise KeyboardInterrupt
            return False

    X, y = small_multiclass
    checkpoint = Checkpoint(tmp_path / "c.json", every=2)
    with pytest.raises(KeyboardInterrupt):
        BoostClassifier(n_estimators=20, max_leaves=4, callbacks=[checkpoint, Interrupt()]).fit(X, y)
    assert checkpoint._tree_texts  # (the fit's own, until the next)
    assert pickle.loads(pickle.dumps(checkpoint))._tree_texts == {}
    assert copy.deepcopy(checkpoint)._tree_texts == {} and copy.deepcopy(checkpoint).path == checkpoint.path
    assert len(pickle.dumps(checkpoint)) < 400


def test_a_model_whose_scores_would_overflow_is_refused_before_writing(small_multiclass, tmp_path):
    """load_model refuses a file whose learning_rate times its trees' values passes 1e300 (its
    scores would overflow): save refuses to write one, and the file there is kept."""
    X, y = small_multiclass
    BoostClassifier(n_estimators=3, max_leaves=4).fit(X, y).save_model(tmp_path / "m.json")
    before = (tmp_path / "m.json").read_bytes()
    with pytest.warns(Warning):  # (a fit at this rate diverges, and says so)
        model = BoostClassifier(n_estimators=3, max_leaves=4, learning_rate=1e300).fit(X, y)
    with pytest.raises(ValueError, match="cannot save the model: its scores would overflow: learning_rate 1e.300 "
                                         ".*nothing was written"):
        model.save_model(tmp_path / "m.json")
    assert (tmp_path / "m.json").read_bytes() == before


def test_a_model_file_on_a_read_only_file_system_is_named_so(fitted, tmp_path, monkeypatch):
    # os.access refuses every file there, whatever its mode: "make it writable (chmod u+w)" was no help
    import os
    import types

    from gpuboost import io as gio

    fitted = fitted[0]
    fitted.save_model(tmp_path / "m.json")
    monkeypatch.setattr(gio.os, "access", lambda path, mode: False)
    monkeypatch.setattr(gio.os, "statvfs", lambda path: types.SimpleNamespace(f_flag=os.ST_RDONLY))
    with pytest.raises(PermissionError, match="its file system is mounted read-only; give a path on a writable one"):
        fitted.save_model(tmp_path / "m.json")
    monkeypatch.setattr(gio.os, "statvfs", lambda path: types.SimpleNamespace(f_flag=0))
    with pytest.raises(PermissionError, match=r"the file is read-only; make it writable \(chmod u\+w\)"):
        fitted.save_model(tmp_path / "m.json")
