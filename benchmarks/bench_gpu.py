"""GPU benchmark: gpuboost AOSO on the GPU against XGBoost (GPU), LightGBM (CPU) and gpuboost's CPU backend.

Protocol: ``shared/spec/BENCHMARKS.md`` (matched settings: 20 leaves, learning rate 0.1, no
regularisation). AOSO builds one tree per iteration, the peers K trees per iteration (one
per class): tables compare at equal numbers of trees, and say so.

For each library: fit time, ms per tree (fit time / trees), trees per second, test error
against trees (gpuboost: scored on the GPU after the fit, every ``--every`` trees; XGBoost and
LightGBM: ``predict`` with an iteration range after the fit), and the wall time to first reach
XGBoost-GPU's final test error, estimated as (trees needed) x (median fit time per tree), the
same estimate for every library. gpuboost's GPU memory: the CuPy pool's size after the fit
(an upper bound of the peak).

Kernel breakdown (``--breakdown``): one more fit of a few trees with CUDA events around every
stage (launched kernel by kernel, no graph): device time per tree in class statistics,
histograms, split evaluation, partition and leaf pick; the rest of a tree's wall time is
launch overhead and host synchronisation. The histogram kernel's achieved bandwidth counts the
bytes it must read (codes, row indices, p and 1 - p of the node's pair, labels, weights) per
feature group, against the device-to-device copy bandwidth measured in the same run.

Usage: ``python benchmarks/bench_gpu.py covertype290k poker --trees 7000 --poker-rows 10000000``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_cpu import load  # noqa: E402  (the datasets and their splits)

os.environ.setdefault("GPUBOOST_RMM", "0")  # CuPy's pool, whose size is the GPU memory reported

LEAVES = 20
LEARNING_RATE = 0.1


def log(*args):
    print(*args, flush=True)


def poker(n_train: int, n_test: int):
    from gpuboost.datasets import make_poker_hands

    X, y = make_poker_hands(n_train, random_state=0)
    Xt, yt = make_poker_hands(n_test, random_state=1)
    return (X.astype(np.float32), y.astype(np.int64), Xt.astype(np.float32), yt.astype(np.int64),
            f"make_poker_hands({n_train}, random_state=0) train, ({n_test}, random_state=1) test")


def copy_bandwidth() -> float:
    """Device-to-device copy, bytes read + written per second (median of 5)."""
    import cupy as cp

    a = cp.ones(2**28, dtype=cp.float32)  # 1 GiB
    b = cp.empty_like(a)
    times = []
    for _ in range(6):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        b[...] = a
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return 2 * a.nbytes / float(np.median(times[1:]))


def first_reach(curve, target):
    """Trees at which the error curve [(trees, errors)] first is <= target (None if never)."""
    for trees, errors in curve:
        if errors <= target:
            return trees
    return None


def run_gpuboost(X, y, Xt, yt, trees, every, device, **options):
    import cupy as cp

    from gpuboost import BoostClassifier
    from gpuboost.backends.cuda import staged_errors

    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    model = BoostClassifier(n_estimators=trees, max_leaves=LEAVES, learning_rate=LEARNING_RATE, device=device,
                            tol=0.0, **options)
    times = []

    from gpuboost.callback import Callback

    class Clock(Callback):
        def after_iteration(self, estimator, iteration):
            times.append(time.perf_counter())
            return False

    model.callbacks = [Clock()]
    started = time.perf_counter()
    model.fit(X, y)
    fit = time.perf_counter() - started
    per_tree = np.diff(np.concatenate([[started], times]))
    pool_bytes = pool.total_bytes() if device == "cuda" else None
    codes = model._bin_mapper.transform(Xt)
    curve = staged_errors(model.trees_, codes, np.searchsorted(model.classes_, yt), model._bin_mapper.missing_bin,
                          LEARNING_RATE, len(model.classes_), every=every)
    return dict(fit_s=fit, trees=len(model.trees_), ms_per_tree=1e3 * fit / len(model.trees_),
                median_ms_per_tree=1e3 * float(np.median(per_tree)), curve=curve,
                elapsed_s=[t - started for t in times],
                final_errors=curve[-1][1], gpu_pool_bytes=pool_bytes)


def run_xgboost(X, y, Xt, yt, rounds, every, device="cuda", subsample=1.0, colsample=1.0):
    import xgboost as xgb

    K = len(np.unique(y))
    model = xgb.XGBClassifier(n_estimators=rounds, max_leaves=LEAVES, grow_policy="lossguide", max_depth=0,
                              learning_rate=LEARNING_RATE, tree_method="hist", min_child_weight=0, reg_lambda=0,
                              max_bin=256, device=device, subsample=subsample, colsample_bytree=colsample,
                              random_state=0)
    started = time.perf_counter()
    model.fit(X, y)
    fit = time.perf_counter() - started
    curve = []
    if device == "cuda":  # predict where the model is: a host array would be predicted on the CPU
        import cupy as cp

        Xt = cp.asarray(Xt)
    for r in list(range(every, rounds + 1, every)) + ([rounds] if rounds % every else []):
        predicted = model.predict(Xt, iteration_range=(0, r))
        predicted = predicted.get() if hasattr(predicted, "get") else np.asarray(predicted)
        curve.append((r * K, int(np.count_nonzero(predicted != yt))))
    return dict(fit_s=fit, trees=rounds * K, ms_per_tree=1e3 * fit / (rounds * K), curve=curve,
                final_errors=curve[-1][1], version=xgb.__version__)


def run_lightgbm(X, y, Xt, yt, rounds, every, threads, subsample=1.0, colsample=1.0):
    import lightgbm as lgb

    K = len(np.unique(y))
    # LightGBM bags rows only with a bagging frequency: 1, each iteration, like the others
    model = lgb.LGBMClassifier(n_estimators=rounds, num_leaves=LEAVES, learning_rate=LEARNING_RATE,
                               min_child_samples=1, min_child_weight=1e-3, reg_lambda=0, max_bin=255,
                               n_jobs=threads, verbose=-1, subsample=subsample,
                               subsample_freq=1 if subsample < 1 else 0, colsample_bytree=colsample,
                               random_state=0)
    started = time.perf_counter()
    model.fit(X, y)
    fit = time.perf_counter() - started
    curve = []
    for r in list(range(every, rounds + 1, every)) + ([rounds] if rounds % every else []):
        predicted = model.predict(Xt, num_iteration=r)
        curve.append((r * K, int(np.count_nonzero(predicted != yt))))
    return dict(fit_s=fit, trees=rounds * K, ms_per_tree=1e3 * fit / (rounds * K), curve=curve,
                final_errors=curve[-1][1], version=lgb.__version__, threads=threads)


def breakdown(X, y, trees=20):
    """Device time per tree by stage, from CUDA events (kernel by kernel, no graph)."""
    import cupy as cp

    from gpuboost.backends.cuda import CudaBackend
    from gpuboost.binning import BinMapper
    from gpuboost.grower import GrowerParams

    mapper = BinMapper(255).fit(X)
    codes = mapper.transform(X)
    classes, yk = np.unique(y, return_inverse=True)
    K = len(classes)
    backend = CudaBackend(codes, yk, None, K, n_bins=int(mapper.n_bins_.max()), missing_code=mapper.missing_bin)
    params = GrowerParams(max_leaves=LEAVES)
    F = np.zeros((len(yk), K))
    backend.set_scores(F)

    def one_tree():  # the training path: the tree, F's update, p and the loss in one graph, one read
        tree, seg, ids = backend.grow_tree(params, mapper.bin_upper_edge, learning_rate=LEARNING_RATE)
        backend.rescore()
        return tree

    for _ in range(3):  # warm up: compile, and move away from F = 0
        one_tree()
    cp.cuda.Device().synchronize()
    walls = []
    rows_histogrammed = 0
    for _ in range(trees):
        started = time.perf_counter()
        one_tree()
        walls.append(time.perf_counter() - started)
    # the tree's graph alone, replayed (it regrows a tree and updates F each time)
    graph = next(iter(backend._graphs.values()), None)
    graph_ms = float("nan")
    if graph is not None:
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record(backend.stream)
        for _ in range(trees):
            graph.launch(stream=backend.stream)
        stop.record(backend.stream)
        stop.synchronize()
        graph_ms = cp.cuda.get_elapsed_time(start, stop) / trees
    # device time by stage, kernel by kernel
    backend.profile = []
    grow_walls = []
    for _ in range(trees):
        started = time.perf_counter()
        tree = one_tree()
        grow_walls.append(time.perf_counter() - started)
        # rows histogrammed: the root and every child (an upper bound: the last split's children
        # get no histogram)
        rows_histogrammed += int(tree.n_samples[0]) + int(sum(tree.n_samples[tree.left[tree.left >= 0]])
                                                          + sum(tree.n_samples[tree.right[tree.right >= 0]]))
    totals = {k: v / trees for k, v in backend.profile_totals().items()}
    backend.profile = None
    D = codes.shape[1]
    n_groups = len(backend.group_first_host) - 1
    bytes_per_row = D * codes.dtype.itemsize + n_groups * (4 + 4 * 8 + 4)  # codes; per group: row, p/pc of r, s, y
    hist_bytes = rows_histogrammed / trees * bytes_per_row
    from gpuboost.backends.cuda import HOST_SYNCS_PER_TREE

    return dict(wall_ms_per_tree_graph=1e3 * float(np.median(walls)), graph_device_ms=graph_ms,
                host_syncs_per_tree=HOST_SYNCS_PER_TREE,
                wall_ms_per_tree_no_graph=1e3 * float(np.median(grow_walls)),
                device_ms_per_tree=totals, histogram_bytes_per_tree=hist_bytes,
                histogram_GBps=hist_bytes / (totals.get("histograms", float("nan")) / 1e3) / 1e9,
                rows_histogrammed_per_tree=rows_histogrammed / trees)


def need_cupy(script: str) -> None:
    """A clear exit where CuPy is not installed (the script measures the GPU)."""
    import importlib.util

    if importlib.util.find_spec("cupy") is None:
        raise SystemExit(f"{script} measures the GPU backend: it needs CuPy and an NVIDIA GPU "
                         "(pip install \"gpuboost[cuda12]\" or [cuda13]); the CPU's figures come from bench_cpu.py.")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", choices=["covertype290k", "poker"])
    parser.add_argument("--trees", type=int, default=7000, help="gpuboost GPU trees (AOSO: one per iteration)")
    parser.add_argument("--xgb-rounds", type=int, default=1000)
    parser.add_argument("--lgb-rounds", type=int, default=1000)
    parser.add_argument("--cpu-trees", type=int, default=200, help="gpuboost CPU backend trees")
    parser.add_argument("--poker-rows", type=int, default=10_000_000)
    parser.add_argument("--poker-test", type=int, default=1_000_000)
    parser.add_argument("--every", type=int, default=100, help="score the test set every this many iterations")
    parser.add_argument("--peer-every", type=int,
                        help="XGBoost and LightGBM: score the test set every this many rounds (default: --every / K)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["gpuboost", "xgboost", "lightgbm", "cpu"])
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument("--subsample", type=float, default=1.0,
                        help="rows per iteration, every library (LightGBM: bagging each iteration)")
    parser.add_argument("--colsample", type=float, default=1.0,
                        help="colsample_bytree, every library (LightGBM's feature_fraction)")
    parser.add_argument("--sample-ahead", type=int,
                        help="iterations whose rows are drawn ahead on other threads (boosting._RowSamples; "
                             "0: each when it starts; default: the library's choice)")
    parser.add_argument("--hist-chunk", type=int,
                        help="rows a histogram block adds into its 32-bit counters before flushing them "
                             "(cuda.HIST_CHUNK; an A/B arm: a value above every block's share has no chunks)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--target-errors", type=int,
                        help="also report the wall time to reach this test error (e.g. XGBoost-GPU's from an "
                             "earlier run on the same GPU model, when XGBoost is skipped)")
    args = parser.parse_args(argv)
    need_cupy(Path(__file__).name)
    options = dict(subsample=args.subsample, colsample_bytree=args.colsample, random_state=0)
    peer_sampling = dict(subsample=args.subsample, colsample=args.colsample)
    if args.sample_ahead is not None:
        import gpuboost.boosting as boosting

        plain = boosting._RowSamples.__init__
        boosting._RowSamples.__init__ = lambda self, n, ss, seed, ahead: plain(self, n, ss, seed, args.sample_ahead)

    if args.hist_chunk is not None:
        import gpuboost.backends.cuda as cuda_backend

        if not 1 <= args.hist_chunk < 2 ** 31:
            parser.error(f"--hist-chunk must be in [1, 2**31), got {args.hist_chunk}")
        cuda_backend.HIST_CHUNK = args.hist_chunk  # (read by each CudaBackend made after this)
    import cupy as cp

    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    threads = os.cpu_count()
    report = dict(gpu=device, cpu=platform.processor(), cpu_threads=threads, date=time.strftime("%Y-%m-%d"),
                  hist_chunk=args.hist_chunk,
                  copy_bandwidth_GBps=copy_bandwidth() / 1e9, results={})
    log(f"GPU {device}; {threads} CPU threads; device-to-device copy {report['copy_bandwidth_GBps']:.0f} GB/s")
    for name in args.datasets:
        if name == "poker":
            X, y, Xt, yt, split = poker(args.poker_rows, args.poker_test)
        else:
            X, y, Xt, yt, split = load(name)
        K = len(np.unique(y))
        res = report["results"][name] = dict(split=split, n_train=len(y), n_test=len(yt), K=K)
        log(f"\n== {name}: {len(y)} train rows, {len(yt)} test rows, {X.shape[1]} features, K = {K}")
        peer_every = args.peer_every or max(1, args.every // K)
        runs = [("gpuboost-gpu", lambda: run_gpuboost(X, y, Xt, yt, args.trees, args.every, "cuda", **options)),
                ("xgboost-gpu", lambda: run_xgboost(X, y, Xt, yt, args.xgb_rounds, peer_every, **peer_sampling)),
                ("lightgbm-cpu", lambda: run_lightgbm(X, y, Xt, yt, args.lgb_rounds, peer_every, threads,
                                                      **peer_sampling)),
                ("gpuboost-cpu", lambda: run_gpuboost_cpu(X, y, Xt, yt, args.cpu_trees, **options))]
        skip = {"gpuboost": "gpuboost-gpu", "xgboost": "xgboost-gpu", "lightgbm": "lightgbm-cpu", "cpu": "gpuboost-cpu"}
        for label, fn in runs:
            if any(skip[s] == label for s in args.skip):
                continue
            try:
                out = fn()
            except Exception as exc:  # one library failing does not lose the others' figures
                out = dict(error=f"{type(exc).__name__}: {exc}")
            res[label] = out
            if "error" in out:
                log(f"{label:14s} failed: {out['error']}")
            else:
                log(f"{label:14s} {out['trees']:6d} trees  fit {out['fit_s']:8.2f} s  {out['ms_per_tree']:8.3f} ms/tree"
                    f"  {1e3 / out['ms_per_tree']:8.0f} trees/s  test errors {out['final_errors']}"
                    + (f"  GPU pool {out['gpu_pool_bytes'] / 2**30:.2f} GiB" if out.get("gpu_pool_bytes") else ""))
        xgb_res = res.get("xgboost-gpu", {})
        targets = ([("XGBoost-GPU's final test error", xgb_res["final_errors"])] if "final_errors" in xgb_res else [])
        if args.target_errors is not None:
            targets.append(("the given target", args.target_errors))
        for what, target in targets:
            log(f"time to {what} ({target}), (trees needed) x (ms per tree):")
            for label in ("gpuboost-gpu", "xgboost-gpu", "lightgbm-cpu", "gpuboost-cpu"):
                out = res.get(label, {})
                if "curve" not in out:
                    continue
                reached = first_reach(out["curve"], target)
                out["trees_to_xgb_final"] = reached
                out["seconds_to_xgb_final"] = None if reached is None else reached * out["ms_per_tree"] / 1e3
                log(f"  {label:14s} " + ("not reached" if reached is None else
                                          f"{reached} trees, {reached * out['ms_per_tree'] / 1e3:.2f} s"))
                if reached is not None and "elapsed_s" in out:
                    out["measured_seconds_to_target"] = seconds = out["elapsed_s"][reached - 1]
                    log(f"  {label:14s} measured: {seconds:.2f} s from the start of fit to the end of tree {reached}"
                        " (binning and the upload included)")
        if args.breakdown:
            try:
                res["breakdown"] = b = breakdown(X, y)
                log(f"breakdown (per tree): wall {b['wall_ms_per_tree_graph']:.3f} ms with the graph "
                    f"(the graph alone, the update of F and p included, {b['graph_device_ms']:.3f} ms on the "
                    f"device; host syncs per tree: {b['host_syncs_per_tree']}); {b['wall_ms_per_tree_no_graph']:.3f} "
                    "ms growing kernel by kernel with events around each stage:")
                for k, v in b["device_ms_per_tree"].items():
                    log(f"  {k:28s} {v:8.3f} ms")
                log(f"  histogram bytes {b['histogram_bytes_per_tree'] / 1e6:.1f} MB/tree, "
                    f"{b['histogram_GBps']:.0f} GB/s achieved vs {report['copy_bandwidth_GBps']:.0f} GB/s copy")
            except Exception as exc:
                res["breakdown"] = dict(error=f"{type(exc).__name__}: {exc}")
                log(f"breakdown failed: {exc}")
        for label in ("gpuboost-gpu", "xgboost-gpu", "lightgbm-cpu", "gpuboost-cpu"):
            if "curve" in res.get(label, {}):
                log(f"{label} errors vs trees: " + " ".join(f"{t}:{e}" for t, e in res[label]["curve"][:: max(1, len(res[label]['curve']) // 12)]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    return report


def run_gpuboost_cpu(X, y, Xt, yt, trees, **options):
    from gpuboost import BoostClassifier

    model = BoostClassifier(n_estimators=trees, max_leaves=LEAVES, learning_rate=LEARNING_RATE, device="cpu", tol=0.0,
                            **options)
    started = time.perf_counter()
    model.fit(X, y)
    fit = time.perf_counter() - started
    errors = []
    for k, F in enumerate(model._staged_scores(Xt)):
        if (k + 1) % 50 == 0 or k + 1 == len(model.trees_):
            from gpuboost.losses import predicted_class

            errors.append((k + 1, int(np.count_nonzero(model.classes_[predicted_class(F)] != yt))))
    return dict(fit_s=fit, trees=len(model.trees_), ms_per_tree=1e3 * fit / len(model.trees_), curve=errors,
                final_errors=errors[-1][1], threads=os.cpu_count())


if __name__ == "__main__":
    main()
