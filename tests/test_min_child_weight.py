"""min_child_weight: a least Hessian sum per child, checked by brute force and on the models."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.model_selection import train_test_split

from gpuboost import BoostClassifier, losses
from gpuboost.backends.numpy import best_splits


def brute_force(hist, msl, mcw):
    """(gain, feature, bin, missing_left) of the best split over every candidate, by explicit sums."""
    d, n_codes, _ = hist.shape
    total = hist[0].sum(axis=0)
    best = (-np.inf, None)
    for f in range(d):
        missing = hist[f, -1]
        for b in range(n_codes - 1):
            left = hist[f, :b + 1].sum(axis=0)
            right = hist[f, b + 1:-1].sum(axis=0)
            for missing_left in (False, True):
                if missing_left and missing[2] == 0:
                    continue
                lo, hi = (left + missing, right) if missing_left else (left, right + missing)
                if min(lo[2], hi[2]) < msl or min(lo[1], hi[1]) < mcw:
                    continue
                gain = losses.split_gain(lo[0], lo[1], hi[0], hi[1], total[0], total[1])
                if gain > best[0] * (1 + 1e-9) + 1e-300:
                    best = (gain, (f, b, missing_left))
    return best


@pytest.mark.parametrize("seed", range(30))
def test_the_reference_split_search_is_the_brute_force_one(seed):
    rng = np.random.default_rng(seed)
    d, n_codes = int(rng.integers(1, 4)), int(rng.integers(3, 8))
    counts = rng.integers(0, 5, size=(1, n_codes)).astype(float)
    g = np.where(counts > 0, rng.normal(size=counts.shape), 0.0)
    h = np.where(counts > 0, rng.uniform(0.01, 1.0, size=counts.shape), 0.0)
    base = np.stack([g, h, counts], axis=-1)[0]
    hist = np.stack([rng.permutation(base) for _ in range(d)])  # every feature holds every row
    mcw = float(rng.uniform(0.0, 0.5) * h.sum())
    gain, at = brute_force(hist, 1, mcw)
    found = best_splits(hist[None], hist[None, 0].sum(axis=1), 1, min_child_weight=mcw)
    if at is None or not gain > 0:
        assert not found.gain[0] > 0
    else:
        np.testing.assert_allclose(found.gain[0], gain, rtol=1e-12)
        got = (found.feature[0], found.bin[0], found.missing_left[0])
        # the same split, or one of equal gain (ties go to the first candidate in both)
        assert got == at or np.isclose(gain, found.gain[0], rtol=1e-9)


def noisy_blobs(centers):
    X, y = make_blobs(centers=centers, random_state=0, cluster_std=20)
    return train_test_split(X, y, test_size=0.5, random_state=0)


@pytest.mark.parametrize("algorithm", ["aoso", "robustlogit", "mart"])
def test_tiny_class_weights_get_no_leaves_of_their_own(algorithm):
    # scikit-learn's check_class_weight_classifiers: weights 1000 against 1e-4; without a least
    # Hessian per child 64-78% of the test rows are class 0, with one every row is
    X_train, X_test, y_train, _ = noisy_blobs(3)
    weights = {0: 1000, 1: 0.0001, 2: 0.0001}
    plain = BoostClassifier(algorithm=algorithm, n_estimators=10, max_leaves=8, class_weight=weights)
    assert np.mean(plain.fit(X_train, y_train).predict(X_test) == 0) < 0.87
    least = 1.0 if algorithm == "mart" else 1e-3  # (MART's first-order Hessian is the weight)
    model = plain.set_params(min_child_weight=least).fit(X_train, y_train)
    assert np.mean(model.predict(X_test) == 0) > 0.87


def test_it_regularises_and_zero_is_the_papers_model(small_multiclass):
    X, y = small_multiclass
    papers = BoostClassifier(n_estimators=20, max_leaves=8).fit(X, y)
    np.testing.assert_array_equal(BoostClassifier(n_estimators=20, max_leaves=8, min_child_weight=0.0)
                                  .fit(X, y).predict_proba(X), papers.predict_proba(X))
    leaves = [sum(int((t.feature < 0).sum()) for t in BoostClassifier(n_estimators=20, max_leaves=8,
                                                                      min_child_weight=m).fit(X, y).trees_)
              for m in (0.0, 20.0, 40.0)]
    assert leaves[0] > leaves[1] > leaves[2]


@pytest.mark.parametrize("algorithm", ["klogitboost", "adaboostmh"])
def test_vector_trees_refuse_it(small_multiclass, algorithm):
    X, y = small_multiclass
    with pytest.raises(ValueError, match="min_child_weight applies to"):
        BoostClassifier(n_estimators=2, min_child_weight=1.0, algorithm=algorithm).fit(X, y)


@pytest.mark.parametrize("algorithm, least", [("aoso", 20.0), ("mart", 60.0), ("robustlogit", 10.0)])
def test_multilabel_pair_and_class_trees_take_it(small_multiclass, algorithm, least):
    X, y = small_multiclass
    Y = np.maximum(np.eye(4, dtype=int)[y], np.roll(np.eye(4, dtype=int)[y], 1, axis=1))  # two labels a row
    plain = BoostClassifier(n_estimators=10, max_leaves=8, algorithm=algorithm).fit(X, Y)
    least = BoostClassifier(n_estimators=10, max_leaves=8, algorithm=algorithm, min_child_weight=least).fit(X, Y)
    assert not np.array_equal(plain.predict_proba(X), least.predict_proba(X))
    leaves = [sum(int((t.feature < 0).sum()) for t in m.trees_) for m in (plain, least)]
    assert leaves[1] < leaves[0]


def test_at_the_defaults_aoso_needs_more():
    # the check's data at 1000 iterations of 20 leaves: 1e-3 is too little for AOSO, 1e-2 enough
    # (docs/algorithms.md, "Sample and class weights")
    X_train, X_test, y_train, _ = noisy_blobs(3)
    weights = {0: 1000, 1: 0.0001, 2: 0.0001}
    share = [np.mean(BoostClassifier(class_weight=weights, min_child_weight=m).fit(X_train, y_train).predict(X_test)
                     == 0) for m in (1e-3, 1e-2)]
    assert share[0] < 0.87 < share[1]
