"""Per-feature binning of the training data.

Every feature is mapped once, before training, to small integer codes::

    code 0 .. n_bins[f]-1   value bins, in increasing order of the value
    code missing_bin        NaN (the same code, ``max_bins``, for every feature)

A value ``x`` falls in bin ``b`` when ``edges[f][b-1] < x <= edges[f][b]``, so a split
"bin <= b goes left" is the same as "x <= edges[f][b] goes left" on raw values. ``-inf`` and
``+inf`` are ordinary extreme values: they land in the first and the last value bin.

A feature with at most ``max_bins`` distinct values gets one bin per distinct value (the edges
are the midpoints between consecutive values, as scikit-learn does); otherwise the edges are
weighted quantiles, so that a row of weight 2 bins exactly as a duplicated row does.

The codes fit ``uint8`` for ``max_bins <= 255`` (255 value bins plus the missing bin) and
``uint16`` above. The training backends keep their own copy, in ``uint8`` wherever the value
bins in use fit it (``backends.base.training_codes``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["BinMapper", "code_dtype"]


def code_dtype(max_bins: int) -> np.dtype:
    """The smallest unsigned dtype that holds ``max_bins`` value bins plus the missing bin."""
    return np.dtype(np.uint8) if max_bins <= 255 else np.dtype(np.uint16)


def _between(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """A finite edge e with lower <= e < upper for each pair of consecutive distinct values.

    The midpoint where it exists; where rounding puts the midpoint on ``upper`` (adjacent
    floats) the lower value itself; around infinities the nearest finite choice, so that model
    files never hold an infinite edge.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        mids = lower * 0.5 + upper * 0.5
    mids = np.where(mids >= upper, lower, mids)
    mids = np.where(np.isneginf(lower), np.where(np.isfinite(upper), np.nextafter(upper, -np.inf), 0.0), mids)
    mids = np.where(np.isposinf(upper) & np.isfinite(lower), lower, mids)
    return mids.astype(np.float64)


def _feature_edges(column: np.ndarray, weight: np.ndarray, max_bins: int) -> np.ndarray:
    """Upper edges of the value bins of one feature (the last bin has no upper edge).

    Returns ``n_bins - 1`` increasing float64 edges.
    """
    present = ~np.isnan(column)
    values, inverse = np.unique(column[present], return_inverse=True)
    if values.size <= 1:
        return np.empty(0, dtype=np.float64)
    if values.size <= max_bins:
        return _between(values[:-1], values[1:])
    # Weighted quantiles over the distinct values: cut where the cumulative weight crosses
    # k / max_bins of the total, at the first distinct value reaching that level.
    value_weight = np.bincount(inverse, weights=weight[present], minlength=values.size)
    cumulative = np.cumsum(value_weight)
    levels = cumulative[-1] * np.arange(1, max_bins) / max_bins
    cut = np.searchsorted(cumulative, levels, side="left")
    cut = np.unique(np.minimum(cut, values.size - 2))
    return np.unique(_between(values[cut], values[cut + 1]))


def _host_feature_edges(column: np.ndarray, weight: np.ndarray | None, max_bins: int) -> np.ndarray:
    """``_feature_edges`` of a host column, by sorting where that gives the same edges.

    Without weights the sorting algorithm (``_sorted_feature_edges``) gives ``_feature_edges``'s
    edges bit for bit, 3-4x faster (no inverse index, no bincount). With weights it would sum
    them in another order, and a column holding -0.0 could keep the other zero as a distinct
    value's representative: those columns take ``_feature_edges``, so the edges never change.
    """
    if weight is None and not np.any(np.signbit(column) & (column == 0)):
        return _sorted_feature_edges(np, column, None, max_bins)
    return _feature_edges(column, np.ones(column.shape[0]) if weight is None else weight, max_bins)


#: Fewer rows than this are binned on one thread (starting threads would cost more).
THREADED_ROWS = 10_000

#: The features of a row-major X are binned a block at a time: the block's columns copied to
#: contiguous rows of about this many bytes first (a column of a C-ordered X is one value every
#: n_features x 8 bytes; sorting or searching it in place took 3-4x as long on wide data).
BLOCK_BYTES = 16 << 20


def _feature_blocks(n_rows: int, n_features: int, n_threads: int = 1) -> list:
    """The (first, end) feature ranges of the blocks: at most BLOCK_BYTES of float64 values
    each, at least one feature, and at least n_threads blocks where there are the features."""
    size = max(1, min(BLOCK_BYTES // (8 * max(1, n_rows)), -(-n_features // max(1, n_threads))))
    return [(f, min(f + size, n_features)) for f in range(0, n_features, size)]


def _host_values(X) -> np.ndarray:
    """A host X as float64 or float32 (kept: fit's _columns converts a block at a time, and
    transform's search each value, exactly)."""
    X = np.asarray(X)
    return X if X.dtype in (np.float64, np.float32) else X.astype(np.float64)


def _columns(X: np.ndarray, first: int, end: int) -> np.ndarray:
    """X[:, first:end] as contiguous float64 rows, one a feature (a copy unless X is a
    column-major float64 array)."""
    return np.ascontiguousarray(X[:, first:end].T, dtype=np.float64)


def _per_block(fn, n_rows: int, n_features: int, n_threads: int) -> list:
    """[fn(first, end) for each block of features], on up to n_threads threads (NumPy's copies,
    sorts and searches release the GIL); the results do not depend on the thread count."""
    n_threads = 1 if n_rows < THREADED_ROWS else max(1, int(n_threads))
    blocks = _feature_blocks(n_rows, n_features, n_threads)
    n_threads = max(1, min(n_threads, len(blocks)))  # (no features: no blocks, one thread)
    if n_threads == 1:
        return [fn(*block) for block in blocks]
    with ThreadPoolExecutor(n_threads) as pool:
        return list(pool.map(lambda block: fn(*block), blocks))


def _check_shape(shape: tuple, n_features: int) -> None:
    """transform's X is 2-D with the fitted number of features."""
    if len(shape) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {tuple(shape)}.")
    if shape[1] != n_features:
        raise ValueError(f"X has {shape[1]} features; the bins were fitted on {n_features}.")


def _on_gpu(X) -> bool:
    return hasattr(X, "__cuda_array_interface__")


def _to_numpy(a) -> np.ndarray:
    return a.get() if hasattr(a, "__cuda_array_interface__") else np.asarray(a)


def _sorted_feature_edges(xp, column, weight, max_bins: int) -> np.ndarray:
    """``_feature_edges`` by sorting, with ``xp`` NumPy or CuPy (the column where it lives).

    The distinct values are the ends of the runs of the sorted column; their cumulative
    weights the run ends of the cumulative sum (without weights: the run ends' positions + 1,
    the exact counts, so the edges equal ``_feature_edges``'s bit for bit; with weights the
    cumulative sums are added in another order, equal to rounding). Only the candidate values
    at the cuts (at most max_bins of them) come to the host.
    """
    present = ~xp.isnan(column)
    if weight is None:
        values = xp.sort(column[present])
        cumulative_w = None
    else:
        kept = column[present]
        order = xp.argsort(kept)
        values = kept[order]
        cumulative_w = xp.cumsum(weight[present][order])
    if values.size == 0:
        return np.empty(0, dtype=np.float64)
    run_end = xp.flatnonzero(values[1:] != values[:-1])
    run_end = xp.concatenate([run_end, xp.asarray([values.size - 1], dtype=run_end.dtype)])
    n_distinct = int(run_end.size)
    if n_distinct <= 1:
        return np.empty(0, dtype=np.float64)
    distinct = values[run_end]
    if n_distinct <= max_bins:
        d = _to_numpy(distinct)
        return _between(d[:-1], d[1:])
    cumulative = (run_end + 1).astype(xp.float64) if cumulative_w is None else cumulative_w[run_end]
    levels = cumulative[-1] * xp.arange(1, max_bins) / max_bins
    cut = xp.searchsorted(cumulative, levels, side="left")
    cut = xp.unique(xp.minimum(cut, n_distinct - 2))
    return np.unique(_between(_to_numpy(distinct[cut]), _to_numpy(distinct[cut + 1])))


class BinMapper:
    """Fit bin edges on training data and map any data to bin codes.

    Parameters
    ----------
    max_bins : int, default=255
        Largest number of value bins per feature (2 .. 65535). Missing values get one more bin,
        code ``max_bins``.

    Attributes
    ----------
    edges_ : list of ndarray of float64
        ``edges_[f]`` holds the ``n_bins_[f] - 1`` upper bin edges of feature ``f``.
    n_bins_ : ndarray of shape (n_features,), int32
        Number of value bins per feature (at least 1).
    missing_bin : int
        The code of missing values (``max_bins``).
    """

    def __init__(self, max_bins: int = 255):
        if not 2 <= int(max_bins) <= 65535:
            raise ValueError(f"max_bins must be in [2, 65535], got {max_bins!r}.")
        self.max_bins = int(max_bins)

    @property
    def missing_bin(self) -> int:
        return self.max_bins

    @property
    def n_codes(self) -> int:
        """Width of a histogram: the value bins plus the missing bin."""
        return self.max_bins + 1

    def fit(self, X: np.ndarray, sample_weight: np.ndarray | None = None, n_threads: int = 1) -> "BinMapper":
        """Fit edges on ``X`` of shape (n_samples, n_features), NaN = missing: float64, or
        float32 (the same edges as for its float64 copy, without making one), or numbers that
        are converted to float64.

        A host ``X``'s features are binned on up to ``n_threads`` threads; the edges do not
        depend on it.

        A CuPy ``X`` is binned where it is, on its GPU (``_sorted_feature_edges``): the edges
        are the same as the host's, bit for bit without weights, equal to rounding with them.
        """
        if _on_gpu(X):
            import cupy

            X = cupy.asarray(X, dtype=cupy.float64)
            weight = None if sample_weight is None else cupy.asarray(sample_weight, dtype=cupy.float64)
            self.edges_ = [_sorted_feature_edges(cupy, X[:, f], weight, self.max_bins) for f in range(X.shape[1])]
            self.n_bins_ = np.array([e.size + 1 for e in self.edges_], dtype=np.int32)
            return self
        X = _host_values(X)
        weight = None if sample_weight is None else np.asarray(sample_weight, np.float64)

        def block_edges(first: int, end: int) -> list:
            columns = _columns(X, first, end)
            return [_host_feature_edges(column, weight, self.max_bins) for column in columns]

        self.edges_ = [edges for block in _per_block(block_edges, X.shape[0], X.shape[1], n_threads)
                       for edges in block]
        self.n_bins_ = np.array([e.size + 1 for e in self.edges_], dtype=np.int32)
        return self

    def transform(self, X: np.ndarray, n_threads: int = 1) -> np.ndarray:
        """Bin codes of ``X``: ndarray of shape (n_samples, n_features), uint8 or uint16, C order.

        A CuPy ``X`` gives CuPy codes, computed on its GPU. A host ``X`` (float64, float32 or
        numbers converted to float64; any order) is searched by a compiled kernel
        (``gpuboost._numba_binning``), its rows shared among up to ``n_threads`` threads from
        ``THREADED_ROWS`` rows: the codes of ``numpy.searchsorted(edges, x, side="left")``,
        whatever the thread count."""
        fitted = self.edges_  # (read once: a refit meanwhile does not mix two sets of edges)
        if _on_gpu(X):
            import cupy

            X = cupy.asarray(X, dtype=cupy.float64)
            _check_shape(X.shape, len(fitted))
            codes = cupy.empty(X.shape, dtype=code_dtype(self.max_bins))
            for f, edges in enumerate(fitted):
                column = X[:, f]
                binned = cupy.searchsorted(cupy.asarray(edges), column, side="left")
                codes[:, f] = cupy.where(cupy.isnan(column), self.missing_bin, binned)
            return codes
        X = _host_values(X)
        _check_shape(X.shape, len(fitted))
        from ._numba_binning import bin_rows

        codes = np.empty(X.shape, dtype=code_dtype(self.max_bins))
        edges, starts, counts = self._search_table(fitted)
        n_rows = X.shape[0]
        n_threads = 1 if n_rows < THREADED_ROWS else max(1, min(int(n_threads), n_rows // (THREADED_ROWS // 2)))
        bounds = [n_rows * t // n_threads for t in range(n_threads + 1)]

        def bin_part(t: int) -> None:  # (bin_rows releases the GIL)
            bin_rows(X, bounds[t], bounds[t + 1], edges, starts, counts, self.missing_bin, codes)

        if n_threads == 1:
            bin_part(0)
        else:
            with ThreadPoolExecutor(n_threads) as pool:
                list(pool.map(bin_part, range(n_threads)))
        return codes

    def _search_table(self, fitted: list) -> tuple:
        """Every feature's edges (``fitted``, the list edges_) in one array, where each starts and
        how many it has (int64): the table of the compiled search, made again where the list or
        any of its arrays is another object than the ones it was made from."""
        kept = getattr(self, "_search", None)  # (the list, its arrays, the table: one attribute, set at once)
        if kept is not None and kept[0] is fitted and len(kept[1]) == len(fitted) and all(
                a is b for a, b in zip(kept[1], fitted)):
            return kept[2]
        sizes = np.array([e.size for e in fitted], dtype=np.int64)
        table = (np.concatenate([np.asarray(e, np.float64) for e in fitted] + [np.empty(0)]),
                 np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64), sizes)
        self._search = (fitted, tuple(fitted), table)  # (the arrays held: their ids are not reused)
        return table

    def fit_transform(self, X: np.ndarray, sample_weight: np.ndarray | None = None, n_threads: int = 1) -> np.ndarray:
        return self.fit(X, sample_weight, n_threads).transform(X, n_threads)

    def bin_upper_edge(self, feature, bin_index):
        """The raw threshold of "bin <= bin_index goes left" (+inf for the last value bin).

        feature and bin_index are ints (a float is returned) or integer arrays of one shape (an
        array of thresholds: a tree's splits in one lookup, not a Python call each).
        """
        if np.ndim(feature) == 0 and np.ndim(bin_index) == 0:
            edges = self.edges_[feature]
            return float(edges[bin_index]) if bin_index < edges.size else float("inf")
        if getattr(self, "_flat_edges_of", None) is not self.edges_:  # made once per set of edges
            # every feature's edges then +inf, one after another, and where each feature starts
            self._flat_edges = np.concatenate([np.append(e, np.inf) for e in self.edges_])
            self._edge_starts = np.concatenate([[0], np.cumsum([e.size + 1 for e in self.edges_])[:-1]])
            self._flat_edges_of = self.edges_
        return self._flat_edges[self._edge_starts[np.asarray(feature, np.intp)] + np.asarray(bin_index, np.intp)]

    def __getstate__(self):
        # the lookups of bin_upper_edge and transform are rebuilt where needed, not pickled with the model
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_flat_edges", "_edge_starts", "_flat_edges_of", "_search")}

    # The model file stores the edges; these two keep that in one place.
    def to_dict(self) -> dict:
        return {"max_bins": self.max_bins, "edges": [e.tolist() for e in self.edges_]}

    @classmethod
    def from_dict(cls, data: dict) -> "BinMapper":
        mapper = cls(int(data["max_bins"]))
        mapper.edges_ = [np.asarray(e, dtype=np.float64).reshape(-1) for e in data["edges"]]
        for f, e in enumerate(mapper.edges_):
            if not np.all(np.isfinite(e)):  # (fit makes finite edges only: see _midpoints)
                raise ValueError(f"bin edges of feature {f} are not all finite")
            if e.size >= mapper.max_bins or (e.size > 1 and not np.all(np.diff(e) > 0)):
                raise ValueError(f"bin edges of feature {f} are not increasing or too many")
        mapper.n_bins_ = np.array([e.size + 1 for e in mapper.edges_], dtype=np.int32)
        return mapper
