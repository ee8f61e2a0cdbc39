"""The NumPy backend's stages against naive loops and brute force."""

import numpy as np
import pytest

from gpuboost import losses
from gpuboost.backends.base import COUNT, GRAD, HESS, hist_halves_rows
from gpuboost.backends.numpy import NumpyBackend, best_splits, build_histogram, halved_histogram


def naive_histogram(codes, values, n_codes):
    n_rows, n_features = codes.shape
    hist = np.zeros((n_features, n_codes, values.shape[1] + 1))
    for i in range(n_rows):
        for f in range(n_features):
            hist[f, codes[i, f], :-1] += values[i]
            hist[f, codes[i, f], -1] += 1
    return hist


def make_backend(seed=0, n=60, d=3, k=4, n_bins=5, missing_fraction=0.15, weighted=False):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes[rng.random((n, d)) < missing_fraction] = 255
    y = rng.integers(0, k, size=n)
    weight = rng.uniform(0.2, 3.0, size=n) if weighted else None
    backend = NumpyBackend(codes, y, weight, k, n_bins=n_bins, missing_code=255)
    F = rng.normal(size=(n, k))
    backend.set_scores(F)
    return backend, codes, y, weight, F


def test_histogram_against_naive_loop():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 7, size=(50, 4)).astype(np.uint8)
    values = rng.normal(size=(50, 2))
    np.testing.assert_allclose(build_histogram(codes, values, 7), naive_histogram(codes, values, 7), rtol=1e-12)


def test_large_nodes_histograms_are_their_halves_sums():
    # hist_halves_rows(n_codes) rows or more: the sum of the two halves' histograms (the
    # compiled backend's two threads); fewer: one pass. Either way the naive sums, to rounding
    rng = np.random.default_rng(1)
    assert hist_halves_rows(9) == 360 and hist_halves_rows(3) == 256 and hist_halves_rows(256) == 10240
    halves_rows = hist_halves_rows(9)
    for n in (halves_rows - 1, halves_rows, halves_rows + 7):
        codes = rng.integers(0, 9, size=(n, 3)).astype(np.uint8)
        values = rng.normal(size=(n, 2))
        mid = n // 2
        halves = build_histogram(codes[:mid], values[:mid], 9) + build_histogram(codes[mid:], values[mid:], 9)
        expected = halves if n >= halves_rows else build_histogram(codes, values, 9)
        np.testing.assert_array_equal(halved_histogram(codes, values, 9), expected)
        np.testing.assert_allclose(halved_histogram(codes, values, 9), naive_histogram(codes, values, 9), rtol=1e-10,
                                   atol=1e-10)



def test_sparse_features_are_those_with_a_default_code_in_half_the_rows(monkeypatch):
    from gpuboost.backends import base

    codes = np.array([[0, 1, 2, 3, 4, 0],
                      [0, 1, 2, 3, 5, 0],
                      [1, 0, 3, 3, 4, 1],
                      [2, 0, 3, 4, 5, 1]], dtype=np.uint8)
    codes[:, 5] = [5, 5, 0, 1]  # the missing code (5) as a default
    found = base.sparse_features(codes, 6)
    assert found.dtype == np.int64
    # 0: code 0 in 2 of 4 rows (half: sparse); 1: 0 and 1 tie, the lower wins; 2: 2 and 3 tie;
    # 3: code 3 in 3 rows; 4: 4 and 5 tie; 5: the missing code in half the rows
    assert [tuple(f) for f in found] == [(0, 0), (1, 0), (2, 2), (3, 3), (4, 4), (5, 5)]
    assert [tuple(f) for f in base.sparse_features(codes[:3], 6)] == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4),
                                                                    (5, 5)]
    assert base.sparse_features(np.arange(12, dtype=np.uint8).reshape(4, 3), 12).shape == (0, 2)  # no default
    assert base.sparse_features(codes[:0], 6).shape == (0, 2)
    # beyond SPARSE_MAX_BYTES of other codes (8 bytes each and a row), none: every feature dense
    other_codes = 2 + 2 + 2 + 1 + 2 + 2
    monkeypatch.setattr(base, "SPARSE_MAX_BYTES", (other_codes + 4 + 1) * 8)
    assert len(base.sparse_features(codes, 6)) == 6
    monkeypatch.setattr(base, "SPARSE_MAX_BYTES", (other_codes + 4 + 1) * 8 - 1)
    assert base.sparse_features(codes, 6).shape == (0, 2)


def test_folded_default_bins_are_the_totals_minus_the_other_bins():
    # fold_default_bins against its definition written out: for each sparse feature, the default
    # bin is ((totals - bin 0) - bin 1) - ..., skipping the default, in every channel; 0 where the
    # default code has no row; the other bins and features as build_histogram sums them
    from gpuboost.backends.numpy import fold_default_bins

    rng = np.random.default_rng(4)
    n = 300
    codes = rng.integers(0, 5, size=(n, 4)).astype(np.uint8)
    codes[:, 1] = np.where(rng.random(n) < 0.7, 2, codes[:, 1])
    codes[:, 2] = np.where(rng.random(n) < 0.7, 4, rng.integers(0, 2, size=n))
    codes[:, 3] = rng.integers(0, 2, size=n)
    values = rng.normal(size=(n, 2))
    sparse = np.array([[1, 2], [2, 4], [3, 2]])  # [3, 2]: a default code that no row has
    dense = build_histogram(codes, values, 5)
    folded = fold_default_bins(dense.copy(), values, sparse)
    expected = dense.copy()
    for f, d in sparse:
        acc = [0.0 + np.cumsum(values[:, 0])[-1], 0.0 + np.cumsum(values[:, 1])[-1], float(n)]  # row order
        for c in range(5):
            if c != d:
                acc = [acc[q] - dense[f, c, q] for q in range(3)]
        expected[f, d] = acc if acc[2] != 0.0 else 0.0
    np.testing.assert_array_equal(folded, expected)
    np.testing.assert_allclose(folded, dense, rtol=1e-12, atol=1e-12)  # the direct sums, to rounding
    np.testing.assert_array_equal(folded[3, 2], 0.0)
    # the halves' histograms are folded each with its own totals
    values_h = rng.normal(size=(1000, 2))
    codes_h = (rng.random((1000, 2)) < 0.2).astype(np.uint8)
    one = np.array([[0, 0], [1, 0]])
    mid = 500
    halves = (fold_default_bins(build_histogram(codes_h[:mid], values_h[:mid], 3), values_h[:mid], one)
              + fold_default_bins(build_histogram(codes_h[mid:], values_h[mid:], 3), values_h[mid:], one))
    assert 1000 >= hist_halves_rows(3)
    np.testing.assert_array_equal(halved_histogram(codes_h, values_h, 3, one), halves)


def test_missing_code_is_the_last_histogram_column():
    backend, codes, *_ = make_backend()
    assert backend.codes.max() == 5  # n_bins: 255 was remapped
    np.testing.assert_array_equal(backend.codes == 5, codes == 255)


@pytest.mark.parametrize("weighted", [False, True])
def test_histograms_use_the_node_pair_and_weights(weighted):
    backend, codes, y, weight, F = make_backend(weighted=weighted)
    segment = np.array([[5, 45]])
    rows = backend.rows[5:45]
    pair = backend.select_pairs(segment, "eq33")
    p, pc = losses.softmax(F[rows])
    g, h = losses.pair_statistics(p, pc, y[rows], *pair[0])
    if weighted:
        g, h = g * weight[rows], h * weight[rows]
    hist = backend.histograms(segment, pair)[0]
    np.testing.assert_allclose(hist, naive_histogram(backend.codes[rows], np.stack([g, h], 1), 6), rtol=1e-12)
    sums = backend.node_sums(segment, pair)[0]
    np.testing.assert_allclose(sums, [g.sum(), h.sum(), 40], rtol=1e-12)
    # every feature's bins hold the node's rows once
    np.testing.assert_allclose(hist.sum(axis=1), np.tile(sums, (3, 1)), rtol=1e-12)


def brute_force_split(codes, g, h, n_bins, missing_code, min_samples_leaf):
    """Every (feature, threshold, missing direction) by explicit partition of the rows."""
    G, H = g.sum(), h.sum()
    best = (-np.inf, None)
    is_missing = codes == missing_code
    for f in range(codes.shape[1]):
        for b in range(n_bins):
            for missing_left in (False, True):
                if missing_left and not is_missing.any():
                    continue
                left = np.where(is_missing[:, f], missing_left, codes[:, f] <= b)
                if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                    continue
                gain = losses.split_gain(g[left].sum(), h[left].sum(), g[~left].sum(), h[~left].sum(), G, H)
                if gain > best[0] + 1e-12:  # strictly better: the first candidate wins ties
                    best = (gain, (f, b, missing_left))
    return best


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("min_samples_leaf", [1, 7])
def test_best_split_against_brute_force(seed, min_samples_leaf):
    backend, codes, y, weight, F = make_backend(seed=seed, weighted=seed % 2 == 1)
    segment = np.array([[0, 60]])
    pair = backend.select_pairs(segment, "eq33")
    found = backend.find_splits(backend.histograms(segment, pair), min_samples_leaf)
    p, pc = losses.softmax(F)
    g, h = losses.pair_statistics(p, pc, y, *pair[0])
    if weight is not None:
        g, h = g * weight, h * weight
    gain, (f, b, missing_left) = brute_force_split(backend.codes, g, h, 5, 5, min_samples_leaf)
    np.testing.assert_allclose(found.gain[0], gain, rtol=1e-10)
    assert (found.feature[0], found.bin[0], bool(found.missing_left[0])) == (f, b, missing_left)


def test_split_sides_add_up_to_the_parent():
    backend, *_ = make_backend(seed=4)
    segment = np.array([[0, 60]])
    pair = backend.select_pairs(segment, "eq33")
    parent = backend.node_sums(segment, pair)[0]
    found = backend.find_splits(backend.histograms(segment, pair), 1)
    n_left = backend.partition((0, 60), int(found.feature[0]), int(found.bin[0]), bool(found.missing_left[0]))
    children = backend.node_sums(np.array([[0, n_left], [n_left, 60]]), np.repeat(pair, 2, axis=0))
    np.testing.assert_allclose(children.sum(axis=0), parent, rtol=1e-12)
    assert 0 < n_left < 60


def test_no_missing_rows_send_missing_to_the_larger_child():
    # feature 0: 4 rows in bin 0, 8 rows in bin 1, and the label follows the bin
    codes = np.array([[0]] * 4 + [[1]] * 8, dtype=np.uint8)
    y = np.array([0] * 4 + [1] * 8)
    backend = NumpyBackend(codes, y, None, 2, n_bins=2, missing_code=255)
    backend.set_scores(np.zeros((12, 2)))
    pair = backend.select_pairs(np.array([[0, 12]]), "eq33")
    found = backend.find_splits(backend.histograms(np.array([[0, 12]]), pair), 1)
    assert found.bin[0] == 0 and not found.missing_left[0]


def test_partition_is_stable_and_routes_missing_values():
    backend, codes, *_ = make_backend(seed=2)
    n_left = backend.partition((10, 50), feature=1, bin=2, missing_left=True)
    rows = backend.rows[10:50]
    left, right = rows[:n_left], rows[n_left:]
    c = backend.codes[:, 1]
    assert np.all((c[left] <= 2) | (c[left] == 5)) and np.all((c[right] > 2) & (c[right] != 5))
    assert np.all(np.diff(left) > 0) and np.all(np.diff(right) > 0)  # stable: row order kept
    np.testing.assert_array_equal(backend.rows[:10], np.arange(10))


def test_update_scores_adds_to_the_rows_of_each_segment():
    backend, *_ = make_backend()
    backend.partition((0, 60), 0, 1, False)
    F = np.zeros((60, 4))
    deltas = np.array([[1.0, -1.0, 0, 0], [0, 0, 2.0, -2.0]])
    backend.update_scores(F, np.array([[0, 20], [20, 60]]), deltas)
    np.testing.assert_array_equal(F[backend.rows[:20]], np.tile(deltas[0], (20, 1)))
    np.testing.assert_array_equal(F[backend.rows[20:]], np.tile(deltas[1], (40, 1)))


def test_best_splits_reports_no_split_when_too_small():
    hists = np.zeros((1, 1, 3, 3))
    hists[0, 0, 0] = [1.0, 1.0, 1]
    hists[0, 0, 1] = [-1.0, 1.0, 1]
    sums = hists[:, 0].sum(axis=1)
    assert best_splits(hists, sums, min_samples_leaf=1).gain[0] == pytest.approx(1.0)
    assert best_splits(hists, sums, min_samples_leaf=2).gain[0] == -np.inf
    assert (GRAD, HESS, COUNT) == (0, 1, 2)


@pytest.mark.parametrize("reference", ["numpy", "numba"])
def test_missing_left_is_tried_for_a_feature_whose_neighbour_has_no_missing_values(reference, monkeypatch):
    # feature 0 has no missing values, feature 1 has: the best split sends feature 1's missing
    # values left with its low values. (A bug once decided "has missing values" by feature 0.)
    from gpuboost import BoostClassifier

    monkeypatch.setenv("GPUBOOST_CPU_BACKEND", reference)
    rng = np.random.default_rng(0)
    n = 300
    x1 = rng.uniform(size=n)
    y = (x1 > 0.5).astype(int)
    x1[rng.uniform(size=n) < 0.2] = np.nan
    y[np.isnan(x1)] = 0
    X = np.column_stack([rng.uniform(size=n), x1])
    model = BoostClassifier(n_estimators=1, max_leaves=2, device="cpu").fit(X, y)
    tree = model.trees_[0]
    assert tree.feature[0] == 1 and tree.missing_left[0]
    assert model.score(X, y) == 1.0
