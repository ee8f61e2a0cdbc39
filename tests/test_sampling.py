"""subsample and colsample_bytree: trees grown on a sample of the rows, or of the features.

A tree grown on a sample of rows must be the tree of those rows alone; every row's score must
then move by its leaf's vector, sampled or not. A tree on a sample of features must be the tree
of those features alone. The compiled backend must grow the reference's trees, and the draws
must depend on the seed, the iteration and the tree only (threads, continuations).
"""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification

from gpuboost import BoostClassifier
from gpuboost.backends.base import root_rows
from gpuboost.backends.cpu import CpuBackend
from gpuboost.backends.numpy import NumpyBackend, best_splits
from gpuboost.boosting import boost, feature_sample, row_sample
from dataclasses import replace

from gpuboost.grower import GrowerParams, TreeGrower

from conftest import bins_as_thresholds

TREE_ARRAYS = ("feature", "bin", "missing_left", "left", "right", "pair", "n_samples")

PARAMS = [
    GrowerParams(max_leaves=6),  # AOSO
    GrowerParams(max_leaves=5, min_samples_leaf=3, pair_rule="eq32"),
    GrowerParams(fixed_pair=(1, -1), first_order=True, max_leaves=7),  # MART's tree of class 1
    GrowerParams(fixed_pair=(2, 0), first_order=True),  # ABC-MART's tree of class 2, base 0
    GrowerParams(fixed_pair=(0, -1), value_scale=0.5),  # robust LogitBoost's tree
    GrowerParams(max_leaves=6, min_child_weight=0.5),
]


def problem(seed, n=300, d=4, k=3, n_bins=12, weighted=False):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < 0.05] = 255
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.2, 2.0, size=n) if weighted else None
    F = rng.normal(scale=1.5, size=(n, k))
    return codes, y, w, F, n_bins


def test_row_sample_draws_by_seed_and_iteration_alone():
    assert row_sample(100, 1.0, 7, 3) is None
    a = row_sample(1000, 0.3, 7, 3)
    assert a.dtype == np.int64 and len(a) == 300 and np.all(np.diff(a) > 0) and 0 <= a[0] and a[-1] < 1000
    np.testing.assert_array_equal(a, row_sample(1000, 0.3, 7, 3))
    assert not np.array_equal(a, row_sample(1000, 0.3, 7, 4))
    assert not np.array_equal(a, row_sample(1000, 0.3, 8, 3))
    assert len(row_sample(10, 0.01, 0, 0)) == 1  # at least one row
    assert len(row_sample(5, 0.5, 0, 0)) == 3 and feature_sample(5, 0.5, 0, 0, 0).sum() == 3  # halves up
    np.testing.assert_array_equal(row_sample(10, 0.999, 0, 0), np.arange(10))
    # every row is drawn about as often (a fraction of 0.3 over 400 iterations: 120 +- 9.2)
    counts = np.bincount(np.concatenate([row_sample(50, 0.3, 1, i) for i in range(400)]), minlength=50)
    assert counts.min() > 80 and counts.max() < 160


def test_selection_sample_is_algorithm_s():
    """The compiled selection sampling takes the rows of the plain Algorithm S test, (rows left)
    x u < (rows still wanted), on random uniforms and on uniforms whose products with the rows
    left are whole numbers (where a floor could go wrong)."""
    from gpuboost.backends._numba_cpu import selection_sample

    def plain(u, m):
        n, out = len(u), []
        for i in range(n):
            if len(out) == m:
                break
            if (n - i) * u[i] < m - len(out):
                out.append(i)
        return out

    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 64, 1000):
        for m in sorted({1, max(1, n // 3), max(1, n // 2), n}):
            whole = (rng.integers(0, n + 1, size=n) / np.arange(n, 0, -1)).clip(0, np.nextafter(1, 0))
            exact = np.arange(n, 0, -1) * whole  # products that are whole numbers, where exact
            for u in (rng.random(n), whole, np.nextafter(whole, 0), np.zeros(n), np.full(n, np.nextafter(1, 0))):
                out = np.empty(m, dtype=np.int64)
                taken = selection_sample(u, 0, n, m, 0, out)
                for cut in (1, n // 3):  # in chunks: the same rows
                    parts = np.empty(m, dtype=np.int64)
                    done = selection_sample(u[:cut], 0, n, m, 0, parts)
                    assert selection_sample(u[cut:], cut, n, m, done, parts) == taken
                    assert np.array_equal(parts[:taken], out[:taken])
                expected = plain(u, m)
                assert taken == len(expected) and out[:taken].tolist() == expected, (n, m)
            if n >= 64:  # the crafted uniforms do make whole products
                assert np.count_nonzero(exact == np.floor(exact)) > n // 4


def test_root_rows_puts_the_sample_first():
    np.testing.assert_array_equal(root_rows(6, None, np.int64), np.arange(6))
    np.testing.assert_array_equal(root_rows(6, np.array([1, 4]), np.int64), [1, 4, 0, 2, 3, 5])
    for bad in (np.array([3, 1]), np.array([1, 1]), np.array([], np.int64), np.array([0, 6])):
        with pytest.raises(ValueError, match="row sample"):
            root_rows(6, bad, np.int64)


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("weighted", [False, True])
def test_a_tree_on_a_sample_is_the_tree_of_those_rows_alone(params, weighted):
    codes, y, w, F, n_bins = problem(1, weighted=weighted)
    sample = row_sample(len(y), 0.6, 3, 0)
    full = NumpyBackend(codes, y, w, 3, n_bins=n_bins, missing_code=255)
    full.set_scores(F)
    alone = NumpyBackend(codes[sample], y[sample], None if w is None else w[sample], 3, n_bins=n_bins,
                         missing_code=255)
    alone.set_scores(F[sample])
    a, seg_a, ids_a = TreeGrower(full, params, bins_as_thresholds, len(y)).grow(sample=sample)
    b, seg_b, ids_b = TreeGrower(alone, params, bins_as_thresholds, len(sample)).grow()
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_allclose(a.gain, b.gain, rtol=1e-12)
    np.testing.assert_array_equal(seg_a, seg_b)
    np.testing.assert_array_equal(full.rows[:len(sample)], sample[alone.rows])  # the same leaves' rows
    assert a.n_samples[0] == len(sample)


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_compiled_backend_grows_the_reference_tree_on_a_sample(params, seed):
    codes, y, w, F, n_bins = problem(seed, n=400, k=4, weighted=seed == 1)
    sample = row_sample(len(y), 0.5, seed, 5)
    ref = NumpyBackend(codes, y, w, 4, n_bins=n_bins, missing_code=255)
    fast = CpuBackend(codes, y, w, 4, n_bins=n_bins, missing_code=255)
    ref.set_scores(F)
    fast.set_scores(F)
    a, seg_a, ids_a = TreeGrower(ref, params, bins_as_thresholds, len(y)).grow(sample=sample)
    b, seg_b, ids_b = fast.grow_tree(params, bins_as_thresholds, sample=sample)
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_array_equal(seg_a, seg_b)
    np.testing.assert_array_equal(ids_a, ids_b)
    np.testing.assert_array_equal(ref.rows, fast.rows)
    # then every row into its leaf (tree.apply's): its grown rows as they were, then the others
    grown = [fast.rows[start:stop].copy() for start, stop in seg_b]
    spread_a, spread_b = ref.spread_leaves(a, seg_a, ids_a), fast.spread_leaves(b, seg_b, ids_b)
    np.testing.assert_array_equal(spread_a, spread_b)
    np.testing.assert_array_equal(ref.rows, fast.rows)
    leaf_of_row = b.apply(codes, 255)
    assert spread_b[0, 0] == 0 and spread_b[-1, 1] == len(y) and np.all(spread_b[1:, 0] == spread_b[:-1, 1])
    outside = np.setdiff1d(np.arange(len(y)), sample)
    for (start, stop), leaf, mine in zip(spread_b, ids_b, grown):
        rows = fast.rows[start:stop]
        assert np.all(leaf_of_row[rows] == leaf)
        np.testing.assert_array_equal(rows[:len(mine)], mine)
        np.testing.assert_array_equal(rows[len(mine):], outside[leaf_of_row[outside] == leaf])
    # and a full tree after it starts from every row again: the reference's full tree
    c, seg_c, _ = fast.grow_tree(params, bins_as_thresholds)
    d, seg_d, _ = TreeGrower(ref, params, bins_as_thresholds, len(y)).grow()
    assert c.n_samples[0] == d.n_samples[0] == len(y)
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(c, name), getattr(d, name), err_msg=name)
    np.testing.assert_allclose(c.value, d.value, rtol=1e-12)
    np.testing.assert_array_equal(seg_c, seg_d)


@pytest.mark.parametrize("algorithm, n", [("aoso", 500), ("mart", 500), ("abcmart", 500), ("robustlogit", 500),
                                          ("aoso", 9000), ("abcrobustlogit", 9000)])
def test_boosting_on_samples_is_the_same_on_both_backends(algorithm, n):
    # 9000 rows: the sampled root's class sums by halves and the large nodes' two-thread stages
    codes, y, w, _, n_bins = problem(4, n=n, k=4, weighted=n > 1000)
    results = []
    for cls in (NumpyBackend, CpuBackend):
        backend = cls(codes, y, w, 4, n_bins=n_bins, missing_code=255, n_threads=2)
        results.append(boost(backend, len(y), 4, 8, 0.3, 1e-16, GrowerParams(max_leaves=6), bins_as_thresholds, 255,
                             algorithm=algorithm, subsample=0.5, seed=11))
    ref, fast = results
    assert len(ref.trees) == len(fast.trees) > 0
    for a, b in zip(ref.trees, fast.trees):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert a.n_samples[0] == n // 2
    np.testing.assert_allclose(ref.train_loss, fast.train_loss, rtol=1e-10)


class DeviceLike(NumpyBackend):
    """The NumPy reference dressed as a device backend (CudaBackend's protocol): it keeps its own
    F, grows a tree and adds it to every row's F in one ``grow_tree(..., learning_rate=...)``
    call, and ``rescore`` returns that F's loss; boost then draws row samples ahead on threads."""

    fused_update = True
    keeps_scores = True
    n_threads = 4

    def set_scores(self, F):
        self.F_own = np.array(F, dtype=np.float64)
        self.loss = super().set_scores(self.F_own)
        return self.loss

    def rescore(self, F=None):
        return self.loss

    def grow_tree(self, params, bin_edge, learning_rate=None, sample=None):
        tree, segments, ids = TreeGrower(self, params, bin_edge, len(self.y)).grow(params, sample=sample)
        if sample is not None:
            segments = self.spread_leaves(tree, segments, ids)
        self.update_scores(self.F_own, segments, self.leaf_steps(tree, ids, learning_rate))
        self.loss = super().set_scores(self.F_own)
        return tree, segments, ids


def test_a_device_backend_boosts_on_the_rows_drawn_ahead():
    """boost()'s device path (the tree added to F in grow_tree, the rows of the next iterations
    drawn on other threads) builds the trees of the host path on the same samples."""
    codes, y, w, _, n_bins = problem(6, n=700, k=4, weighted=True)
    results = []
    for cls in (NumpyBackend, DeviceLike):
        backend = cls(codes, y, w, 4, n_bins=n_bins, missing_code=255)
        results.append(boost(backend, len(y), 4, 12, 0.3, 1e-16, GrowerParams(max_leaves=6), bins_as_thresholds, 255,
                             subsample=0.4, seed=3, colsample_bytree=0.6))
    host, device = results
    assert len(host.trees) == len(device.trees) == 12
    for a, b in zip(host.trees, device.trees):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert b.n_samples[0] == 280
    np.testing.assert_allclose(host.train_loss, device.train_loss, rtol=1e-12)


def data():
    X, y = make_classification(900, 8, n_informative=5, n_classes=3, random_state=0)
    return X[:600], y[:600], X[600:], y[600:]


def log_loss_sum(model, X, y):
    P = model.predict_proba(X)
    return -np.log(P[np.arange(len(y)), np.searchsorted(model.classes_, y)]).sum()


@pytest.mark.parametrize("algorithm", ["aoso", "mart", "abcrobustlogit", "logitboost"])
def test_every_row_moves_with_its_leaf(algorithm):
    """The training loss boosting reports is the loss of the model's own predictions: the rows
    outside each sample were updated by the leaves they fall in."""
    X, y, _, _ = data()
    model = BoostClassifier(algorithm=algorithm, n_estimators=12, subsample=0.4, random_state=3, device="cpu").fit(X, y)
    assert model.trees_[0].n_samples[0] == 240
    np.testing.assert_allclose(model.train_loss_[-1], log_loss_sum(model, X, y), rtol=1e-10)


def own_loss(model, X, target):
    """The training loss of the model's own scores on X, by the reference backend's link."""
    from gpuboost.sklearn import _link

    ml = model.multilabel_
    codes = model._bin_mapper.transform(X)
    backend = NumpyBackend(codes, np.argmax(target, axis=1) if ml else np.searchsorted(model.classes_, target), None,
                           len(model.classes_), n_bins=int(model._bin_mapper.n_bins_.max()),
                           missing_code=model._bin_mapper.missing_bin, link=_link(model.algorithm, ml),
                           labels=np.asarray(target, bool) if ml else None)
    return backend.set_scores(model.decision_function(X))


@pytest.mark.parametrize("algorithm, multilabel", [("klogitboost", False), ("klogitboost", True), ("aoso", True),
                                                   ("mart", True), ("adaboostmh", True)])
def test_vector_and_multilabel_models_move_every_row_with_its_leaf(algorithm, multilabel):
    X, y, _, _ = data()
    Y = np.stack([y == 0, y != 0, X[:, 0] > 0], axis=1).astype(int)  # every row has a label
    target = Y if multilabel else y
    subsample = 1.0 if algorithm == "adaboostmh" else 0.4
    model = BoostClassifier(algorithm=algorithm, n_estimators=8, subsample=subsample, colsample_bytree=0.6,
                            random_state=1, device="cpu").fit(X, target)
    assert model.trees_[0].n_samples[0] == round(subsample * 600)
    np.testing.assert_allclose(model.train_loss_[-1], own_loss(model, X, target), rtol=1e-10)


def test_the_model_depends_on_the_seed_not_on_threads():
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here")
    # 6000 rows, 5 classes: the sampled roots and large nodes take the kernels' two-thread paths
    X, y = make_classification(6600, 8, n_informative=6, n_classes=5, random_state=1)
    X, y, Xt = X[:6000], y[:6000], X[6000:]
    kw = dict(n_estimators=15, subsample=0.8, colsample_bytree=0.75, device="cpu")
    one = BoostClassifier(random_state=5, n_jobs=1, **kw).fit(X, y)
    two = BoostClassifier(random_state=5, n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(one.decision_function(Xt), two.decision_function(Xt))
    other = BoostClassifier(random_state=6, n_jobs=1, **kw).fit(X, y)
    assert not np.array_equal(one.decision_function(Xt), other.decision_function(Xt))
    # random_state None: a seed drawn from NumPy's global generator (a new one each fit)
    np.random.seed(0)
    a = BoostClassifier(**kw).fit(X, y).decision_function(Xt)
    np.random.seed(0)
    b = BoostClassifier(**kw).fit(X, y).decision_function(Xt)
    np.testing.assert_array_equal(a, b)
    # and the full sample is the papers' model, bit for bit
    full = BoostClassifier(n_estimators=15, subsample=1.0, colsample_bytree=1.0, random_state=5, device="cpu").fit(X, y)
    default = BoostClassifier(n_estimators=15, device="cpu").fit(X, y)
    np.testing.assert_array_equal(full.decision_function(Xt), default.decision_function(Xt))


def test_a_continuation_draws_the_rows_of_an_uninterrupted_fit(tmp_path):
    X, y, Xt, _ = data()
    kw = dict(subsample=0.6, random_state=9, device="cpu", algorithm="mart")
    whole = BoostClassifier(n_estimators=10, **kw).fit(X, y)
    part = BoostClassifier(n_estimators=4, warm_start=True, **kw).fit(X, y)
    part.set_params(n_estimators=10).fit(X, y)
    np.testing.assert_array_equal(whole.decision_function(Xt), part.decision_function(Xt))
    # a saved model keeps the parameter, and continues the same way
    first = BoostClassifier(n_estimators=4, **kw).fit(X, y)
    first.save_model(tmp_path / "m.json")
    loaded = BoostClassifier().load_model(tmp_path / "m.json")
    assert loaded.subsample == 0.6
    resumed = BoostClassifier(n_estimators=10, **kw).fit(X, y, init_model=loaded)
    np.testing.assert_array_equal(whole.decision_function(Xt), resumed.decision_function(Xt))


def test_an_old_pickle_gets_the_default():
    model = BoostClassifier(n_estimators=2)
    state = model.__getstate__()
    del state["subsample"], state["colsample_bytree"]
    old = pickle.loads(pickle.dumps(model))
    old.__setstate__(state)
    assert (old.subsample, old.colsample_bytree) == (1.0, 1.0)


def test_boost_refuses_what_it_cannot_sample():
    codes, y, w, _, n_bins = problem(0, n=50)
    backend = NumpyBackend(codes, y, w, 3, n_bins=n_bins, missing_code=255, link="exp")
    with pytest.raises(ValueError, match="not for adaboostmh"):
        boost(backend, 50, 3, 2, 0.3, 1e-16, GrowerParams(), bins_as_thresholds, 255, algorithm="adaboostmh",
              subsample=0.5)

    class DeviceResident(NumpyBackend):
        keeps_scores = True

    backend = DeviceResident(codes, y, w, 3, n_bins=n_bins, missing_code=255)
    with pytest.raises(ValueError, match="subsample < 1 does not run on the numpy backend"):
        boost(backend, 50, 3, 2, 0.3, 1e-16, GrowerParams(), bins_as_thresholds, 255, subsample=0.5)


def test_what_subsample_refuses():
    X, y, _, _ = data()
    for bad in (0.0, -0.5, 1.5, float("nan"), "half", True):
        with pytest.raises(ValueError, match=r"subsample must be a number in \(0, 1\]"):
            BoostClassifier(subsample=bad, n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="not for adaboostmh"):
        BoostClassifier(algorithm="adaboostmh", subsample=0.5, n_estimators=2).fit(X, y)


def test_subsample_still_learns():
    """A half sample per iteration: the held-out error stays near the full sample's."""
    X, y, Xt, yt = data()
    errors = {}
    for ss in (1.0, 0.5):
        model = BoostClassifier(n_estimators=60, subsample=ss, random_state=0, device="cpu").fit(X, y)
        errors[ss] = np.mean(model.predict(Xt) != yt)
    assert errors[0.5] <= errors[1.0] + 0.05, errors


# -- colsample_bytree ----------------------------------------------------------------------

def test_rows_drawn_ahead_are_the_rows_of_each_iteration():
    """A device backend's draws on other threads (boosting._RowSamples): each iteration gets
    row_sample's rows, in order, out of order and after a gap, with the next ones in flight."""
    from gpuboost.boosting import _RowSamples

    for k in (1, 3):
        ahead = _RowSamples(1000, 0.3, 7, ahead=k)
        assert ahead.pool is not None
        for iteration in (0, 1, 2, 5, 6, 3, 3, 20):
            np.testing.assert_array_equal(ahead(iteration), row_sample(1000, 0.3, 7, iteration))
            assert sorted(ahead.pending) == list(range(iteration + 1, iteration + 1 + k))
        ahead.close()
    last = _RowSamples(1000, 0.3, 7, ahead=3, stop=5)
    np.testing.assert_array_equal(last(3), row_sample(1000, 0.3, 7, 3))
    assert sorted(last.pending) == [4]  # nothing past the last iteration
    np.testing.assert_array_equal(last(4), row_sample(1000, 0.3, 7, 4))
    assert not last.pending
    last.close()
    dropped = _RowSamples(1000, 0.3, 7, ahead=3)  # never closed (a fit that raised): gone with it
    dropped(0)
    pool = dropped.pool
    del dropped
    import gc

    gc.collect()
    with pytest.raises(RuntimeError, match="shutdown"):
        pool.submit(row_sample, 1000, 0.3, 7, 9)
    assert _RowSamples(1000, 1.0, 7, ahead=2).pool is None  # nothing to draw
    assert _RowSamples(1000, 1.0, 7, ahead=2)(4) is None
    assert _RowSamples(1000, 0.3, 7, ahead=0).pool is None


def test_feature_sample_draws_by_seed_iteration_and_tree():
    assert feature_sample(10, 1.0, 0, 0, 0) is None
    a = feature_sample(10, 0.3, 4, 2, 1)
    assert a.dtype == np.bool_ and a.shape == (10,) and a.sum() == 3
    np.testing.assert_array_equal(a, feature_sample(10, 0.3, 4, 2, 1))
    draws = [feature_sample(10, 0.3, 4, i, t) for i in range(20) for t in range(3)]
    assert len({m.tobytes() for m in draws}) > 30  # each tree its own draw
    assert feature_sample(3, 0.01, 0, 0, 0).sum() == 1  # at least one feature
    # not the rows' stream: the same seed and iteration draw other rows than features
    assert not np.array_equal(np.flatnonzero(feature_sample(1000, 0.3, 7, 3, 0)), row_sample(1000, 0.3, 7, 3))


@pytest.mark.parametrize("seed", range(12))
def test_the_masked_split_search_is_the_search_over_those_features(seed):
    rng = np.random.default_rng(seed)
    d, n_codes = 5, 7
    counts = rng.integers(0, 4, size=(1, n_codes)).astype(float)
    hist = np.empty((3, d, n_codes, 3))
    for node in range(3):  # every feature holds the node's rows
        for f in range(d):
            c = rng.permutation(counts[0]) if f else counts[0]
            hist[node, f] = np.stack([np.where(c > 0, rng.normal(size=n_codes), 0.0),
                                      np.where(c > 0, rng.uniform(0.1, 1.0, size=n_codes), 0.0), c], axis=1)
    sums = hist[:, 0].sum(axis=1)
    mask = rng.random(d) < 0.5
    mask[rng.integers(d)] = True
    got = best_splits(hist, sums, 1, features=mask)
    alone = best_splits(hist[:, mask], sums, 1)  # the same search over those features only
    np.testing.assert_array_equal(got.gain, alone.gain)
    found = np.isfinite(got.gain)
    np.testing.assert_array_equal(got.feature[found], np.flatnonzero(mask)[alone.feature[found]])
    np.testing.assert_array_equal(got.bin[found], alone.bin[found])
    np.testing.assert_array_equal(got.missing_left[found], alone.missing_left[found])
    np.testing.assert_array_equal(got.sums, sums)


@pytest.mark.parametrize("params", PARAMS)
def test_the_compiled_backend_grows_the_reference_tree_on_a_feature_sample(params):
    codes, y, w, F, n_bins = problem(5, n=400, d=6, k=4, weighted=True)
    ref = NumpyBackend(codes, y, w, 4, n_bins=n_bins, missing_code=255)
    fast = CpuBackend(codes, y, w, 4, n_bins=n_bins, missing_code=255)
    ref.set_scores(F)
    fast.set_scores(F)
    for features in (np.array([0, 1, 1, 0, 0, 1], bool), np.array([0, 0, 0, 0, 1, 0], bool)):
        p = replace(params, features=features)
        a, seg_a, _ = TreeGrower(ref, p, bins_as_thresholds, len(y)).grow()
        b, seg_b, _ = fast.grow_tree(p, bins_as_thresholds)
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
        np.testing.assert_array_equal(seg_a, seg_b)
        split = a.feature[a.feature >= 0]
        assert len(split) > 0 and np.all(features[split])
        # the tree of the data that has only those features
        kept = np.flatnonzero(features)
        alone = NumpyBackend(codes[:, kept], y, w, 4, n_bins=n_bins, missing_code=255)
        alone.set_scores(F)
        c, seg_c, _ = TreeGrower(alone, params, bins_as_thresholds, len(y)).grow()
        np.testing.assert_array_equal(a.feature[a.feature >= 0], kept[c.feature[c.feature >= 0]])
        for name in ("bin", "left", "right", "pair", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(c, name), err_msg=name)
        np.testing.assert_allclose(a.value, c.value, rtol=1e-12)


@pytest.mark.parametrize("algorithm", ["aoso", "mart", "abcmart", "klogitboost", "adaboostmh"])
def test_each_tree_splits_on_its_own_draw_of_features(algorithm):
    X, y, Xt, yt = data()
    model = BoostClassifier(algorithm=algorithm, n_estimators=6, colsample_bytree=0.5, random_state=2,
                            device="cpu", max_leaves=6).fit(X, y)
    per_iteration = len(model.trees_) // len(model.train_loss_)
    for j, tree in enumerate(model.trees_):
        allowed = feature_sample(X.shape[1], 0.5, 2, j // per_iteration, j % per_iteration)
        assert np.all(allowed[tree.feature[tree.feature >= 0]]), j
    used = {int(f) for tree in model.trees_ for f in tree.feature[tree.feature >= 0]}
    assert len(used) > 4  # the draws differ between trees
    if algorithm not in ("klogitboost", "adaboostmh"):  # (their losses are not the log loss)
        np.testing.assert_allclose(model.train_loss_[-1], log_loss_sum(model, X, y), rtol=1e-10)
    # and every feature gives other trees
    full = BoostClassifier(algorithm=algorithm, n_estimators=6, colsample_bytree=1.0, device="cpu",
                           max_leaves=6).fit(X, y)
    assert any(not np.array_equal(a.feature, b.feature) for a, b in zip(model.trees_, full.trees_))


@pytest.mark.parametrize("algorithm", ["aoso", "mart"])
def test_feature_samples_are_the_same_on_both_backends(algorithm):
    codes, y, w, _, n_bins = problem(6, n=500, d=6, k=4)
    results = []
    for cls in (NumpyBackend, CpuBackend):
        backend = cls(codes, y, w, 4, n_bins=n_bins, missing_code=255)
        results.append(boost(backend, len(y), 4, 6, 0.3, 1e-16, GrowerParams(max_leaves=6), bins_as_thresholds, 255,
                             algorithm=algorithm, subsample=0.7, seed=3, colsample_bytree=0.5))
    assert len(results[0].trees) == len(results[1].trees) > 0
    for a, b in zip(results[0].trees, results[1].trees):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(results[0].train_loss, results[1].train_loss, rtol=1e-10)


@pytest.mark.parametrize("algorithm, n", [("aoso", 600), ("aoso", 9000), ("abcmart", 9000)])
def test_feature_samples_with_sparse_features_and_threads(algorithm, n):
    # feature samples with sparse features beside, on two threads (9000 rows: the large nodes'
    # parallel histograms), feature 0 (whose bins give a node's totals) left out in some trees:
    # the compiled backend's trees are the reference's
    rng = np.random.default_rng(8)
    codes, y, w, _, n_bins = problem(8, n=n, d=7, k=4, weighted=True)
    codes[:, 4:] = np.where(rng.random((n, 3)) < 0.8, 0, codes[:, 4:])  # three sparse features
    results = []
    for cls in (NumpyBackend, CpuBackend):
        backend = cls(codes, y, w, 4, n_bins=n_bins, missing_code=255, n_threads=2)
        results.append(boost(backend, len(y), 4, 6, 0.3, 1e-16, GrowerParams(max_leaves=8), bins_as_thresholds, 255,
                             algorithm=algorithm, seed=5, colsample_bytree=0.5))
    assert len(backend.sparse) == 3
    assert any(not feature_sample(7, 0.5, 5, t, 0)[0] for t in range(6))
    assert len(results[0].trees) == len(results[1].trees) > 0
    for a, b in zip(results[0].trees, results[1].trees):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(results[0].train_loss, results[1].train_loss, rtol=1e-10)


def test_colsample_is_repeatable_and_continues():
    X, y, Xt, _ = data()
    kw = dict(colsample_bytree=0.4, subsample=0.8, random_state=4, device="cpu")
    one = BoostClassifier(n_estimators=8, n_jobs=1, **kw).fit(X, y)
    two = BoostClassifier(n_estimators=8, n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(one.decision_function(Xt), two.decision_function(Xt))
    part = BoostClassifier(n_estimators=3, warm_start=True, **kw).fit(X, y)
    part.set_params(n_estimators=8).fit(X, y)
    np.testing.assert_array_equal(one.decision_function(Xt), part.decision_function(Xt))


def test_what_colsample_refuses():
    X, y, _, _ = data()
    for bad in (0.0, 2.0, float("nan"), None):
        with pytest.raises(ValueError, match=r"colsample_bytree must be a number in \(0, 1\]"):
            BoostClassifier(colsample_bytree=bad, n_estimators=2).fit(X, y)
