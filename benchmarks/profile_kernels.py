"""Device time per kernel and tree, for Nsight Compute (ncu): where a GPU tree's time goes.

Grows ``--trees`` AOSO trees on the GPU kernel by kernel (no graph), between
``cudaProfilerStart`` and ``cudaProfilerStop``, after a few warm-up trees. Run it under ncu
and summarise its CSV with ``--summarise``:

    ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
        python benchmarks/profile_kernels.py covertype290k > ncu.csv
    python benchmarks/profile_kernels.py --summarise ncu.csv --trees 5

ncu serialises the launches, so the figures are each kernel's own duration, without launch
gaps; the tree's graph (bench_gpu.py --breakdown) shows what the gaps add.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def grow(name: str, trees: int, poker_rows: int) -> None:
    import cupy as cp

    from bench_gpu import LEARNING_RATE, LEAVES, load, poker
    from gpuboost.backends.cuda import CudaBackend
    from gpuboost.binning import BinMapper
    from gpuboost.grower import GrowerParams

    X, y = (poker(poker_rows, 1)[:2] if name == "poker" else load(name)[:2])
    mapper = BinMapper(255).fit(X)
    codes = mapper.transform(X)
    classes, yk = np.unique(y, return_inverse=True)
    K = len(classes)
    backend = CudaBackend(codes, yk, None, K, n_bins=int(mapper.n_bins_.max()), missing_code=mapper.missing_bin,
                          use_graph=False)
    params = GrowerParams(max_leaves=LEAVES)
    backend.set_scores(np.zeros((len(yk), K)))

    def one_tree():  # the training path: growth, F's update, p and the loss
        backend.grow_tree(params, mapper.bin_upper_edge, learning_rate=LEARNING_RATE)
        backend.rescore()

    for _ in range(5):  # compile, and move away from F = 0
        one_tree()
    cp.cuda.Device().synchronize()
    cp.cuda.profiler.start()
    for _ in range(trees):
        one_tree()
    cp.cuda.Device().synchronize()
    cp.cuda.profiler.stop()


def summarise(path: Path, trees: int) -> None:
    text = path.read_text()
    start = text.find('"ID"')
    rows = csv.DictReader(io.StringIO(text[start:]))
    total = defaultdict(float)
    count = defaultdict(int)
    for row in rows:
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = row["Kernel Name"].split("(")[0].split("<")[0].strip()
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "nsecond")
        scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}.get(unit, 1e-3)
        total[name] += value * scale
        count[name] += 1
    grand = sum(total.values())
    print(f"device time per tree by kernel ({trees} trees, ncu, launches serialised):")
    for name, us in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"  {name:28s} {us / trees / 1e3:8.3f} ms  {count[name] / trees:6.1f} launches  "
              f"{us / count[name]:8.1f} us each  {100 * us / grand:5.1f}%")
    print(f"  {'total':28s} {grand / trees / 1e3:8.3f} ms  {sum(count.values()) / trees:6.1f} launches")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="?", default="covertype290k", choices=["covertype290k", "poker"])
    parser.add_argument("--trees", type=int, default=5)
    parser.add_argument("--poker-rows", type=int, default=10_000_000)
    parser.add_argument("--summarise", type=Path, help="summarise an ncu CSV instead of growing trees")
    args = parser.parse_args(argv)
    if args.summarise:  # (reads a CSV: no GPU needed)
        summarise(args.summarise, args.trees)
    else:
        from bench_gpu import need_cupy

        need_cupy(Path(__file__).name)
        grow(args.dataset, args.trees, args.poker_rows)


if __name__ == "__main__":
    main()
