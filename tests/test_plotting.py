"""Feature importance and the plots (matplotlib, headless)."""

import numpy as np
import pytest

from gpuboost import BoostClassifier


def test_feature_importance_finds_the_informative_feature():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = (X[:, 2] > 0).astype(int) + (X[:, 2] > 1)
    model = BoostClassifier(n_estimators=10, max_leaves=4).fit(X, y)
    assert np.argmax(model.feature_importances_) == 2
    np.testing.assert_allclose(model.feature_importances_.sum(), 1.0)
    splits = model.feature_importance("split")
    assert splits.sum() == sum(int((t.feature >= 0).sum()) for t in model.trees_)
    with pytest.raises(ValueError, match="importance_type"):
        model.feature_importance("cover")


def test_plots_draw(small_multiclass, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from gpuboost.plotting import plot_importance, plot_training_curves

    X, y = small_multiclass
    a = BoostClassifier(n_estimators=10, max_leaves=4).fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])])
    b = BoostClassifier(algorithm="mart", n_estimators=3, max_leaves=4).fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])])
    axes = plot_training_curves([a, b])
    assert len(axes[0].lines) == 2 and axes[0].lines[1].get_xdata()[-1] == 12  # MART: 4 trees an iteration
    axes[0].figure.savefig(tmp_path / "curves.png")
    ax = plot_importance(a)
    assert len(ax.patches) == X.shape[1]
    assert (tmp_path / "curves.png").stat().st_size > 1000


def test_training_curves_need_one_label_per_model(small_multiclass):
    pytest.importorskip("matplotlib").use("Agg")
    from gpuboost.plotting import plot_training_curves

    X, y = small_multiclass
    model = BoostClassifier(n_estimators=2, max_leaves=4).fit(X, y)
    with pytest.raises(ValueError, match="labels has 1 entries for 2 models: give one label per model"):
        plot_training_curves([model, model], labels=["a"])


def test_plots_check_their_model(small_multiclass):
    """An unfitted estimator or another object is a clear error, not an AttributeError; a
    model whose algorithm set_params changed after fit is plotted as it was trained."""
    from sklearn.exceptions import NotFittedError

    pytest.importorskip("matplotlib").use("Agg")
    from gpuboost.plotting import plot_importance, plot_training_curves

    for plot in (plot_training_curves, plot_importance):
        with pytest.raises(NotFittedError):
            plot(BoostClassifier())
        with pytest.raises(TypeError, match="plots take fitted gpuboost models \\(BoostClassifier\\), got NoneType"):
            plot(None)
    X, y = small_multiclass
    model = BoostClassifier(algorithm="mart", n_estimators=3, max_leaves=4).fit(X, y).set_params(algorithm="aoso")
    line = plot_training_curves(model)[0].lines[0]
    assert list(line.get_xdata()) == [4, 8, 12] and line.get_label() == "mart"
    with pytest.raises(ValueError, match="max_features must be an integer >= 1, got -1"):
        plot_importance(model, max_features=-1)


def test_training_curves_take_labels_as_an_array(small_multiclass):
    """labels as a NumPy array was 'the truth value of an array is ambiguous'."""
    pytest.importorskip("matplotlib").use("Agg")
    from gpuboost.plotting import plot_training_curves

    X, y = small_multiclass
    model = BoostClassifier(n_estimators=2, max_leaves=4).fit(X, y)
    axes = plot_training_curves([model, model], labels=np.array(["a", "b"]))
    assert [line.get_label() for line in axes[0].get_lines()] == ["a", "b"]
