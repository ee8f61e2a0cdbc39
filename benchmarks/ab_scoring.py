"""The compiled backend's scoring pass (``update_and_score``) with the C library's exp and log1p
called inside the kernel (``libm``, where they are NumPy's: see ``cpu.libm_matches_numpy``)
against NumPy's, outside it, alternated on one backend: an A/B of the scoring alone, which whole
fits on these noisy machines cannot resolve.

A model of ``--trees`` trees is fitted (its backend kept), then each round grows 20 trees from
the current scores and times their ``update_and_score`` calls, once with each variant (the two
give the same p and loss, bit for bit, where ``libm_matches_numpy()``; elsewhere the script
refuses, since the backend would not use the kernel's exp there).

    python benchmarks/ab_scoring.py letter --rounds 30

With ``--fits ALGORITHM``: whole fits of that algorithm instead (``--trees`` iterations, 20
leaves), the backends' choice forced either way, alternated round by round; their training
losses must be the same.

    python benchmarks/ab_scoring.py letter --fits adaboostmh --trees 60 --rounds 4

A development tool, like ab_fit.py; the timed benchmark is bench_cpu.py.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cpu  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", choices=sorted(bench_cpu.DEFAULT_TREES))
    parser.add_argument("--trees", type=int, default=200, help="trees fitted first (the scores grown from)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--fits", metavar="ALGORITHM", help="time whole fits of this algorithm instead")
    args = parser.parse_args()
    if args.fits:
        return whole_fits(args)

    from gpuboost import BoostClassifier
    from gpuboost.backends import cpu
    from gpuboost.grower import GrowerParams

    if not cpu.libm_matches_numpy():
        sys.exit("NumPy's exp or log1p is not the C library's on this machine: the backend keeps NumPy's, "
                 "so there is nothing to compare.")
    backends = []
    init = cpu.CpuBackend.__init__

    def keep(self, *a, **k):
        init(self, *a, **k)
        backends.append(self)

    cpu.CpuBackend.__init__ = keep
    Xtr, ytr, _, _, _ = bench_cpu.load(args.dataset)
    model = BoostClassifier(n_estimators=args.trees, max_leaves=bench_cpu.LEAVES,
                            learning_rate=bench_cpu.LEARNING_RATE, n_jobs=args.threads, device="cpu").fit(Xtr, ytr)
    cpu.CpuBackend.__init__ = init
    backend = backends[-1]
    F = np.zeros((Xtr.shape[0], backend.n_classes))
    # the fit's scores (its F is not kept): its trees added to zeros, as a continued fit rebuilds them
    backend.add_trees(F, model.trees_, backend.training_codes(), backend.missing_code, bench_cpu.LEARNING_RATE)
    backend.set_scores(F)
    params = GrowerParams(max_leaves=bench_cpu.LEAVES)
    edge = model._bin_mapper.bin_upper_edge
    times = {True: [], False: []}
    ratios = []
    for r in range(args.rounds):
        for libm in ((True, False) if r % 2 else (False, True)):
            backend.libm = libm
            spent = 0.0
            for _ in range(20):
                tree, segments, leaf_ids = backend.grow_tree(params, edge)
                step = backend.leaf_steps(tree, leaf_ids, bench_cpu.LEARNING_RATE)
                t0 = time.perf_counter()
                backend.update_and_score(F, segments, step)
                spent += time.perf_counter() - t0
            times[libm].append(spent / 20 * 1e3)
        ratios.append(times[True][-1] / times[False][-1])
    print(f"ab_scoring: {args.dataset}, {args.threads} threads, after {args.trees} trees; machine: "
          f"{bench_cpu.machine()['cpu']}")
    print(f"update_and_score: C library's exp in the kernel {statistics.median(times[True]):.3f} ms, NumPy's "
          f"{statistics.median(times[False]):.3f} ms (medians); ratio {statistics.median(ratios):.3f} (median of "
          f"{args.rounds} alternated rounds; range {min(ratios):.2f}-{max(ratios):.2f})")


def whole_fits(args) -> None:
    from gpuboost import BoostClassifier
    from gpuboost.backends import cpu

    if not cpu.libm_matches_numpy():
        sys.exit("NumPy's exp or log1p is not the C library's on this machine: nothing to compare.")
    probe = cpu.libm_matches_numpy
    Xtr, ytr, _, _, _ = bench_cpu.load(args.dataset)

    def fit(n):
        return BoostClassifier(algorithm=args.fits, n_estimators=n, max_leaves=bench_cpu.LEAVES,
                               learning_rate=bench_cpu.LEARNING_RATE, n_jobs=args.threads, device="cpu").fit(Xtr, ytr)

    fit(3)  # compiled before the first timed fit
    times = {True: [], False: []}
    losses = {}
    ratios = []
    try:
        for r in range(args.rounds):
            for libm in ((True, False) if r % 2 else (False, True)):
                cpu.libm_matches_numpy = (lambda value=libm: value)
                t0 = time.perf_counter()
                model = fit(args.trees)
                times[libm].append((time.perf_counter() - t0) / args.trees * 1e3)
                losses[libm] = model.train_loss_
            ratios.append(times[True][-1] / times[False][-1])
    finally:
        cpu.libm_matches_numpy = probe
    print(f"ab_scoring: {args.dataset}, {args.fits}, {args.trees} iterations, {args.threads} threads; machine: "
          f"{bench_cpu.machine()['cpu']}")
    print(f"fit: C library's exp in the kernels {statistics.median(times[True]):.2f} ms an iteration, NumPy's "
          f"{statistics.median(times[False]):.2f} (medians); ratio {statistics.median(ratios):.3f} (median of "
          f"{args.rounds} alternated rounds; range {min(ratios):.2f}-{max(ratios):.2f}); the same training losses: "
          f"{'yes' if np.array_equal(losses[True], losses[False]) else 'NO'}")


if __name__ == "__main__":
    main()
