"""Callbacks, checkpoints, resuming a killed run, warm_start."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuboost
from gpuboost import BoostClassifier
from conftest import REPO
from gpuboost.callback import Callback, Checkpoint


class Recorder(Callback):
    def __init__(self, stop_after=None):
        self.calls, self.stop_after = [], stop_after

    def before_training(self, model):
        self.calls.append(("before", len(model.trees_)))

    def after_iteration(self, model, iteration):
        self.calls.append(("after", iteration, len(model.trees_), len(model.train_loss_)))
        return self.stop_after is not None and iteration + 1 >= self.stop_after

    def after_training(self, model):
        self.calls.append(("end", len(model.trees_)))


def test_hooks_see_the_model_so_far_and_can_stop(small_multiclass):
    X, y = small_multiclass
    recorder = Recorder(stop_after=4)
    model = BoostClassifier(n_estimators=10, max_leaves=4, callbacks=[recorder]).fit(X, y)
    assert model.n_trees_ == 4
    assert recorder.calls == [("before", 0)] + [("after", i, i + 1, i + 1) for i in range(4)] + [("end", 4)]


def test_continuing_a_checkpoint_gives_the_same_model_bytes(small_multiclass, tmp_path):
    X, y = small_multiclass
    params = dict(n_estimators=30, max_leaves=6)
    full = BoostClassifier(**params).fit(X, y)
    full.save_model(tmp_path / "full.json")
    checkpoint = tmp_path / "ckpt.json"
    BoostClassifier(**params, callbacks=[Checkpoint(checkpoint, every=5), Recorder(stop_after=13)]).fit(X, y)
    assert len(json.loads(checkpoint.read_text())["trees"]) == 13  # saved again at the end
    resumed = BoostClassifier(**params).fit(X, y, init_model=checkpoint)
    resumed.save_model(tmp_path / "resumed.json")
    assert (tmp_path / "resumed.json").read_bytes() == (tmp_path / "full.json").read_bytes()


def test_warm_start_adds_trees(small_multiclass):
    X, y = small_multiclass
    full = BoostClassifier(n_estimators=20, max_leaves=6).fit(X, y, eval_set=[(X, y)])
    model = BoostClassifier(n_estimators=8, max_leaves=6, warm_start=True).fit(X, y)
    model.set_params(n_estimators=20).fit(X, y, eval_set=[(X, y)])
    assert model.n_trees_ == 20
    np.testing.assert_array_equal(model.decision_function(X), full.decision_function(X))
    np.testing.assert_array_equal(model.train_loss_, full.train_loss_)
    np.testing.assert_array_equal(model.eval_error_[0], full.eval_error_[0])  # replayed history


@pytest.mark.parametrize(
    "change, message",
    [
        ({"learning_rate": 0.2}, "learning_rate"),
        ({"n_estimators": 3}, "more than n_estimators"),
    ],
)
def test_continuing_with_other_settings_is_refused(small_multiclass, change, message):
    X, y = small_multiclass
    init = BoostClassifier(n_estimators=5, max_leaves=4).fit(X, y)
    with pytest.raises(ValueError, match=message):
        BoostClassifier(**({"max_leaves": 4, "n_estimators": 10} | change)).fit(X, y, init_model=init)


def test_continuing_on_other_data_is_refused(small_multiclass):
    X, y = small_multiclass
    init = BoostClassifier(n_estimators=5, max_leaves=4).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        BoostClassifier(n_estimators=10).fit(X[:, :3], y, init_model=init)
    with pytest.raises(ValueError, match="classes"):
        BoostClassifier(n_estimators=10).fit(X, y + 1, init_model=init)


def test_checkpoint_every_must_be_positive():
    with pytest.raises(ValueError, match="every"):
        Checkpoint("x.json", every=0)


def test_numpy_integers_are_integers(small_multiclass):
    from sklearn.model_selection import GridSearchCV

    from gpuboost.callback import EarlyStopping, ProgressBar

    X, y = small_multiclass
    # a parameter grid gives NumPy integers: np.arange(2) holds np.int64
    model = BoostClassifier(n_estimators=4, max_leaves=4, early_stopping_rounds=np.int64(2), verbose=np.int64(2))
    assert model.fit(X, y, eval_set=[(X, y)]).n_estimators_ >= 1
    GridSearchCV(BoostClassifier(n_estimators=2, max_leaves=4), {"verbose": np.arange(2)}, cv=2).fit(X, y)
    callbacks = [Checkpoint("x.json", every=np.int64(5)), EarlyStopping(np.int32(3), data=np.uint8(0)),
                 ProgressBar(every=np.int16(2))]
    values = (callbacks[0].every, callbacks[1].rounds, callbacks[1].data, callbacks[2].every)
    assert [type(v) for v in values] == [int] * 4
    assert repr(callbacks[1]) == "EarlyStopping(3, data=0, metric='loss')"


@pytest.mark.parametrize("name, args, message", [
    ("Checkpoint", ("x.json", True), "every must be a positive integer, got True"),
    ("Checkpoint", ("x.json", 2.0), "every must be a positive integer, got 2.0"),
    ("EarlyStopping", (np.int64(0),), "rounds must be a positive integer, got np.int64"),
    ("EarlyStopping", (3, -1), "data must be an integer >= 0, got -1"),
    ("ProgressBar", ("3",), "every must be a positive integer, got '3'"),
])
def test_callback_arguments_are_checked(name, args, message):
    with pytest.raises(ValueError, match=message):
        getattr(gpuboost.callback, name)(*args)


@pytest.mark.parametrize("params, message", [
    ({"verbose": 2.0}, "verbose must be an integer >= 0, got 2.0"),
    ({"verbose": np.float64(1)}, "verbose must be an integer >= 0"),
    ({"early_stopping_rounds": np.int64(0)}, "early_stopping_rounds must be an integer >= 1"),
])
def test_estimator_errors_name_the_estimator_parameter(small_multiclass, params, message):
    # the estimator checks its parameters before it builds ProgressBar(every=verbose) or
    # EarlyStopping(early_stopping_rounds): never a message about a parameter the user did not set
    X, y = small_multiclass
    with pytest.raises(ValueError, match=message):
        BoostClassifier(n_estimators=2, **params).fit(X, y, eval_set=[(X, y)])


SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    import numpy as np
    from gpuboost import BoostClassifier
    from gpuboost.callback import Callback, Checkpoint

    class Crash(Callback):
        def after_iteration(self, model, iteration):
            if iteration + 1 == int(sys.argv[3]):
                os.kill(os.getpid(), signal.SIGKILL)  # no clean-up, as a crash or kill -9
            return False

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=400), [-1, 0, 1])
    mode, path = sys.argv[1], sys.argv[2]
    params = dict(n_estimators=40, max_leaves=8)
    if mode == "crash":
        BoostClassifier(**params, callbacks=[Checkpoint(path, every=10), Crash()]).fit(X, y)
    elif mode == "resume":
        BoostClassifier(**params).fit(X, y, init_model=path).save_model(path + ".final")
    else:
        BoostClassifier(**params).fit(X, y).save_model(path)
    """
)


def run(*args, **kwargs):
    # the subprocess imports the gpuboost that this test session imports
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, *args], env=env, **kwargs)


def test_a_killed_run_resumes_to_the_same_bytes(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    checkpoint, reference = str(tmp_path / "ckpt.json"), str(tmp_path / "reference.json")
    crashed = run(str(script), "crash", checkpoint, "27", capture_output=True)
    assert crashed.returncode == -9  # killed by SIGKILL at iteration 27
    assert len(json.loads(open(checkpoint).read())["trees"]) == 20  # the last checkpoint
    run(str(script), "resume", checkpoint, "0", check=True)
    run(str(script), "full", reference, "0", check=True)
    assert open(checkpoint + ".final", "rb").read() == open(reference, "rb").read()
    assert gpuboost.load_model(reference).n_trees_ == 40


def test_a_failed_refit_leaves_the_fitted_model_intact(small_multiclass):
    X, y = small_multiclass
    model = BoostClassifier(n_estimators=5, max_leaves=4, warm_start=True).fit(X, y)
    before = model.predict_proba(X)
    classes = model.classes_.copy()
    with pytest.raises(ValueError, match="classes"):
        model.set_params(n_estimators=10).fit(X, y + 1)  # other labels: cannot continue
    with pytest.raises(ValueError, match="features"):
        model.fit(X[:, :2], y)
    np.testing.assert_array_equal(model.classes_, classes)
    np.testing.assert_array_equal(model.predict_proba(X), before)
    assert model.n_trees_ == 5 and model.n_features_in_ == X.shape[1]


def test_early_stopping_keeps_the_best_iteration():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(scale=1.5, size=300) > 0).astype(int)  # noisy: overfits soon
    X_valid = rng.normal(size=(300, 4))
    y_valid = (X_valid[:, 0] + rng.normal(scale=1.5, size=300) > 0).astype(int)
    model = BoostClassifier(n_estimators=500, max_leaves=8, learning_rate=0.3, early_stopping_rounds=10)
    model.fit(X, y, eval_set=[(X_valid, y_valid)])
    full = BoostClassifier(n_estimators=500, max_leaves=8, learning_rate=0.3).fit(X, y, eval_set=[(X_valid, y_valid)])
    best = int(np.argmin(full.eval_loss_[0]))
    assert model.best_iteration_ == best < 490  # it stopped well before the budget
    assert model.n_estimators_ == best + 1 and len(model.eval_loss_[0]) == best + 1
    assert model.best_score_ == pytest.approx(full.eval_loss_[0][best])
    staged = list(full.staged_predict_proba(X_valid))[best]
    np.testing.assert_array_equal(model.predict_proba(X_valid), staged)


def test_early_stopping_needs_an_eval_set(small_multiclass):
    X, y = small_multiclass
    with pytest.raises(ValueError, match="eval_set"):
        BoostClassifier(n_estimators=5, early_stopping_rounds=3).fit(X, y)


def test_progress_lines_without_tqdm(small_multiclass, monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    X, y = small_multiclass
    BoostClassifier(n_estimators=6, max_leaves=4, verbose=2).fit(X, y, eval_set=[(X, y)])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert len(lines) == 3 and "eval_errors" in lines[-1] and lines[-1].startswith("[    6]")


def test_progress_bar_with_tqdm(small_multiclass):
    pytest.importorskip("tqdm")
    import io

    from gpuboost.callback import ProgressBar

    X, y = small_multiclass
    out = io.StringIO()
    BoostClassifier(n_estimators=6, max_leaves=4, callbacks=[ProgressBar(every=3, file=out)]).fit(X, y)
    text = out.getvalue()
    assert "6/6" in text and "loss=" in text


def test_silent_by_default(small_multiclass, capsys):
    X, y = small_multiclass
    BoostClassifier(n_estimators=3, max_leaves=4).fit(X, y)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_warm_start_refuses_a_changed_learning_rate_or_algorithm(small_multiclass):
    X, y = small_multiclass
    model = BoostClassifier(n_estimators=4, max_leaves=4, warm_start=True).fit(X, y)
    before = model.predict_proba(X)
    with pytest.raises(ValueError, match="learning_rate is 0.1"):
        model.set_params(learning_rate=0.5, n_estimators=6).fit(X, y)
    with pytest.raises(ValueError, match="algorithm is 'aoso'"):
        model.set_params(learning_rate=0.1, algorithm="klogitboost").fit(X, y)
    model.set_params(algorithm="aoso")
    np.testing.assert_array_equal(model.predict_proba(X), before)


def test_an_estimator_with_a_progress_bar_pickles_and_clones(small_multiclass, capsys):
    """A fitted estimator keeps its callbacks: its ProgressBar must not keep the tqdm bar (which
    holds a stream) after training, or pickling, joblib and cross-validation's clone fail
    ('cannot pickle _io.TextIOWrapper'); a ProgressBar writing to sys.stdout clones too."""
    import copy
    import pickle

    from sklearn.base import clone

    from gpuboost.callback import ProgressBar

    X, y = small_multiclass
    model = BoostClassifier(n_estimators=3, max_leaves=4, callbacks=[ProgressBar()]).fit(X, y)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))
    clone(model).fit(X, y)
    bar = ProgressBar(every=2, file=sys.stdout)
    assert pickle.loads(pickle.dumps(bar)).file is sys.stdout
    assert copy.deepcopy(bar).file is sys.stdout and copy.deepcopy(bar).every == 2
    clone(BoostClassifier(n_estimators=2, callbacks=[bar])).fit(X, y)


def test_a_checkpoint_of_labels_no_file_can_hold_fails_before_training(tmp_path):
    """datetime64 labels fit but cannot be saved: a Checkpoint says so before the first
    iteration, not after `every` iterations of work."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.array([np.datetime64("2020-01-01"), np.datetime64("2021-01-01")] * 20)
    seen = []

    class Count(Callback):
        def after_iteration(self, model, iteration):
            seen.append(iteration)
            return False

    model = BoostClassifier(n_estimators=5, max_leaves=4, callbacks=[Count(), Checkpoint(tmp_path / "c.json", every=1)])
    with pytest.raises(TypeError, match=r"classes of dtype datetime64\[D\] cannot be saved"):
        model.fit(X, y)
    assert seen == [] and not (tmp_path / "c.json").exists()


def test_a_checkpoint_listed_before_early_stopping_saves_the_returned_model(tmp_path):
    """The end-of-training hooks ran in list order: a Checkpoint before an EarlyStopping saved
    the model before its truncation to the best iteration."""
    from gpuboost.callback import EarlyStopping

    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(scale=1.5, size=300) > 0).astype(int)
    X_valid = rng.normal(size=(300, 4))
    y_valid = (X_valid[:, 0] + rng.normal(scale=1.5, size=300) > 0).astype(int)
    path = tmp_path / "c.json"
    model = BoostClassifier(n_estimators=200, max_leaves=8, learning_rate=1.0,
                            callbacks=[Checkpoint(path, every=100), EarlyStopping(3)])
    model.fit(X, y, eval_set=[(X_valid, y_valid)])
    assert model.n_estimators_ < 200  # (it stopped early, and kept its best iteration)
    saved = gpuboost.load_model(path)
    assert saved.n_estimators_ == model.n_estimators_ == model.best_iteration_ + 1
    np.testing.assert_array_equal(saved.predict_proba(X_valid), model.predict_proba(X_valid))


def test_two_early_stoppings_keep_the_earliest_cut_and_its_score(tmp_path):
    """Each EarlyStopping cut the model at its own best and set best_iteration_: a later one's
    best past the first's cut named an iteration the model no longer had, and the saved file
    (a Checkpoint's last save too) did not load."""
    from gpuboost import load_model
    from gpuboost.callback import Checkpoint, EarlyStopping

    X, y, Xv, yv = _noisy_split()
    cuts = set()
    for order in ((0, 1), (1, 0)):
        monitors = [EarlyStopping(5, metric="error"), EarlyStopping(5)]
        model = BoostClassifier(n_estimators=60, max_leaves=8, learning_rate=0.3,
                                callbacks=[monitors[i] for i in order] + [Checkpoint(tmp_path / "c.json", every=1)])
        model.fit(X, y, eval_set=[(Xv, yv)])
        first = min(monitors, key=lambda m: m.best_iteration)
        assert model.n_estimators_ == first.best_iteration + 1
        assert (model.best_iteration_, model.best_score_) == (first.best_iteration, first.best_score)
        assert load_model(tmp_path / "c.json").best_iteration_ == model.best_iteration_
        cuts.add(tuple(m.best_iteration for m in monitors))
    assert all(a != b for a, b in cuts)  # (the two monitors' bests differ: the case tested)


def test_a_continuation_without_new_iterations_stops_early_as_the_whole_fit(tmp_path):
    """A run whose checkpoint already held its n_estimators iterations ran none on resuming:
    EarlyStopping saw no iteration and kept every tree, without best_iteration_."""
    X, y, Xv, yv = _noisy_split()
    params = dict(n_estimators=20, max_leaves=6, learning_rate=0.3)
    whole = BoostClassifier(early_stopping_rounds=15, **params).fit(X, y, eval_set=[(Xv, yv)])
    assert whole.n_estimators_ < 20
    BoostClassifier(**params).fit(X, y, eval_set=[(Xv, yv)]).save_model(tmp_path / "all.json")
    resumed = BoostClassifier(early_stopping_rounds=15, **params).fit(X, y, eval_set=[(Xv, yv)],
                                                                      init_model=tmp_path / "all.json")
    assert (resumed.n_estimators_, resumed.best_iteration_) == (whole.n_estimators_, whole.best_iteration_)
    np.testing.assert_array_equal(resumed.decision_function(X), whole.decision_function(X))


def _noisy_split():
    rng = np.random.default_rng(1)
    X, Xv = rng.normal(size=(200, 5)), rng.normal(size=(100, 5))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] + 0.5 * rng.normal(size=200) > 0)
    yv = (Xv[:, 0] > 0).astype(int) + (Xv[:, 1] + 0.5 * rng.normal(size=100) > 0)
    return X, y, Xv, yv


def test_an_early_stopping_of_an_eval_set_the_fit_lacks_is_refused_before_training(tmp_path):
    # (it failed after the first iteration, a Checkpoint's first file written, and its message
    # said "pass eval_set=[(X_valid, y_valid)]" to a fit that had one)
    from gpuboost.callback import Checkpoint, EarlyStopping

    X, y, Xv, yv = _noisy_split()
    model = BoostClassifier(n_estimators=5, callbacks=[Checkpoint(tmp_path / "c.json", every=1), EarlyStopping(3, data=1)])
    with pytest.raises(ValueError, match=r"watches eval set 1, and the fit's eval sets are 1 \(data=0 .. 0\)"):
        model.fit(X, y, eval_set=[(Xv, yv)])
    assert not (tmp_path / "c.json").exists()
    with pytest.raises(ValueError, match="eval sets are none: pass eval_set"):
        model.fit(X, y)
