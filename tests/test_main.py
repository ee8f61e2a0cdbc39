"""The command line: demo, train, predict, evaluate, and data files."""

import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pytest

from conftest import REPO
from gpuboost import load_model
from gpuboost.__main__ import main
from gpuboost.datasets import load_data


def run(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "gpuboost", *args], capture_output=True, text=True, env=env)


def test_demo_trains_and_evaluates():
    result = run("demo", "--n-train", "3000", "--n-test", "2000", "--n-estimators", "20", "--verbose", "10")
    assert result.returncode == 0, result.stderr
    assert "test accuracy" in result.stdout and "trained 20 AOSO trees" in result.stdout
    # the kernels are compiled (or loaded) before the timed fit, which then times training alone
    assert result.stdout.index("kernels ready in") < result.stdout.index("trained 20 AOSO trees")


def test_bad_arguments_exit_without_a_traceback():
    result = run("demo", "--n-estimators", "0")
    assert result.returncode == 1 and "n_estimators" in result.stderr and "Traceback" not in result.stderr
    result = run("train")  # usage error
    assert result.returncode == 2 and "usage" in result.stderr


def test_train_refuses_bad_labels_before_its_summary(tmp_path, capsys):
    # the summary counted them first: "2 labels (multi-label)" for a 2-D y of 0, 1 and 2
    X = np.random.default_rng(0).normal(size=(20, 2))
    np.savez(tmp_path / "d.npz", X=X, y=np.stack([np.arange(20) % 3, np.arange(20) % 2], axis=1))
    assert main(["train", str(tmp_path / "d.npz"), "-o", str(tmp_path / "m.json")]) == 1
    out, err = capsys.readouterr()
    assert "training" not in out and "y has shape (20, 2), and y[2, 0] is 2" in err
    assert not (tmp_path / "m.json").exists()
    # a column of labels: fit's warning, once (the check before the summary keeps its own)
    np.savez(tmp_path / "c.npz", X=X, y=(np.arange(20) % 3).reshape(-1, 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["train", str(tmp_path / "c.npz"), "-o", str(tmp_path / "m.json"), "--n-estimators", "2"]) == 0
    assert sum("column-vector y" in str(w.message) for w in caught) == 1
    assert "3 classes" in capsys.readouterr().out


@pytest.mark.parametrize("flag, value, message", [
    ("--seed", "-1", "argument --seed: expected an integer of at least 0, got -1"),
    ("--n-train", "0", "argument --n-train: expected an integer of at least 1, got 0"),
    ("--n-test", "x", "argument --n-test: expected an integer, got 'x'")])
def test_demo_flags_are_named_in_their_errors(flag, value, message, capsys):
    # ("expected non-negative integer" and "n_samples must be ..." named no flag)
    with pytest.raises(SystemExit) as exit:
        main(["demo", flag, value])
    assert exit.value.code == 2 and message in capsys.readouterr().err


@pytest.fixture
def libsvm_files(tmp_path):
    from sklearn.datasets import dump_svmlight_file, load_digits

    X, y = load_digits(return_X_y=True)
    train, test = tmp_path / "train.libsvm", tmp_path / "test.libsvm"
    dump_svmlight_file(X[:1200], y[:1200], str(train), zero_based=False)  # 1-based, sparse, as the papers' files
    dump_svmlight_file(X[1200:], y[1200:], str(test), zero_based=False)
    return train, test, y[1200:]


def test_train_evaluate_predict_from_libsvm_files(libsvm_files, tmp_path, capsys):
    train, test, y_test = libsvm_files
    model = tmp_path / "model.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "30", "--algorithm", "aoso",
                 "--eval", str(test), "--verbose", "0"]) == 0
    assert "model saved" in capsys.readouterr().out
    assert main(["evaluate", str(model), str(test)]) == 0
    report = capsys.readouterr().out
    assert "errors" in report and "confusion matrix" in report
    out = tmp_path / "pred.csv"
    assert main(["predict", str(model), str(test), "-o", str(out)]) == 0
    labels = np.loadtxt(out, skiprows=1)
    errors = int(report.split(" errors")[0].split()[-1])
    assert np.sum(labels != y_test) == errors
    assert main(["predict", str(model), str(test), "--proba", "-o", str(out)]) == 0
    proba = np.loadtxt(out, delimiter=",", skiprows=1)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert main(["predict", str(model), str(test), "--contributions", "-o", str(out)]) == 0
    header = out.read_text().splitlines()[0].split(",")
    fitted = load_model(model)
    n_features, n_classes = fitted.n_features_in_, len(fitted.classes_)
    assert len(header) == n_classes * (n_features + 1) and header[n_features] == f"{fitted.classes_[0]}:bias"
    phi = np.loadtxt(out, delimiter=",", skiprows=1).reshape(-1, n_classes, n_features + 1)
    scores = phi.sum(axis=2)  # the class scores F, whose softmax is predict_proba
    np.testing.assert_allclose(np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True), proba, rtol=1e-6)


def test_every_estimator_parameter_is_a_train_flag():
    from gpuboost import BoostClassifier

    result = run("train", "--help")
    for name in BoostClassifier().get_params():
        if name not in ("callbacks", "warm_start"):
            assert f"--{name.replace('_', '-')}" in result.stdout


def test_load_data_formats(tmp_path):
    (tmp_path / "a.csv").write_text("f1,f2,class\n1,2,cat\n3,,dog\n")
    X, y = load_data(tmp_path / "a.csv")
    np.testing.assert_array_equal(X, [[1, 2], [3, np.nan]])
    assert y.tolist() == ["cat", "dog"]
    (tmp_path / "b.csv").write_text("0,1.5,2\n1,2.5,3\n")
    X, y = load_data(tmp_path / "b.csv", label_column=0)
    assert y.tolist() == [0, 1] and X.tolist() == [[1.5, 2], [2.5, 3]]
    np.savez(tmp_path / "c.npz", X_train=np.ones((3, 2)), y_train=np.arange(3))
    X, y = load_data(tmp_path / "c.npz")
    assert X.shape == (3, 2) and y.tolist() == [0, 1, 2]
    (tmp_path / "d.libsvm").write_text("1 1:0.5 3:2\n2 2:1\n")
    X, y = load_data(tmp_path / "d.libsvm")
    np.testing.assert_array_equal(X, [[0.5, 0, 2], [0, 1, 0]])  # absent entries are 0
    with pytest.raises(ValueError, match="unknown data format"):
        load_data(tmp_path / "e.parquet")


def test_sparse_input_means_zeros():
    import scipy.sparse

    from gpuboost import BoostClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)) * (rng.random((200, 5)) < 0.3)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    dense = BoostClassifier(n_estimators=5, max_leaves=4).fit(X, y)
    sparse = BoostClassifier(n_estimators=5, max_leaves=4).fit(scipy.sparse.csr_matrix(X), y)
    np.testing.assert_array_equal(dense.predict_proba(X), sparse.predict_proba(scipy.sparse.csr_matrix(X)))


def test_plot_command(libsvm_files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    train, test, _ = libsvm_files
    for algorithm in ("aoso", "mart"):
        assert main(["train", str(train), "-o", str(tmp_path / f"{algorithm}.json"), "--algorithm", algorithm,
                     "--n-estimators", "10"]) == 0
    out = tmp_path / "curve.png"
    assert main(["plot", str(tmp_path / "aoso.json"), str(tmp_path / "mart.json"), "-o", str(out)]) == 0
    assert out.stat().st_size > 1000
    assert main(["plot", str(tmp_path / "aoso.json"), "--importance", "gain", "-o", str(tmp_path / "imp.png")]) == 0
    assert (tmp_path / "imp.png").stat().st_size > 1000
    assert out.read_bytes().startswith(b"\x89PNG")
    assert main(["plot", str(tmp_path / "aoso.json"), "-o", str(tmp_path / "curve.svg")]) == 0
    assert b"<svg" in (tmp_path / "curve.svg").read_bytes()[:2000]
    # a missing folder fails before the models are read and drawn, as train's and predict's -o do
    assert main(["plot", str(tmp_path / "aoso.json"), "-o", str(tmp_path / "no" / "c.png")]) == 1
    assert "does not exist" in capsys.readouterr().err


class FakeDeviceArray:
    """Stands for a GPU array: it has __cuda_array_interface__ and no __array__."""

    def __init__(self, data):
        self.data = np.asarray(data)
        self.__cuda_array_interface__ = {"shape": self.data.shape, "typestr": self.data.dtype.str,
                                         "data": (0, False), "version": 3}


def test_gpu_arrays_are_copied_to_the_host_once(monkeypatch):
    import types

    from gpuboost import BoostClassifier

    copies = []
    fake_cupy = types.SimpleNamespace(asarray=lambda a: a, asnumpy=lambda a: copies.append(1) or a.data)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    model = BoostClassifier(n_estimators=3, max_leaves=4).fit(FakeDeviceArray(X), FakeDeviceArray(y))
    assert len(copies) == 2  # X and y, once each
    np.testing.assert_array_equal(model.predict(FakeDeviceArray(X)), model.predict(X))
    Xl, yl = load_data((FakeDeviceArray(X), FakeDeviceArray(y)))
    np.testing.assert_array_equal(Xl, X)


def test_gpu_array_without_cupy_is_a_clear_error(monkeypatch):
    from gpuboost import BoostClassifier

    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    with pytest.raises(TypeError, match="needs CuPy"):
        BoostClassifier(n_estimators=2).fit(FakeDeviceArray(np.zeros((4, 2))), [0, 1, 0, 1])


def test_predict_on_an_unlabelled_csv(libsvm_files, tmp_path):
    train, test, y_test = libsvm_files
    model = tmp_path / "m.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "5"]) == 0
    X_test, _ = load_data(test)
    features = tmp_path / "features.csv"
    np.savetxt(features, X_test, delimiter=",", header=",".join(f"f{j}" for j in range(X_test.shape[1])), comments="")
    assert main(["predict", str(model), str(features), "--unlabelled", "-o", str(tmp_path / "p.csv")]) == 0
    assert main(["predict", str(model), str(test), "-o", str(tmp_path / "q.csv")]) == 0
    assert (tmp_path / "p.csv").read_text() == (tmp_path / "q.csv").read_text()
    # without --unlabelled: a file of the model's width has no label column (none of its features is dropped)
    assert main(["predict", str(model), str(features), "-o", str(tmp_path / "r.csv")]) == 0
    assert (tmp_path / "r.csv").read_text() == (tmp_path / "q.csv").read_text()


@pytest.fixture
def small_libsvm(tmp_path):
    """A 1-based training file of 3 features and a test file whose rows lack the last one."""
    train, test = tmp_path / "a.libsvm", tmp_path / "b.libsvm"
    train.write_text("0 1:1 2:3 3:1\n1 1:2 3:5\n2 2:1 3:2\n0 1:1.5 3:0.5\n1 2:4 3:1\n2 1:3\n")
    test.write_text("0 1:1 2:3\n1 1:2\n")
    return train, test


def test_libsvm_test_file_with_fewer_trailing_features(small_libsvm, tmp_path, capsys):
    train, test = small_libsvm
    model = tmp_path / "a.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "3", "--eval", str(test)]) == 0
    assert f"{test}: " in capsys.readouterr().out
    assert main(["predict", str(model), str(test)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3  # header and 2 labels
    assert main(["evaluate", str(model), str(test)]) == 0
    assert "2 rows" in capsys.readouterr().out
    (tmp_path / "c.libsvm").write_text("0 1:1 4:2\n")  # more features than the model: still an error
    assert main(["predict", str(model), str(tmp_path / "c.libsvm")]) == 1
    assert "c.libsvm has 4 features" in capsys.readouterr().err


def test_train_with_eval_reads_the_test_file_with_the_training_files_base(tmp_path, capsys):
    # 0-based training file; its test file does not use feature 0, so on its own it would read as 1-based
    train, test = tmp_path / "z.libsvm", tmp_path / "zt.libsvm"
    train.write_text("0 0:1 1:3\n1 0:2 2:5\n0 0:1 1:4\n1 1:1 2:6\n")
    test.write_text("0 1:3\n1 2:5\n")
    assert main(["train", str(train), "-o", str(tmp_path / "z.json"), "--n-estimators", "2", "--eval", str(test)]) == 0
    test.write_text("0 1:3 3:1\n")  # feature 3 does not exist 0-based
    assert main(["train", str(train), "-o", str(tmp_path / "z.json"), "--n-estimators", "2", "--eval", str(test)]) == 1
    assert "indices up to 3, read 0-based" in capsys.readouterr().err


def test_predict_writes_valid_csv(tmp_path, capsys):
    import csv
    import io

    data = tmp_path / "t.csv"
    data.write_text('f1,f2,label\n1,2,"a,b"\n2,1,c\n1,3,"a,b"\n3,1,c\n')
    model = tmp_path / "t.json"
    assert main(["train", str(data), "-o", str(model), "--n-estimators", "2"]) == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(data)]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["label"] and sorted(r[0] for r in rows[1:]) == ["a,b", "a,b", "c", "c"]
    assert main(["predict", str(model), str(data), "--proba"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["a,b", "c"] and all(len(r) == 2 for r in rows[1:]) and len(rows) == 5
    np.testing.assert_allclose(np.array(rows[1:], dtype=float).sum(axis=1), 1.0)
    # contributions: named by the CSV's header; a feature named bias keeps its name
    data.write_text('f1,bias,label\n1,2,"a,b"\n2,1,c\n1,3,"a,b"\n3,1,c\n')
    assert main(["train", str(data), "-o", str(model), "--n-estimators", "2"]) == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(data), "--contributions"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["a,b:f1", "a,b:bias", "a,b:_bias_", "c:f1", "c:bias", "c:_bias_"] and len(rows) == 5


def test_plain_labels_print_as_before(small_libsvm, tmp_path, capsys):
    train, _ = small_libsvm
    model = tmp_path / "a.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "3"]) == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(train)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("label\n") and "\r" not in out and all(line in "012" for line in out.split()[1:])


def test_train_that_stops_before_the_first_tree(small_libsvm, tmp_path):
    train, test = small_libsvm
    model = tmp_path / "z.json"
    result = run("train", str(train), "-o", str(model), "--tol", "1e9", "--eval", str(test))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "0 iterations, no tree added" in result.stdout and "tol" in result.stdout
    assert f"{test}: " in result.stdout and "model saved" in result.stdout and model.exists()


def test_empty_csv_label_in_training_file(tmp_path):
    data = tmp_path / "e.csv"
    data.write_text("f1,label\n1,0\n2,1\n3,\n4,1\n5,0\n")
    result = run("train", str(data), "-o", str(tmp_path / "e.json"), "--n-estimators", "2")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "line 4: y has 1 missing labels (NaN or None), at rows [2]" in result.stderr


@pytest.fixture
def label_set_files(tmp_path):
    """Multi-label LibSVM files (label sets, comma-separated; an empty set on some rows); the
    test file's rows never hold the last label."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(240, 4))
    Y = (X[:, :3] + 0.3 * rng.normal(size=(240, 3)) > 0).astype(int)
    Y[180:, 2] = 0
    paths = tmp_path / "ml-train.svm", tmp_path / "ml-test.svm"
    for path, rows in zip(paths, (slice(0, 180), slice(180, None))):
        path.write_text("".join(",".join(map(str, np.flatnonzero(y))) + " "
                                + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(x)) + "\n"
                                for x, y in zip(X[rows], Y[rows])))
    return paths, X, Y


def test_multilabel_libsvm_files_train_evaluate_and_predict(label_set_files, tmp_path, capsys):
    from gpuboost import load_model, metrics

    (train, test), X, Y = label_set_files
    model_path = tmp_path / "ml.json"
    assert main(["train", str(train), "-o", str(model_path), "--algorithm", "klogitboost", "--n-estimators", "20",
                 "--max-leaves", "6", "--eval", str(test)]) == 0
    out = capsys.readouterr().out
    assert "3 labels (multi-label)" in out and "(row, label) entries wrong" in out
    model = load_model(model_path)
    assert model.multilabel_ and list(model.classes_) == [0, 1, 2]
    Xt, Yt = load_data(test, n_labels=3)  # the test file alone has labels 0 and 1 only
    np.testing.assert_array_equal(Yt, Y[180:])
    assert main(["evaluate", str(model_path), str(test)]) == 0
    out = capsys.readouterr().out
    wrong = int(np.sum(model.predict(Xt) != Yt))
    assert f"Hamming loss {wrong / Yt.size:.4f} ({wrong} of {Yt.size}" in out
    assert f"average precision {metrics.average_precision(Yt, model.decision_function(Xt)):.4f}" in out
    assert main(["predict", str(model_path), str(test)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "0,1,2" and len(rows) == 61
    np.testing.assert_array_equal(np.array([r.split(",") for r in rows[1:]], dtype=int), model.predict(Xt))


def test_multilabel_file_with_a_label_the_model_lacks(label_set_files, tmp_path, capsys):
    (train, test), _, _ = label_set_files
    assert main(["train", str(train), "-o", str(tmp_path / "m.json"), "--algorithm", "adaboostmh",
                 "--n-estimators", "2"]) == 0
    (tmp_path / "bad.svm").write_text("0,5 1:0.5\n")
    assert main(["evaluate", str(tmp_path / "m.json"), str(tmp_path / "bad.svm")]) == 1
    assert "has label id 5, but the model or training file it goes with has 3 labels" in capsys.readouterr().err


def test_npz_splits(tmp_path, capsys):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    np.savez(tmp_path / "d.npz", X_train=X[:150], y_train=y[:150], X_test=X[150:], y_test=y[150:])
    model = tmp_path / "m.json"
    assert main(["train", str(tmp_path / "d.npz"), "-o", str(model), "--n-estimators", "3",
                 "--eval", str(tmp_path / "d.npz")]) == 0
    assert "150 rows" in capsys.readouterr().out
    assert main(["evaluate", str(model), str(tmp_path / "d.npz")]) == 0  # the test split by default
    assert "50 rows" in capsys.readouterr().out
    assert main(["evaluate", str(model), str(tmp_path / "d.npz"), "--split", "train"]) == 0
    assert "150 rows" in capsys.readouterr().out


# -- input checks of the commands ------------------------------------------------------------

@pytest.fixture
def zero_based_files(tmp_path):
    """A 0-based training file, and a test file of it that never uses feature 0 ("auto" would
    read it 1-based, every value one feature to the left)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(160, 3))
    y = (X[:, 1] > 0).astype(int)
    train, test = tmp_path / "z.libsvm", tmp_path / "zt.libsvm"
    train.write_text("".join(f"{c} " + " ".join(f"{j}:{v:.4f}" for j, v in enumerate(x)) + "\n"
                             for x, c in zip(X[:120], y[:120])))
    test.write_text("".join(f"{c} " + " ".join(f"{j}:{v:.4f}" for j, v in enumerate(x) if j) + "\n"
                            for x, c in zip(X[120:], y[120:])))
    return train, test


def test_predict_and_evaluate_read_libsvm_files_with_the_training_files_base(zero_based_files, tmp_path, capsys):
    import json

    from gpuboost import load_model

    train, test = zero_based_files
    path = tmp_path / "z.json"
    assert main(["train", str(train), "-o", str(path), "--n-estimators", "10", "--max-leaves", "4"]) == 0
    assert json.loads(path.read_text())["libsvm_zero_based"] is True
    model = load_model(path)
    right = model.predict(load_data(test, n_features=3, zero_based=True)[0])
    assert not np.array_equal(right, model.predict(load_data(test, n_features=3)[0]))  # "auto" would be wrong
    capsys.readouterr()
    assert main(["predict", str(path), str(test)]) == 0
    assert capsys.readouterr().out.split()[1:] == [str(v) for v in right]
    assert main(["evaluate", str(path), str(test)]) == 0
    errors = int(np.sum(right != load_data(test, n_features=3, zero_based=True)[1]))
    assert f"40 rows; {errors} errors" in capsys.readouterr().out
    # a model saved without the key (an older file) reads files as before, by "auto"
    del model.libsvm_zero_based_
    model.save_model(tmp_path / "old.json")
    assert main(["predict", str(tmp_path / "old.json"), str(test)]) == 0
    assert capsys.readouterr().out.split()[1:] == [str(v) for v in model.predict(load_data(test, n_features=3)[0])]
    # a 1-based training file (no index 0: read 1-based); a test file with index 0 cannot be read as it was
    (tmp_path / "one.libsvm").write_text("0 1:1 2:3\n1 1:2 2:1\n0 1:1.5 2:3\n1 1:2.5 2:0.5\n")
    (tmp_path / "zero.libsvm").write_text("0 0:1 2:3\n")
    assert main(["train", str(tmp_path / "one.libsvm"), "-o", str(tmp_path / "one.json"), "--n-estimators", "2"]) == 0
    assert json.loads((tmp_path / "one.json").read_text())["libsvm_zero_based"] is False
    assert main(["predict", str(tmp_path / "one.json"), str(tmp_path / "zero.libsvm")]) == 1
    assert "zero.libsvm has feature index 0, but is read 1-based" in capsys.readouterr().err


def test_predict_on_libsvm_and_npz_files_without_labels(small_libsvm, tmp_path, capsys):
    train, _ = small_libsvm
    model = tmp_path / "a.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "3"]) == 0
    (tmp_path / "u.libsvm").write_text("1:1 2:3\n1:2\n3:1\n")  # no labels: each line starts with a feature
    np.savez(tmp_path / "u.npz", X_test=np.array([[1, 3, 0], [2, 0, 0], [0, 0, 1.0]]))  # no y_test
    (tmp_path / "l.libsvm").write_text("0 1:1 2:3\n2 1:2\n1 3:1\n")
    capsys.readouterr()
    assert main(["predict", str(model), str(tmp_path / "l.libsvm")]) == 0
    expected = capsys.readouterr().out
    assert len(expected.split()) == 4
    for data in ("u.libsvm", "u.npz"):
        for flags in ([], ["--unlabelled"]):
            assert main(["predict", str(model), str(tmp_path / data), *flags]) == 0, data
            assert capsys.readouterr().out == expected


def test_predict_output_is_replaced_only_when_the_prediction_succeeds(small_libsvm, tmp_path, capsys):
    train, test = small_libsvm
    model = tmp_path / "a.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "3"]) == 0
    out = tmp_path / "out.csv"
    out.write_text("precious\n")
    (tmp_path / "wide.csv").write_text("f1,f2,f3,f4,label\n1,2,3,4,0\n")  # more features than the model's 3
    assert main(["predict", str(model), str(tmp_path / "wide.csv"), "-o", str(out)]) == 1
    assert out.read_text() == "precious\n"
    assert main(["predict", str(model), str(test), "-o", str(out)]) == 0
    assert out.read_text().startswith("label\n") and len(out.read_text().split()) == 3
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    capsys.readouterr()
    assert main(["predict", str(model), str(test), "-o", str(tmp_path / "no" / "out.csv")]) == 1
    err = capsys.readouterr().err  # (found before the prediction)
    assert "cannot save the predictions to" in err and "does not exist" in err


def test_train_checks_the_output_path_before_training(small_libsvm, tmp_path, capsys):
    train, _ = small_libsvm
    assert main(["train", str(train), "-o", str(tmp_path / "missing" / "m.json"), "--n-estimators", "2"]) == 1
    captured = capsys.readouterr()
    assert "training" not in captured.out
    assert f"the directory {str(tmp_path / 'missing')!r} does not exist" in captured.err and ".tmp" not in captured.err


def test_train_on_an_npz_file_with_a_1d_X(tmp_path, capsys):
    np.savez(tmp_path / "d.npz", X_train=np.arange(6.0), y_train=np.array([0, 1] * 3))
    assert main(["train", str(tmp_path / "d.npz"), "-o", str(tmp_path / "m.json")]) == 1
    assert "d.npz: X_train has shape (6,); it must be 2-D" in capsys.readouterr().err


def test_evaluate_refuses_labels_the_model_does_not_know(small_libsvm, tmp_path, capsys):
    train, _ = small_libsvm
    model = tmp_path / "a.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "3"]) == 0
    capsys.readouterr()
    for labels, unknown in (("5 7", "[5, 7]"), ("0 7", "[7]")):  # all unknown, or some
        first, second = labels.split()
        (tmp_path / "n.libsvm").write_text(f"{first} 1:1 2:3\n{second} 1:2\n")
        assert main(["evaluate", str(model), str(tmp_path / "n.libsvm")]) == 1
        captured = capsys.readouterr()
        expected = f"n.libsvm holds labels the model was not trained on: {unknown}; its classes are [0, 1, 2]"
        assert expected in captured.err
        assert captured.out == ""  # no report before the error


def test_evaluate_a_single_label_model_on_label_sets(small_libsvm, tmp_path, capsys):
    train, _ = small_libsvm
    model = tmp_path / "a.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "3"]) == 0
    (tmp_path / "m.svm").write_text("0,2 1:1 2:3\n1 1:2\n")
    assert main(["evaluate", str(model), str(tmp_path / "m.svm")]) == 1
    assert "m.svm holds label sets (multi-label data, 3 labels), but" in capsys.readouterr().err


def test_plot_labels_must_match_the_models_and_the_output_name_is_kept(small_libsvm, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    train, _ = small_libsvm
    model = str(tmp_path / "a.json")
    assert main(["train", train.as_posix(), "-o", model, "--n-estimators", "3"]) == 0
    with pytest.raises(SystemExit) as exit:
        main(["plot", model, model, "--labels", "A", "-o", str(tmp_path / "x.png")])
    assert exit.value.code == 2
    assert "the numbers of --labels (1) and of models (2) differ" in capsys.readouterr().err
    assert main(["plot", model, "-o", str(tmp_path / "noext")]) == 0
    assert f"plot saved to {tmp_path / 'noext'}" in capsys.readouterr().out
    assert (tmp_path / "noext").read_bytes().startswith(b"\x89PNG")


def test_predict_on_a_csv_reads_no_label(tmp_path, capsys):
    """predict drops a CSV's label column unread: rows whose label is empty (unknown, to be
    predicted) are predicted, not refused as missing labels."""
    (tmp_path / "tr.csv").write_text("a,b,label\n1,2,x\n3,4,y\n5,6,y\n1,1,x\n")
    model = tmp_path / "m.json"
    assert main(["train", str(tmp_path / "tr.csv"), "-o", str(model), "--n-estimators", "2"]) == 0
    (tmp_path / "te.csv").write_text("a,b,label\n1,2,x\n3,4,\n5,6,\n")
    capsys.readouterr()
    assert main(["predict", str(model), str(tmp_path / "te.csv")]) == 0
    out = capsys.readouterr().out.split()
    assert out[0] == "label" and len(out) == 4 and set(out[1:]) <= {"x", "y"}


def test_csv_columns_are_matched_by_their_header_names(tmp_path, capsys):
    """A model trained on a CSV file with a header keeps its feature names, and predict,
    evaluate and train --eval match a CSV file's columns by them: the same columns in another
    order give the same predictions (they were read by position: silently other features),
    other columns are an error that names them."""
    rows = [(1, 2, "x", 0), (3, 4, "y", 1), (5, 6, "y", 1), (1, 1, "x", 0), (2, 2, "x", 0), (6, 6, "y", 1)]
    (tmp_path / "tr.csv").write_text("a,b,label,c\n" + "".join(f"{a},{b},{l},{c}\n" for a, b, l, c in rows))
    (tmp_path / "ev.csv").write_text("label,c,b,a\n" + "".join(f"{l},{c},{b},{a}\n" for a, b, l, c in rows))
    model = tmp_path / "m.json"
    assert main(["train", str(tmp_path / "tr.csv"), "-o", str(model), "--n-estimators", "3",
                 "--eval", str(tmp_path / "ev.csv")]) == 0
    assert "ev.csv: 0 errors of 6" in capsys.readouterr().out
    from gpuboost import load_model

    assert list(load_model(model).feature_names_in_) == ["a", "b", "c"]
    (tmp_path / "same.csv").write_text("a,b,c\n1,2,0\n5,6,1\n")
    (tmp_path / "moved.csv").write_text("c,a,b\n0,1,2\n1,5,6\n")
    outputs = []
    for data in ("same.csv", "moved.csv"):
        assert main(["predict", str(model), str(tmp_path / data), "--unlabelled", "--proba"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert main(["evaluate", str(model), str(tmp_path / "ev.csv")]) == 0
    assert "0 errors" in capsys.readouterr().out
    (tmp_path / "other.csv").write_text("a,b,d\n1,2,0\n")
    assert main(["predict", str(model), str(tmp_path / "other.csv"), "--unlabelled"]) == 1
    assert "missing ['c'], not in the model ['d']" in capsys.readouterr().err


def test_train_with_balanced_class_weights(small_libsvm, tmp_path, capsys):
    import gpuboost

    train, _ = small_libsvm
    model = tmp_path / "balanced.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "3", "--class-weight", "balanced"]) == 0
    assert gpuboost.load_model(model).get_params()["class_weight"] == "balanced"
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:  # a usage error: dicts have no command-line syntax
        main(["train", str(train), "-o", str(model), "--class-weight", "auto"])
    assert exit_.value.code == 2 and "invalid choice: 'auto'" in capsys.readouterr().err


def test_train_with_validation_fraction_and_early_stopping(libsvm_files, tmp_path, capsys):
    import gpuboost

    train, test, _ = libsvm_files
    model = tmp_path / "stopped.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "400", "--learning-rate", "0.5",
                 "--validation-fraction", "0.2", "--random-state", "3", "--early-stopping-rounds", "5",
                 "--eval", str(test)]) == 0
    loaded = gpuboost.load_model(model)
    assert loaded.get_params()["random_state"] == 3 and loaded.n_estimators_ < 400
    assert f"{test}: " in capsys.readouterr().out  # the --eval file is still the one reported


def test_a_diverging_fit_is_a_one_line_error(tmp_path, capsys):
    """K-LogitBoost's scores can overflow at extreme settings: the CLI says so in its one-line
    error, not in a traceback, and writes no model."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    np.savez(tmp_path / "iris.npz", X_train=X, y_train=y)
    assert main(["train", str(tmp_path / "iris.npz"), "-o", str(tmp_path / "k.json"), "--algorithm", "klogitboost",
                 "--learning-rate", "50", "--leaf-clip", "1000", "--n-estimators", "20"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gpuboost train: error: training diverged at iteration") and "Lower learning_rate" in err
    assert not (tmp_path / "k.json").exists()


def test_a_csv_test_file_is_read_in_the_models_label_type(tmp_path, capsys):
    """A model whose classes are text ("0", "1", "other": a CSV file of mixed labels) reads a
    test file whose labels happen to be numbers only as the same text classes."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    labels = np.array(["0", "1", "other"])[np.argmax(X, axis=1)]

    def write(path, rows):
        path.write_text("a,b,c,label\n" + "".join(f"{x[0]},{x[1]},{x[2]},{t}\n" for x, t in zip(X[rows], labels[rows])))

    write(tmp_path / "train.csv", np.arange(60))
    test_rows = np.arange(60, 90)[labels[60:] != "other"]
    write(tmp_path / "test.csv", test_rows)
    assert main(["train", str(tmp_path / "train.csv"), "-o", str(tmp_path / "m.json"), "--n-estimators", "5",
                 "--eval", str(tmp_path / "test.csv")]) == 0
    assert f" errors of {len(test_rows)}" in capsys.readouterr().out
    assert main(["evaluate", str(tmp_path / "m.json"), str(tmp_path / "test.csv")]) == 0
    out = capsys.readouterr().out
    model = load_model(tmp_path / "m.json")
    del model.feature_names_in_  # (X below is an array: by position)
    errors = int(np.sum(model.predict(X[test_rows]) != labels[test_rows]))
    assert f"test.csv: {len(test_rows)} rows; {errors} errors" in out


def test_a_headerless_test_file_keeps_its_first_row(tmp_path, capsys):
    """A test file without a header whose first row's class is there alone: with integer
    features, "5,3,owl" could be a header's names, but read against the model (its classes),
    it is a row: predict writes a label for every row, evaluate counts them all."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 9, size=(60, 2))
    labels = np.array(["cat", "dog", "owl"])[np.argmax(np.c_[X, 4 * np.ones(60)], axis=1)]
    (tmp_path / "train.csv").write_text("".join(f"{a},{b},{t}\n" for (a, b), t in zip(X, labels)))
    (tmp_path / "test.csv").write_text("5,3,owl\n4,1,dog\n1,2,cat\n8,0,cat\n")
    assert main(["train", str(tmp_path / "train.csv"), "-o", str(tmp_path / "m.json"), "--n-estimators", "3"]) == 0
    assert "60 rows, 2 features, 3 classes" in capsys.readouterr().out
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "test.csv")]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1 + 4
    assert main(["evaluate", str(tmp_path / "m.json"), str(tmp_path / "test.csv")]) == 0
    assert "test.csv: 4 rows" in capsys.readouterr().out


def test_a_models_label_column_is_found_by_its_features_names(tmp_path, capsys):
    """A model trained with --label-column on a file whose label is in the middle: predict and
    evaluate on such a file need no flag (its one column that is not a feature is the label)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    (tmp_path / "d.csv").write_text("a,species,b\n" + "".join(f"{a},{c},{b}\n" for (a, b), c in zip(X, y)))
    assert main(["train", str(tmp_path / "d.csv"), "-o", str(tmp_path / "m.json"), "--n-estimators", "3",
                 "--label-column", "species"]) == 0
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "d.csv"), "-o", str(tmp_path / "p.csv")]) == 0
    model = load_model(tmp_path / "m.json")
    assert list(model.feature_names_in_) == ["a", "b"]
    del model.feature_names_in_  # (X below is an array: by position)
    predicted = (tmp_path / "p.csv").read_text().split()[1:]
    assert predicted == [str(v) for v in model.predict(X)]
    assert main(["evaluate", str(tmp_path / "m.json"), str(tmp_path / "d.csv")]) == 0
    assert "d.csv: 40 rows" in capsys.readouterr().out


@pytest.mark.skipif(not hasattr(os, "symlink") or not os.path.isdir("/proc/self/fd"), reason="needs symlinks and /proc")
def test_outputs_are_written_through_symbolic_links(tmp_path):
    """-o replaced a symbolic link by a file (the file it named kept its old text), and
    -o /dev/stdout redirected to a file put its temporary file in /dev and renamed it over the
    /dev/stdout link (as root: the machine's /dev/stdout became a file). A link is written
    through as the shell's > does; the same for save_model."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    data = tmp_path / "d.npz"
    np.savez(data, X=X, y=y)
    model = tmp_path / "m.json"
    assert main(["train", str(data), "-o", str(model), "--n-estimators", "3"]) == 0
    target, link = tmp_path / "target.csv", tmp_path / "link.csv"
    target.write_text("old\n")
    link.symlink_to(target.name)
    assert main(["predict", str(model), str(data), "-o", str(link)]) == 0
    assert link.is_symlink() and target.read_text().startswith("label\n")
    # this process's stdout is written as it was opened: to append, and an unlinked file
    # (/proc/self/fd/1 rather than /dev/stdout: should this fail again, no file of the machine is touched)
    command = [sys.executable, "-m", "gpuboost", "predict", str(model), str(data), "-o", "/proc/self/fd/1"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    (tmp_path / "log.txt").write_text("before\n")
    with open(tmp_path / "log.txt", "a") as out:
        result = subprocess.run(command, stdout=out, stderr=subprocess.PIPE, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "log.txt").read_text() == "before\n" + target.read_text()
    with tempfile.TemporaryFile() as out:
        assert subprocess.run(command, stdout=out, env=env).returncode == 0
        out.seek(0)
        assert out.read().decode() == target.read_text()
    saved, saved_link = tmp_path / "saved.json", tmp_path / "saved-link.json"
    saved.write_text("{}")
    saved_link.symlink_to(saved.name)
    load_model(model).save_model(saved_link)
    assert saved_link.is_symlink() and load_model(saved).n_estimators == 3


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_model_trained_to_standard_output_is_the_model_file_alone(tmp_path):
    """train -o /dev/stdout printed its lines ("training aoso on ...", "model saved to ...")
    into the model's JSON: they go to standard error there, the output loads as a model."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    np.savez(tmp_path / "d.npz", X=X, y=(X[:, 0] > 0).astype(int))
    command = [sys.executable, "-m", "gpuboost", "train", str(tmp_path / "d.npz"), "-o", "/proc/self/fd/1",
               "--n-estimators", "3", "--verbose", "1"]
    with open(tmp_path / "m.json", "w") as out:
        result = subprocess.run(command, stdout=out, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr
    assert "training aoso on" in result.stderr and "model saved to /proc/self/fd/1" in result.stderr
    assert load_model(tmp_path / "m.json").n_estimators_ == 3


def test_evaluate_names_an_npz_file_whose_rows_and_labels_differ(tmp_path, capsys):
    """X and y of different lengths in an .npz file were numpy's 'operands could not be
    broadcast together'."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savez(tmp_path / "w.npz", X=X, y=y[:40])
    model = tmp_path / "m.json"
    assert main(["train", str(tmp_path / "d.npz"), "-o", str(model), "--n-estimators", "3"]) == 0
    assert main(["evaluate", str(model), str(tmp_path / "w.npz")]) == 1
    assert "w.npz: X has 60 rows but y has 40 labels; give one label per row." in capsys.readouterr().err


def test_a_benchmark_scripts_own_error_message_is_shown(capsys):
    """gpuboost bench turned a script's sys.exit("message") into int()'s ValueError about it."""
    from gpuboost.__main__ import BENCH_SCRIPTS

    if not (REPO / "benchmarks" / BENCH_SCRIPTS["cpu"]).exists():
        pytest.skip("the benchmarks are not in this tree")
    assert main(["bench", "cpu", "--trees", "nosuchdata=10"]) == 1
    err = capsys.readouterr().err
    assert "unknown dataset 'nosuchdata'" in err and "invalid literal" not in err


def test_output_that_names_an_input_file_is_refused(libsvm_files, tmp_path, capsys):
    """-o naming the training data, the eval file or the model read would replace it with what
    was made from it: refused, the file left as it was; a bad --device or --algorithm is a
    usage error that lists the choices."""
    train, test, _ = libsvm_files
    data = train.read_bytes()
    assert main(["train", str(train), "-o", str(train), "--n-estimators", "2"]) == 1
    assert "is the input file" in capsys.readouterr().err and train.read_bytes() == data
    model = tmp_path / "m.json"
    assert main(["train", str(train), "-o", str(model), "--n-estimators", "2", "--verbose", "0"]) == 0
    saved = model.read_bytes()
    evaluated = test.read_bytes()
    for command in (["predict", str(model), str(test), "-o", str(model)],
                    ["train", str(train), "-o", str(test), "--eval", str(test), "--n-estimators", "2"]):
        assert main(command) == 1
        assert "is the input file" in capsys.readouterr().err
    # a path that resolves to a file through "." or "..": refused as naming a directory
    assert main(["predict", str(model), str(test), "-o", str(test) + "/."]) == 1
    assert "names a directory" in capsys.readouterr().err
    assert model.read_bytes() == saved and test.read_bytes() == evaluated
    for flag, value in (("--device", "gpu"), ("--algorithm", "adaboost"), ("--pair-rule", "eq31")):
        with pytest.raises(SystemExit) as exit_:
            main(["train", str(train), "-o", str(model), flag, value])
        assert exit_.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_train_says_which_line_it_read_as_a_csv_header(tmp_path, capsys):
    """The header rule of a CSV file is a guess where the file does not say (counting numbers
    and a label that no other row repeats): train shows what it took for the header, so that a
    data row read as one is seen, and says what to do."""
    data = tmp_path / "h.csv"
    data.write_text("5,3,cat\n1,2,dog\n3,4,dog\n2,2,emu\n4,1,emu\n1,1,dog\n5,5,emu\n")
    assert main(["train", str(data), "-o", str(tmp_path / "m.json"), "--n-estimators", "2", "--verbose", "0"]) == 0
    out = capsys.readouterr().out
    assert "line 1 read as the header, features named 5, 3" in out and "add a header line" in out
    data.write_text("1,2,dog\n3,4,dog\n2,2,emu\n4,1,emu\n")
    assert main(["train", str(data), "-o", str(tmp_path / "m.json"), "--n-estimators", "2", "--verbose", "0"]) == 0
    assert "header" not in capsys.readouterr().out
