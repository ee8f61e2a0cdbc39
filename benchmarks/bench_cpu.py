"""CPU benchmark: gpuboost AOSO-LogitBoost against scikit-learn, LightGBM and XGBoost.

Protocol: ``shared/spec/BENCHMARKS.md`` (matched settings: 20 leaves, learning rate 0.1, no
regularisation; equal numbers of trees; one process, libraries one after another).

AOSO builds one tree per iteration; the peers build K trees per iteration (one per class), so
they get ``ceil(trees / K)`` iterations. Test errors are recorded after every iteration:

- gpuboost: ``staged_predict`` after the timed fit;
- scikit-learn: ``staged_predict`` after the timed fit;
- LightGBM: raw scores of each iteration alone (``predict(..., start_iteration=i,
  num_iteration=1)``), accumulated, after the timed fit (linear in the iterations; the sums'
  order is not LightGBM's own, which matters only for exact ties);
- XGBoost: ``predict(..., iteration_range=(0, i))`` after the timed fit.

Run ``python benchmarks/bench_cpu.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
try:  # a gpuboost on the path (PYTHONPATH, an install) comes first; else this checkout's
    import gpuboost  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO))

LIBRARIES = ("gpuboost", "sklearn", "lightgbm", "xgboost")
DATASETS = ("pendigits", "letter", "optdigits", "covertype290k")
DEFAULT_TREES = {"pendigits": 1000, "letter": 4000, "optdigits": 2000, "covertype290k": 200}
LEARNING_RATE = 0.1
LEAVES = 20


# -- data ----------------------------------------------------------------------------------
def data_dir() -> Path:
    if os.environ.get("GPUBOOST_DATA"):
        return Path(os.environ["GPUBOOST_DATA"])
    return REPO.parent / "shared" / "data"


def load(name: str):
    """(X_train, y_train, X_test, y_test, description); X as float64, y as int64."""
    if name == "covertype290k":
        with np.load(data_dir() / "covtype.npz", allow_pickle=False) as d:
            X, y, index = d["X"], d["y"], d["train_index"]
        train = np.zeros(len(y), bool)
        train[index] = True
        split = "covtype.npz, Covertype290k: rows in train_index train, all other rows test"
        parts = X[train], y[train], X[~train], y[~train]
    else:
        with np.load(data_dir() / f"{name}.npz", allow_pickle=False) as d:
            parts = d["X_train"], d["y_train"], d["X_test"], d["y_test"]
        split = f"{name}.npz, the standard train / test split"
    Xtr, ytr, Xte, yte = parts
    return (Xtr.astype(np.float64), ytr.astype(np.int64), Xte.astype(np.float64),
            yte.astype(np.int64), split)


# -- machine and versions ------------------------------------------------------------------
def cpu_model() -> str:
    """The CPU's model name, and its widest vector extension: the kernels' 8-wide vectors are
    one AVX-512 register or two AVX2 ones, and NumPy's float64 exp is vectorised with AVX-512
    only (a scalar loop on AVX2 machines: 6.9 ns a value on the twenty-first session's host)."""
    name, flags = platform.processor() or "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    widest = next((ext for ext in ("avx512f", "avx2", "avx") if ext in flags), None)
    return f"{name} ({widest.upper()})" if widest else name


def versions(libraries) -> dict:
    import numpy
    import sklearn
    import threadpoolctl

    out = {"python": platform.python_version(), "numpy": numpy.__version__,
           "threadpoolctl": threadpoolctl.__version__}
    import gpuboost
    package = Path(gpuboost.__file__).resolve().parent
    out["gpuboost"] = f"{gpuboost.__version__} ({package}, commit: {git_commit(package)})"
    out["gpuboost_backend"] = gpuboost_backend()
    out["scikit-learn"] = sklearn.__version__
    if "lightgbm" in libraries:
        import lightgbm
        out["lightgbm"] = lightgbm.__version__
    if "xgboost" in libraries:
        import xgboost
        out["xgboost"] = xgboost.__version__
    return out


def git_commit(package_dir: Path) -> str:
    """The commit of the checkout gpuboost was imported from ("+changes" when its gpuboost/
    differs from that commit), or "not a git checkout"."""
    import subprocess

    root = package_dir.parent
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        if Path(top).resolve() != root.resolve():
            return "not a git checkout"
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "gpuboost"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"


def gpuboost_backend() -> str:
    """Name of the backend BoostClassifier(device="cpu") trains with."""
    try:
        from gpuboost.backends import backend_class
    except ImportError:  # the first versions had the NumPy backend only
        return "numpy"
    return backend_class("cpu").name


def machine() -> dict:
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {"cpu": cpu_model(), "logical_cpus": os.cpu_count(), "usable_cpus": affinity,
            "platform": platform.platform(), "load_average_at_start": load}


# -- the four contenders -------------------------------------------------------------------
# Each runner returns a dict: fit_s, predict_s, iterations, trees, trees_per_iteration,
# errors (test errors after each iteration), final_errors (from predict), extra.

def timed_fit(model, X, y, repeat: int):
    """Fit ``repeat`` times (the same model each time); (median seconds, all seconds)."""
    times = []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), times


# -- the models, at the matched settings (unfitted; K-tree libraries get ceil(trees / K) iterations)
def gpuboost_model(trees, threads, K=None):
    from gpuboost import BoostClassifier

    params = dict(n_estimators=trees, max_leaves=LEAVES, learning_rate=LEARNING_RATE)
    if "n_jobs" in BoostClassifier().get_params():  # later versions: threads of the compiled backend
        params["n_jobs"] = threads
    return BoostClassifier(**params)


def sklearn_model(trees, threads, K):
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_leaf_nodes=LEAVES, learning_rate=LEARNING_RATE, min_samples_leaf=1,
        l2_regularization=0.0, max_bins=255, early_stopping=False, max_iter=math.ceil(trees / K),
        # above 200000 rows (covertype) the bin edges come from a random subsample of 200000
        # rows: a fixed seed makes its errors repeatable (with None they vary from run to run)
        random_state=0,
    )


def lightgbm_model(trees, threads, K):
    import lightgbm as lgb

    return lgb.LGBMClassifier(
        num_leaves=LEAVES, learning_rate=LEARNING_RATE, min_child_samples=1, min_child_weight=1e-3,
        reg_lambda=0.0, max_bin=255, n_estimators=math.ceil(trees / K), n_jobs=threads, verbose=-1,
    )


def xgboost_model(trees, threads, K):
    import xgboost as xgb

    return xgb.XGBClassifier(
        max_leaves=LEAVES, grow_policy="lossguide", max_depth=0, learning_rate=LEARNING_RATE,
        tree_method="hist", min_child_weight=0, reg_lambda=0, max_bin=256, n_estimators=math.ceil(trees / K),
        n_jobs=threads, device="cpu",
    )


MODELS = {"gpuboost": gpuboost_model, "sklearn": sklearn_model, "lightgbm": lightgbm_model,
          "xgboost": xgboost_model}


def run_gpuboost(Xtr, ytr, Xte, yte, trees, threads, K, repeat=1):
    """One fit only, whatever ``repeat``: a NumPy-backend fit takes minutes."""
    model = gpuboost_model(trees, threads)
    t0 = time.perf_counter()
    model.fit(Xtr, ytr)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = model.predict(Xte)
    predict_s = time.perf_counter() - t0
    # test errors after each iteration, from staged predictions after the timed fit (as for
    # the peers), so that the fit time is training alone
    errors = np.asarray([int(np.sum(p != yte)) for p in model.staged_predict(Xte)], dtype=np.int64)
    loss = np.asarray(model.train_loss_, dtype=np.float64)
    increases = int(np.sum(np.diff(loss) > 1e-12 * np.maximum(1.0, np.abs(loss[:-1])))) if loss.size > 1 else 0
    return {
        "fit_s": fit_s, "fit_times": [fit_s], "predict_s": predict_s, "iterations": int(model.n_estimators_),
        "trees": int(model.n_trees_), "trees_per_iteration": 1, "errors": errors.tolist(),
        "final_errors": int(np.sum(pred != yte)),
        "extra": {
            "boosting_loop_s": float(model.fit_time_),
            "train_loss_initial": float(model.initial_loss_),
            "train_loss_final": float(loss[-1]) if loss.size else None,
            "train_loss_at": {str(t): float(loss[t - 1]) for t in checkpoints(trees) if t <= loss.size},
            "converged_tol": bool(loss.size and loss[-1] <= model.tol),
            "tol": float(model.tol),
            "train_loss_increases": increases,
            "leaves_last_tree": int(model.trees_[-1].n_leaves) if model.trees_ else None,
        },
    }


def run_sklearn(Xtr, ytr, Xte, yte, trees, threads, K, repeat=1):
    model = sklearn_model(trees, threads, K)
    fit_s, fit_times = timed_fit(model, Xtr, ytr, repeat)
    t0 = time.perf_counter()
    pred = model.predict(Xte)
    predict_s = time.perf_counter() - t0
    errors = [int(np.sum(p != yte)) for p in model.staged_predict(Xte)]
    per_iter = K if K > 2 else 1
    return {"fit_s": fit_s, "fit_times": fit_times, "predict_s": predict_s, "iterations": int(model.n_iter_),
            "trees": int(model.n_iter_) * per_iter, "trees_per_iteration": per_iter,
            "errors": errors, "final_errors": int(np.sum(pred != yte)), "extra": {}}


def run_lightgbm(Xtr, ytr, Xte, yte, trees, threads, K, repeat=1):
    model = lightgbm_model(trees, threads, K)
    fit_s, fit_times = timed_fit(model, Xtr, ytr, repeat)
    t0 = time.perf_counter()
    pred = model.predict(Xte)
    predict_s = time.perf_counter() - t0
    booster = model.booster_
    n_iter = booster.current_iteration()
    errors = []
    raw = None
    for i in range(n_iter):
        step = booster.predict(Xte, start_iteration=i, num_iteration=1, raw_score=True)
        raw = step if raw is None else raw + step
        errors.append(int(np.sum(model.classes_[np.argmax(raw, axis=1)] != yte)))
    per_iter = K if K > 2 else 1
    return {"fit_s": fit_s, "fit_times": fit_times, "predict_s": predict_s, "iterations": n_iter,
            "trees": booster.num_trees(), "trees_per_iteration": per_iter,
            "errors": errors, "final_errors": int(np.sum(pred != yte)), "extra": {}}


def run_xgboost(Xtr, ytr, Xte, yte, trees, threads, K, repeat=1):
    import xgboost as xgb

    model = xgboost_model(trees, threads, K)
    fit_s, fit_times = timed_fit(model, Xtr, ytr, repeat)
    t0 = time.perf_counter()
    pred = model.predict(Xte)
    predict_s = time.perf_counter() - t0
    booster = model.get_booster()
    n_iter = booster.num_boosted_rounds()
    dtest = xgb.DMatrix(Xte, nthread=threads)
    errors = []
    for i in range(1, n_iter + 1):
        margin = booster.predict(dtest, output_margin=True, iteration_range=(0, i))
        errors.append(int(np.sum(np.argmax(margin, axis=1) != yte)))
    per_iter = K if K > 2 else 1
    return {"fit_s": fit_s, "fit_times": fit_times, "predict_s": predict_s, "iterations": n_iter,
            "trees": n_iter * per_iter, "trees_per_iteration": per_iter,
            "errors": errors, "final_errors": int(np.sum(pred != yte)), "extra": {}}


RUNNERS = {"gpuboost": run_gpuboost, "sklearn": run_sklearn, "lightgbm": run_lightgbm,
           "xgboost": run_xgboost}
LABELS = {"gpuboost": "gpuboost AOSO", "sklearn": "scikit-learn HGB", "lightgbm": "LightGBM",
          "xgboost": "XGBoost hist"}


# -- summaries -----------------------------------------------------------------------------
def checkpoints(budget: int) -> list[int]:
    """Tree counts of the table: 10, 20, 50, 100, 200, 500, ... below the budget, then it."""
    points, base = [], 10
    while base < budget:
        for m in (1, 2, 5):
            if m * base < budget:
                points.append(m * base)
        base *= 10
    points = [t for t in points if t >= budget / 40] + [budget]
    return points


def errors_at_trees(result: dict, trees: int):
    """Test errors after the first iteration with at least ``trees`` trees (None if never).

    A model that stopped early (gpuboost at training loss <= tol) keeps its last value.
    """
    per = result["trees_per_iteration"]
    errs = result["errors"]
    if not errs:
        return None, 0
    i = math.ceil(trees / per)
    if i > len(errs):
        if result.get("stopped_early"):
            return errs[-1], len(errs) * per
        return None, i * per
    return errs[i - 1], i * per


def summarise(name: str, result: dict, n_test: int) -> dict:
    errs = np.asarray(result["errors"])
    per = result["trees_per_iteration"]
    best = int(errs.min()) if errs.size else None
    best_iter = int(np.argmin(errs)) + 1 if errs.size else None
    s = {
        "library": name,
        "iterations": result["iterations"],
        "trees": result["trees"],
        "last_errors": int(errs[-1]) if errs.size else None,
        "last_error_rate": float(errs[-1] / n_test) if errs.size else None,
        "predict_errors": result["final_errors"],
        "best_errors_chosen_on_test": best,
        "best_at_trees": best_iter * per if best_iter else None,
        "fit_s": result["fit_s"],
        "ms_per_tree": 1000.0 * result["fit_s"] / max(1, result["trees"]),
        "fits": len(result["fit_times"]),
        "ms_per_tree_min": 1000.0 * min(result["fit_times"]) / max(1, result["trees"]),
        "ms_per_tree_max": 1000.0 * max(result["fit_times"]) / max(1, result["trees"]),
        "predict_s": result["predict_s"],
        # the measure: fit plus one predict of the test set, per tree
        "ms_per_tree_fit_predict": 1000.0 * (result["fit_s"] + result["predict_s"]) / max(1, result["trees"]),
    }
    return s


def time_to_reach(result: dict, target: int):
    """Estimated seconds to first reach <= target test errors: fit time x trees needed / trees."""
    errs = np.asarray(result["errors"])
    hit = np.flatnonzero(errs <= target)
    if not hit.size:
        return None, None
    trees = (int(hit[0]) + 1) * result["trees_per_iteration"]
    return result["fit_s"] * trees / result["trees"], trees


def warm_up(libraries, threads) -> None:
    """One tiny untimed fit per library, so that first-call costs (imports, OpenMP pools,
    scikit-learn's first fit) do not land in the first dataset's timings."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = np.argmax(X[:, :3], axis=1)
    for lib in libraries:
        with threadpool_limits(limits=threads):
            RUNNERS[lib](X, y, X, y, 6, threads, 3)


# -- one dataset ---------------------------------------------------------------------------
def bench_dataset(name, trees, libraries, threads, out, repeat=1, budgets=None):
    from threadpoolctl import threadpool_limits

    Xtr, ytr, Xte, yte, split = load(name)
    K = int(len(np.unique(ytr)))
    n_test = len(yte)
    out(f"\n=== {name}: {split}")
    out(f"    train {Xtr.shape[0]} rows x {Xtr.shape[1]} features, test {n_test} rows, K = {K} classes")
    peers_iters = math.ceil(trees / K)
    out(f"    tree budget {trees}: gpuboost AOSO {trees} iterations x 1 tree; peers "
        f"ceil({trees}/{K}) = {peers_iters} iterations x {K} trees = {peers_iters * K} trees")
    results, summaries = {}, {}
    for lib in libraries:
        out(f"    running {LABELS[lib]} ...", flush=True)
        with threadpool_limits(limits=threads):
            t0 = time.perf_counter()
            try:
                r = RUNNERS[lib](Xtr, ytr, Xte, yte, (budgets or {}).get(lib, trees), threads, K, repeat)
            except Exception as exc:  # report and go on with the other libraries
                out(f"    {LABELS[lib]} FAILED: {type(exc).__name__}: {exc}")
                results[lib] = {"failed": f"{type(exc).__name__}: {exc}"}
                continue
            wall = time.perf_counter() - t0
        r["stopped_early"] = lib == "gpuboost" and r["iterations"] < (budgets or {}).get(lib, trees)
        r["wall_s_including_staged_errors"] = wall
        results[lib] = r
        summaries[lib] = summarise(lib, r, n_test)
        s = summaries[lib]
        out(f"      done: {s['trees']} trees, fit {s['fit_s']:.2f} s ({s['ms_per_tree']:.2f} ms/tree), "
            f"predict {1000 * s['predict_s']:.1f} ms, {s['last_errors']} test errors "
            f"(wall incl. staged errors {wall:.1f} s)", flush=True)
        if s["fits"] > 1:
            out(f"      {s['fits']} fits: median {s['ms_per_tree']:.2f} ms/tree, min {s['ms_per_tree_min']:.2f}, "
                f"max {s['ms_per_tree_max']:.2f}")
        if s["last_errors"] != s["predict_errors"]:
            out(f"      WARNING: errors after the last iteration ({s['last_errors']}) differ from "
                f"predict() ({s['predict_errors']})")

    ok = [lib for lib in libraries if lib in summaries]
    # main table
    out(f"\n  {name}: test errors of {n_test} test rows; threads {threads}; equal numbers of trees "
        f"(peers: {K} trees per iteration)")
    header = f"  {'library':<18}{'trees':>7}{'errors':>8}{'rate %':>8}{'best*':>7}{'@trees':>8}" \
             f"{'fit s':>9}{'ms/tree':>9}{'pred ms':>9}{'fit+pred ms/tree':>18}"
    out(header)
    for lib in ok:
        s = summaries[lib]
        out(f"  {LABELS[lib]:<18}{s['trees']:>7}{s['last_errors']:>8}{100 * s['last_error_rate']:>8.2f}"
            f"{s['best_errors_chosen_on_test']:>7}{s['best_at_trees']:>8}{s['fit_s']:>9.2f}"
            f"{s['ms_per_tree']:>9.2f}{1000 * s['predict_s']:>9.1f}{s['ms_per_tree_fit_predict']:>18.3f}")
    out("  * best: the fewest test errors over all iterations, chosen on the test set.")
    if repeat > 1:
        out(f"  peers' fit time: the median of {repeat} fits (gpuboost: one fit)")
    if "gpuboost" in summaries:
        g = summaries["gpuboost"]["ms_per_tree"]
        ratios = ", ".join(f"{LABELS[lib]} {g / summaries[lib]['ms_per_tree']:.1f}x"
                           for lib in ok if lib != "gpuboost")
        if ratios:
            out(f"  gpuboost ms/tree relative to: {ratios}")
        g2 = summaries["gpuboost"]["ms_per_tree_fit_predict"]
        ratios = ", ".join(f"{LABELS[lib]} {g2 / summaries[lib]['ms_per_tree_fit_predict']:.2f}x"
                           for lib in ok if lib != "gpuboost")
        if ratios:
            out(f"  gpuboost (fit + predict) ms/tree relative to: {ratios}")
        e = results["gpuboost"]["extra"]
        out(f"  gpuboost: boosting loop {e['boosting_loop_s']:.2f} s of the {results['gpuboost']['fit_s']:.2f} s fit; "
            f"training loss {e['train_loss_initial']:.4g} -> {e['train_loss_final']:.4g} after "
            f"{results['gpuboost']['iterations']} trees"
            + (f" (reached tol {e['tol']:g}: stopped before the budget)" if e["converged_tol"] else
               f" (tol {e['tol']:g} not reached)"))
        if e["train_loss_increases"]:
            out(f"  NOTE: the gpuboost training loss increased in {e['train_loss_increases']} iterations")

    # errors at tree counts
    points = checkpoints(trees)
    out(f"\n  {name}: test errors at numbers of trees (peers at the first iteration with at least "
        f"that many trees, i.e. ceil(t/{K}) x {K} trees)")
    out("  " + f"{'trees':>7}" + "".join(f"{LABELS[lib]:>18}" for lib in ok))
    table = {}
    for t in points:
        row = {}
        cells = []
        for lib in ok:
            e, actual = errors_at_trees(results[lib], t)
            row[lib] = {"errors": e, "trees": actual}
            if e is None:
                cells.append(f"{'-':>18}")
            else:
                mark = f" ({actual})" if actual != t else ""
                cells.append(f"{str(e) + mark:>18}")
        table[str(t)] = row
        out("  " + f"{t:>7}" + "".join(cells))

    # time to accuracy
    tta = {}
    lasts = [summaries[lib]["last_errors"] for lib in ok]
    if lasts:
        targets = sorted({max(lasts), min(summaries[lib]["last_errors"] for lib in ok if lib != "gpuboost")}
                         if len(ok) > 1 else {max(lasts)}, reverse=True)
        # each peer's best over its iterations (the time-to-accuracy target: LightGBM's)
        targets += sorted({summaries[lib]["best_errors_chosen_on_test"] for lib in ok if lib != "gpuboost"}
                          - set(targets), reverse=True)
        out(f"\n  {name}: time to accuracy (estimated: fit time x trees needed / trees built)")
        for target in targets:
            cells = []
            tta[str(target)] = {}
            for lib in ok:
                sec, tr = time_to_reach(results[lib], target)
                tta[str(target)][lib] = {"seconds": sec, "trees": tr}
                cells.append(f"{LABELS[lib]} " + ("not reached" if sec is None else f"{sec:.2f} s ({tr} trees)"))
            out(f"  <= {target} errors: " + "; ".join(cells))

    # verdict
    verdict = None
    if "gpuboost" in summaries and len(ok) > 1:
        g_err, _ = errors_at_trees(results["gpuboost"], trees)
        peers = {lib: errors_at_trees(results[lib], trees) for lib in ok if lib != "gpuboost"}
        below = all(g_err < e for e, _ in peers.values() if e is not None)
        detail = ", ".join(f"{LABELS[lib]} {e} ({tr} trees)" for lib, (e, tr) in peers.items())
        early = " (stopped early at training loss <= tol)" if results["gpuboost"]["stopped_early"] else ""
        verdict = {"aoso_errors": g_err, "peers": {lib: e for lib, (e, _) in peers.items()},
                   "aoso_below_all_peers": bool(below)}
        out(f"\n  VERDICT {name}: AOSO test errors at {trees} trees = {g_err}{early}; {detail}: "
            f"AOSO is {'BELOW' if below else 'NOT below'} all {len(peers)} peers.")

    return {"dataset": name, "split": split, "n_train": int(Xtr.shape[0]), "n_test": n_test,
            "n_features": int(Xtr.shape[1]), "n_classes": K, "tree_budget": trees,
            "peer_iterations": peers_iters, "threads": threads, "summary": summaries,
            "errors_at_trees": table, "time_to_accuracy": tta, "verdict": verdict,
            "results": results}


STARTUP_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from gpuboost import BoostClassifier
t1 = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 16))
y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-1.0, 0.0, 1.0])
times = []
for _ in range(2):
    t = time.perf_counter()
    BoostClassifier(n_estimators=10, max_leaves=20, n_jobs=int(sys.argv[1])).fit(X, y)
    times.append(time.perf_counter() - t)
print(json.dumps({"import_s": t1 - t0, "first_fit_s": times[0], "second_fit_s": times[1]}))
"""


def measure_startup(threads, out) -> dict:
    """The compiled backend's one-off costs, each in a new Python process (not a timed test):
    a first fit with an empty numba cache (compiling every kernel), then two processes that
    load the kernels from that cache. Each process fits 10 trees on 2000 synthetic rows twice:
    the first fit pays the compilation or the cache load, the second is the fit alone."""
    import subprocess
    import tempfile

    out(f"\n=== start-up: numba compilation and cache (new processes, {threads} threads)")
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("empty cache (compiles)", "cached, process 2", "cached, process 3"):
            t = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", STARTUP_CHILD, str(threads)], env=env, check=True,
                                  capture_output=True, text=True)
            wall = time.perf_counter() - t
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            figures.update(label=label, process_wall_s=wall)
            rows.append(figures)
            out(f"  {label:24s} process {wall:6.2f} s: import {figures['import_s']:.2f} s, first fit "
                f"{figures['first_fit_s']:.2f} s, second fit {figures['second_fit_s']:.3f} s")
    out("  the first fit minus the second is the one-off cost: compilation with an empty cache, "
        "loading the cached kernels after")
    return {"threads": threads, "runs": rows}


def parse_trees(items) -> dict:
    trees = dict(DEFAULT_TREES)
    for item in items or []:
        if "=" in item:
            key, value = item.split("=", 1)
            if key not in DATASETS:
                raise SystemExit(f"--trees: unknown dataset {key!r}; choose from {DATASETS}")
            trees[key] = int(value)
        else:
            value = int(item)
            trees = {k: value for k in trees}
    return trees


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="gpuboost (AOSO-LogitBoost) vs scikit-learn, LightGBM and XGBoost "
                    "on the CPU, at matched settings and equal numbers of trees.")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--trees", nargs="*", metavar="[DATASET=]N",
                        help="tree budgets, e.g. letter=4000 covertype290k=100 (a bare N sets all); "
                             f"defaults: {DEFAULT_TREES}")
    parser.add_argument("--threads", type=int, default=2, help="threads for every library (default 2)")
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    parser.add_argument("--repeat", type=int, default=1,
                        help="fit each peer this many times and report the median fit time "
                             "(gpuboost is fitted once; default 1)")
    parser.add_argument("--library-trees", nargs="*", metavar="LIBRARY=N", default=[],
                        help="a library's own tree budget on every dataset, e.g. lightgbm=26000 (for the "
                             "time to a peer's best error; tables at equal trees then stop at the smaller budget)")
    parser.add_argument("--json", metavar="PATH", help="write all figures to this JSON file")
    parser.add_argument("--startup", action="store_true",
                        help="also measure the compiled backend's one-off costs in new processes: the first "
                             "fit's compilation (empty numba cache) and a later process's cache load")
    parser.add_argument("--gpuboost-backend", choices=("numpy", "numba"), default="numba",
                        help="gpuboost's CPU backend: the compiled one that device='cpu' uses (default) "
                             "or the NumPy reference (sets GPUBOOST_CPU_BACKEND)")
    args = parser.parse_args(argv)
    if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        raise SystemExit(f"--json {args.json}: its folder does not exist (checked before the run, not after it)")
    os.environ["GPUBOOST_CPU_BACKEND"] = args.gpuboost_backend
    trees = parse_trees(args.trees)
    budgets = {}
    for item in args.library_trees:
        lib, _, value = item.partition("=")
        if lib not in LIBRARIES or not value.isdigit():
            raise SystemExit(f"--library-trees: expected LIBRARY=N with LIBRARY in {LIBRARIES}, got {item!r}")
        budgets[lib] = int(value)

    def out(text="", flush=False):
        print(text, flush=True)

    info = {"date": datetime.date.today().isoformat(), "machine": machine(), "repeat": args.repeat,
            "versions": versions(args.libraries), "threads": args.threads,
            "command": " ".join([os.path.basename(sys.argv[0])] + (argv if argv is not None else sys.argv[1:]))}
    m = info["machine"]
    out(f"gpuboost CPU benchmark, {info['date']}")
    out(f"machine: {m['cpu']}, {m['logical_cpus']} logical CPUs ({m['usable_cpus']} usable), "
        f"{m['platform']}; load average at start {m['load_average_at_start']}")
    out("versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()
                                 if k != "gpuboost_backend"))
    out(f"gpuboost backend: {info['versions']['gpuboost_backend']}"
        + (" (the pure-NumPy reference backend)" if info["versions"]["gpuboost_backend"] == "numpy" else ""))
    if info["versions"]["gpuboost_backend"] != ("numpy" if args.gpuboost_backend == "numpy" else "cpu"):
        out(f"WARNING: asked for the {args.gpuboost_backend} backend, this gpuboost trains with "
            f"{info['versions']['gpuboost_backend']}")
    out(f"threads: {args.threads} for every library (LightGBM n_jobs, XGBoost n_jobs/nthread, "
        f"scikit-learn and NumPy/BLAS via threadpoolctl.threadpool_limits({args.threads})); "
        f"gpuboost n_jobs={args.threads} where it has the parameter (its NumPy backend is mostly "
        f"single-threaded)")
    out("settings: 20 leaves, learning rate 0.1, no regularisation (BENCHMARKS.md matched settings); "
        "every library's fit time is training alone; test errors per iteration come from staged predictions after the fit")
    out(f"libraries: {', '.join(LABELS[lib] for lib in args.libraries)}; datasets: {', '.join(args.datasets)}")

    if args.startup and "gpuboost" in args.libraries and args.gpuboost_backend == "numba":
        info["startup"] = measure_startup(args.threads, out)
    warm_up(args.libraries, args.threads)
    info["datasets"] = {}
    for name in args.datasets:
        info["datasets"][name] = bench_dataset(name, trees[name], args.libraries, args.threads, out,
                                               args.repeat, budgets)
        if args.json:
            Path(args.json).write_text(json.dumps(info, indent=1))
    out("\nsummary:")
    for name, d in info["datasets"].items():
        v = d["verdict"]
        if v:
            out(f"  {name} ({d['tree_budget']} trees): AOSO {v['aoso_errors']} vs "
                + ", ".join(f"{LABELS[k]} {e}" for k, e in v["peers"].items())
                + f" -> AOSO {'below' if v['aoso_below_all_peers'] else 'NOT below'} all peers")
    if args.json:
        Path(args.json).write_text(json.dumps(info, indent=1))
        out(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
