"""Binning: exact bins for few distinct values, quantiles otherwise, NaN and inf."""

import numpy as np
import pytest

from gpuboost.binning import BinMapper


def test_one_bin_per_distinct_value():
    X = np.array([[3.0], [1.0], [2.0], [3.0], [1.0]])
    mapper = BinMapper(255).fit(X)
    np.testing.assert_array_equal(mapper.edges_[0], [1.5, 2.5])
    np.testing.assert_array_equal(mapper.transform(X)[:, 0], [2, 0, 1, 2, 0])
    assert mapper.transform(X).dtype == np.uint8


def test_quantile_bins_are_balanced():
    X = np.random.default_rng(0).normal(size=(10000, 1))
    mapper = BinMapper(16).fit(X)
    counts = np.bincount(mapper.transform(X)[:, 0], minlength=16)
    assert mapper.n_bins_[0] == 16
    assert counts.min() >= 600 and counts.max() <= 650


def test_nan_is_the_missing_bin_and_inf_is_an_extreme_value():
    X = np.array([[np.nan], [-np.inf], [0.0], [1.0], [np.inf]])
    mapper = BinMapper(10).fit(X)
    codes = mapper.transform(X)[:, 0]
    assert codes[0] == mapper.missing_bin == 10
    np.testing.assert_array_equal(codes[1:], [0, 1, 2, 3])
    assert all(np.isfinite(e).all() for e in mapper.edges_)  # model files hold no infinity
    # unseen values between two training values fall on the side of the midpoint; next to
    # -inf the edge is the float just below the smallest finite value
    assert mapper.transform(np.array([[0.4], [0.6], [-1e300], [-0.0]]))[:, 0].tolist() == [1, 2, 0, 1]


def test_adjacent_floats_get_their_own_bins():
    a = 1.0
    b = np.nextafter(a, 2.0)
    mapper = BinMapper(10).fit(np.array([[a], [b]]))
    assert mapper.transform(np.array([[a], [b]]))[:, 0].tolist() == [0, 1]


def test_weight_two_bins_as_a_duplicated_row():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 2))
    w = np.ones(500)
    w[:100] = 2.0
    weighted = BinMapper(20).fit(X, w)
    duplicated = BinMapper(20).fit(np.vstack([X, X[:100]]))
    for a, b in zip(weighted.edges_, duplicated.edges_):
        np.testing.assert_array_equal(a, b)


def test_uint16_codes_above_255_bins():
    X = np.arange(1000, dtype=float)[:, None]
    mapper = BinMapper(1000).fit(X)
    codes = mapper.transform(X)
    assert codes.dtype == np.uint16 and codes.max() == 999


def test_constant_feature_has_one_bin():
    mapper = BinMapper(255).fit(np.ones((5, 1)))
    assert mapper.n_bins_[0] == 1 and mapper.transform(np.ones((2, 1))).max() == 0


@pytest.mark.parametrize("bad", [1, 0, 65536])
def test_max_bins_range(bad):
    with pytest.raises(ValueError, match="max_bins"):
        BinMapper(bad)


def test_round_trip_through_dict():
    X = np.random.default_rng(0).normal(size=(100, 3))
    mapper = BinMapper(8).fit(X)
    again = BinMapper.from_dict(mapper.to_dict())
    np.testing.assert_array_equal(mapper.transform(X), again.transform(X))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("max_bins", [2, 7, 255])
def test_sorted_edges_match_the_unique_based_edges(weighted, max_bins):
    """The GPU's binning algorithm (sort, run ends, cumulative counts), run here with NumPy,
    gives the host's edges: bit for bit without weights, to rounding with them."""
    from gpuboost.binning import _feature_edges, _sorted_feature_edges

    rng = np.random.default_rng(max_bins)
    for trial in range(20):
        n = int(rng.integers(1, 3000))
        kind = trial % 4
        if kind == 0:
            column = rng.normal(size=n)
        elif kind == 1:
            column = rng.integers(0, 40, size=n).astype(np.float64)  # many ties, few distinct values
        elif kind == 2:
            column = np.round(rng.exponential(size=n), 2)
            column[rng.uniform(size=n) < 0.2] = np.nan
        else:
            column = np.full(n, 3.0)
            column[: n // 3] = np.inf
            column[n // 3: n // 2] = -np.inf
        weight = rng.uniform(0.1, 5.0, size=n) if weighted else np.ones(n)
        expected = _feature_edges(column, weight, max_bins)
        got = _sorted_feature_edges(np, column, weight if weighted else None, max_bins)
        if weighted:
            assert got.shape == expected.shape and np.allclose(got, expected, rtol=1e-12, atol=0), (trial, kind)
        else:
            assert np.array_equal(got, expected), (trial, kind)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("max_bins", [2, 7, 255])
def test_fit_keeps_the_unique_based_edges_on_any_thread_count(max_bins, n_threads):
    """BinMapper.fit sorts unweighted columns (the faster path) and bins features on threads:
    its edges are still _feature_edges's bit for bit, signed zeros and weights included, and
    the codes do not depend on the thread count."""
    from gpuboost.binning import _feature_edges

    rng = np.random.default_rng(max_bins + 10 * n_threads)
    n = 12_000  # above THREADED_ROWS
    columns = [
        rng.normal(size=n),
        rng.integers(0, 40, size=n).astype(np.float64),
        np.where(rng.uniform(size=n) < 0.2, np.nan, np.round(rng.exponential(size=n), 2)),
        np.where(rng.uniform(size=n) < 0.3, 1.5, np.where(rng.uniform(size=n) < 0.5, -0.0, 0.0)),
        np.concatenate([np.full(n // 3, -0.0), np.full(n // 3, 0.0), rng.normal(size=n - 2 * (n // 3))]),
        np.where(rng.uniform(size=n) < 0.1, np.inf, np.where(rng.uniform(size=n) < 0.1, -np.inf, rng.normal(size=n))),
        np.full(n, np.nan),
        np.full(n, 2.0),
    ]
    X = np.stack(columns, axis=1)
    weight = rng.uniform(0.1, 5.0, size=n)
    for w in (None, weight):
        mapper = BinMapper(max_bins).fit(X, w, n_threads=n_threads)
        reference = np.ones(n) if w is None else w
        for f in range(X.shape[1]):
            expected = _feature_edges(X[:, f], reference, max_bins)
            assert mapper.edges_[f].tobytes() == expected.tobytes(), (f, w is None)
        one_thread = BinMapper(max_bins).fit(X, w).transform(X)
        assert np.array_equal(mapper.transform(X, n_threads=n_threads), one_thread)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_features_binned_in_blocks_are_the_columns_binned_one_by_one(monkeypatch, order, n_threads):
    """fit copies a block of columns to contiguous rows first (BLOCK_BYTES; here a block of 3
    features, the last one shorter): the edges and codes are those of each column binned on its
    own, bit for bit, for row- and column-major X, with and without weights."""
    from gpuboost import binning
    from gpuboost.binning import _host_feature_edges

    rng = np.random.default_rng(5)
    n = 12_000  # above THREADED_ROWS
    X = rng.normal(size=(n, 8))
    X[:, 1] = rng.integers(0, 9, size=n)
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    X[:, 5] = np.where(rng.uniform(size=n) < 0.5, -0.0, 0.0)
    X = np.asarray(X, order=order)
    monkeypatch.setattr(binning, "BLOCK_BYTES", 3 * 8 * n)
    assert binning._feature_blocks(n, 8) == [(0, 3), (3, 6), (6, 8)]
    for w in (None, rng.uniform(0.5, 2.0, size=n)):
        mapper = BinMapper(40).fit(X, w, n_threads=n_threads)
        codes = mapper.transform(X, n_threads=n_threads)
        assert codes.flags.c_contiguous and codes.dtype == np.uint8
        for f in range(8):
            column = np.array(X[:, f])
            edges = _host_feature_edges(column, w, 40)
            assert mapper.edges_[f].tobytes() == edges.tobytes(), f
            expected = np.where(np.isnan(column), 40, np.searchsorted(edges, column, side="left"))
            np.testing.assert_array_equal(codes[:, f], expected)


@pytest.mark.parametrize("max_bins", [2, 3, 9, 255, 1000])
def test_compiled_search_is_numpys_searchsorted(monkeypatch, max_bins):
    """transform's compiled search (eight rows in lockstep, tiles of rows and features, rows
    shared among threads) gives numpy.searchsorted(edges, x, side="left") for every value, NaN
    the missing code: values on the edges and next to them, signed zeros, infinities, huge
    values, float32 and float64, C, F and strided X, features with 0, 1 and many edges, row
    counts that are not multiples of eight or of a tile, and threads."""
    from gpuboost import _numba_binning, binning

    rng = np.random.default_rng(max_bins)
    n_fit = 3000
    fit_columns = [
        rng.normal(size=n_fit),
        rng.integers(0, 3, size=n_fit).astype(np.float64),
        np.full(n_fit, 4.0),  # no edges
        np.where(rng.uniform(size=n_fit) < 0.5, 1.0, 2.0),  # one edge
        rng.exponential(size=n_fit) * 1e300,
        np.where(rng.uniform(size=n_fit) < 0.3, np.nan, rng.normal(size=n_fit)),
    ] + [rng.normal(size=n_fit) * 10 ** k for k in range(-3, 30)]  # more than a tile of features
    mapper = BinMapper(max_bins).fit(np.stack(fit_columns, axis=1))
    n_features = len(fit_columns)

    def probe(n):  # every feature's edges, the floats next to them, and values of every kind
        columns = []
        for e in mapper.edges_:
            near = np.concatenate([e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf)])
            special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 5e-324, 1.0, 2.0, 1.5]
            pool = np.concatenate([near, special, rng.normal(size=n) * rng.choice([1e-3, 1, 1e3, 1e300], size=n)])
            columns.append(rng.choice(pool, size=n))
        return np.stack(columns, axis=1)

    def expected(X):
        X = np.asarray(X, dtype=np.float64)
        return np.stack([np.where(np.isnan(X[:, f]), max_bins, np.searchsorted(mapper.edges_[f], X[:, f], side="left"))
                         for f in range(n_features)], axis=1)

    assert _numba_binning.TILE_FEATURES < n_features
    monkeypatch.setattr(binning, "THREADED_ROWS", 40)  # threads for the small X here too
    for n in (0, 1, 7, 8, 9, 263, 700):
        X = probe(n)
        with np.errstate(over="ignore"):  # (values beyond float32 become infinities)
            X32 = X.astype(np.float32)
        for variant in (X, np.asfortranarray(X), probe(2 * n)[::2], X32):
            for n_threads in (1, 2, 3):
                codes = mapper.transform(variant, n_threads=n_threads)
                assert codes.dtype == (np.uint8 if max_bins <= 255 else np.uint16) and codes.flags.c_contiguous
                np.testing.assert_array_equal(codes, expected(variant), err_msg=f"{n} rows, {n_threads} threads")
    with pytest.raises(ValueError, match="features"):
        mapper.transform(probe(5)[:, :-1])
    for bad in (probe(5)[:, 0], probe(5)[None]):
        with pytest.raises(ValueError, match="2-D"):
            mapper.transform(bad)


def test_the_search_table_follows_the_edges():
    """transform keeps its table of every feature's edges between calls, and makes it again
    where edges_ is another list or holds another array (set by hand, or a refit); it is not
    pickled."""
    import pickle

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    mapper = BinMapper(16).fit(X)
    before = mapper.transform(X)
    np.testing.assert_array_equal(mapper.transform(X), before)
    mapper.edges_[1] = np.array([0.0])  # one array replaced in the same list
    assert set(np.unique(mapper.transform(X)[:, 1])) == {0, 1}
    np.testing.assert_array_equal(mapper.transform(X)[:, [0, 2]], before[:, [0, 2]])
    mapper.fit(X[:, ::-1])  # a new list
    np.testing.assert_array_equal(mapper.transform(X[:, ::-1]), before[:, ::-1])
    assert "_search" not in pickle.loads(pickle.dumps(mapper)).__dict__


def test_float32_X_bins_as_its_float64_copy():
    rng = np.random.default_rng(8)
    X32 = rng.normal(size=(12_000, 5)).astype(np.float32)
    X32[rng.uniform(size=X32.shape) < 0.05] = np.nan
    X32[:, 3] = np.round(X32[:, 3], 1)
    for w in (None, rng.uniform(0.5, 2.0, size=12_000)):
        a, b = BinMapper(255).fit(X32, w, n_threads=2), BinMapper(255).fit(X32.astype(np.float64), w, n_threads=2)
        assert [e.tobytes() for e in a.edges_] == [e.tobytes() for e in b.edges_]
        np.testing.assert_array_equal(a.transform(X32, n_threads=2), b.transform(X32.astype(np.float64)))


@pytest.mark.parametrize("n_rows", [5, 12_000])
def test_no_features_no_edges(n_rows):
    mapper = BinMapper(40).fit(np.empty((n_rows, 0)), n_threads=2)
    assert mapper.edges_ == [] and mapper.transform(np.empty((n_rows, 0)), n_threads=2).shape == (n_rows, 0)


def test_sparse_features_read_in_blocks_are_the_columns_read_one_by_one(monkeypatch):
    from gpuboost.backends import base

    rng = np.random.default_rng(6)
    codes = rng.integers(0, 5, size=(500, 7)).astype(np.uint8)
    codes[:, [1, 4, 6]] = np.where(rng.uniform(size=(500, 3)) < 0.8, [[3, 0, 2]], codes[:, [1, 4, 6]])
    expected = [(f, int(np.argmax(np.bincount(codes[:, f], minlength=6)))) for f in range(7)
                if 2 * np.bincount(codes[:, f]).max() >= 500]
    assert [f for f, _ in expected] == [1, 4, 6]
    for block_bytes in (1, 2 * 500, 1 << 20):  # a feature a block, two, all
        monkeypatch.setattr(base, "SPARSE_BLOCK_BYTES", block_bytes)
        np.testing.assert_array_equal(base.sparse_features(codes, 6), np.array(expected, dtype=np.int64))


def test_upper_edges_of_arrays_are_the_scalar_lookups():
    # a tree's thresholds in one lookup (make_tree): the same floats as one call a split, +inf
    # at each feature's last value bin, rebuilt when the edges change, and not pickled
    import pickle

    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=400), rng.integers(0, 3, 400), np.zeros(400), rng.normal(size=400)])
    mapper = BinMapper(max_bins=12).fit(X)
    features = np.repeat(np.arange(4), 12)
    bins = np.minimum(np.tile(np.arange(12), 4), mapper.n_bins_[features] - 1)
    expected = [mapper.bin_upper_edge(int(f), int(b)) for f, b in zip(features, bins)]
    np.testing.assert_array_equal(mapper.bin_upper_edge(features, bins), expected)
    assert np.isinf(mapper.bin_upper_edge(np.arange(4), mapper.n_bins_ - 1)).all()  # each last value bin
    assert np.isfinite(mapper.bin_upper_edge(features, bins)[bins < mapper.n_bins_[features] - 1]).all()
    mapper.fit(X[:, ::-1])  # new edges: a new lookup
    bins = np.minimum(np.tile(np.arange(12), 4), mapper.n_bins_[features] - 1)
    expected = [mapper.bin_upper_edge(int(f), int(b)) for f, b in zip(features, bins)]
    np.testing.assert_array_equal(mapper.bin_upper_edge(features, bins), expected)
    assert sorted(pickle.loads(pickle.dumps(mapper)).__dict__) == ["edges_", "max_bins", "n_bins_"]
