"""How much the GPU's fixed-point histograms move the trees on wide data (needs a GPU).

The CUDA backend adds each row's w g and w h to its bin in fixed point, at a resolution that
follows how many rows one block adds (docs/gpu.md, "Histograms are fixed point"): on wide data a
node's rows are shared by fewer blocks, each block adds more rows, and each row keeps fewer
bits, unless a block adds its rows a chunk at a time (``HIST_CHUNK``). This script grows AOSO
trees on the GPU, with and without the chunks, and on the compiled CPU backend (float64 sums)
from the same scores, tree after tree, and prints for each tree whether the GPU's trees are
the CPU's (pairs and splits in node order), where they first differ, and the largest relative
difference of the split gains where they agree, with the GPU's time a tree. A narrow control
with the same rows shows what the width itself does. The data are synthetic codes (no
binning): ``--rows`` x ``--features`` uniform bins, labels from ten of the features. The CPU's
trees are the slow part: about 25 s each for a million rows of 2000 features on 16 cores.

    python benchmarks/gpu_wide.py --rows 1000000 --features 2000 20 --trees 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuboost.grower import GrowerParams  # noqa: E402


def data(n_rows: int, n_features: int, n_classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 255, size=(n_rows, n_features), dtype=np.uint8)
    informative = codes[:, :10].astype(np.float32) / 255.0
    scores = informative @ rng.normal(size=(10, n_classes)).astype(np.float32)
    scores += rng.normal(scale=0.3, size=(n_rows, n_classes)).astype(np.float32)
    return codes, np.argmax(scores, axis=1).astype(np.int64)


def first_difference(a, b):
    """(node, what) of the first node, in id order, whose pair or split differs; None if equal."""
    for j in range(min(a.n_nodes, b.n_nodes)):
        if tuple(a.pair[j]) != tuple(b.pair[j]):
            return j, "pair"
        split_a = (a.feature[j], a.bin[j], a.missing_left[j]) if a.left[j] >= 0 else None
        split_b = (b.feature[j], b.bin[j], b.missing_left[j]) if b.left[j] >= 0 else None
        if split_a != split_b:
            return j, "split"
    return None if a.n_nodes == b.n_nodes else (min(a.n_nodes, b.n_nodes), "size")


def describe(tree_cpu, tree_gpu) -> tuple[bool, str]:
    diff = first_difference(tree_cpu, tree_gpu)
    n = min(tree_cpu.n_nodes, tree_gpu.n_nodes) if diff is None else diff[0]
    inner = [j for j in range(n) if tree_cpu.left[j] >= 0]
    rel = max((abs(tree_gpu.gain[j] - tree_cpu.gain[j]) / abs(tree_cpu.gain[j]) for j in inner
               if tree_cpu.gain[j] != 0), default=0.0)
    if diff is None:
        return True, f"same tree, gains within {rel:.1e}"
    j, kind = diff
    what = f"node {j} differs ({kind})"
    if kind == "split" and tree_cpu.left[j] >= 0 and tree_gpu.left[j] >= 0:
        what += f", its gain {abs(tree_gpu.gain[j] - tree_cpu.gain[j]) / abs(tree_cpu.gain[j]):.1e} off"
    return False, what + f"; gains before it within {rel:.1e}"


def compare(n_rows: int, n_features: int, n_classes: int, n_trees: int, max_leaves: int, threads: int) -> None:
    from gpuboost.backends.cpu import CpuBackend
    from gpuboost.backends.cuda import HIST_CHUNK, CudaBackend

    start = time.perf_counter()
    codes, y = data(n_rows, n_features, n_classes)

    def bin_edge(feature, bin_):  # (the codes are the data: bin b holds the value b)
        return np.asarray(bin_, dtype=np.float64) + 0.5

    kw = dict(n_bins=255, missing_code=255)
    cpu = CpuBackend(codes, y, None, n_classes, n_threads=threads, **kw)
    gpu = CudaBackend(codes, y, None, n_classes, **kw)
    groups = len(gpu.group_first_host) - 1
    print(f"\n{n_rows} rows x {n_features} features, K={n_classes}: {groups} feature groups, "
          f"{gpu.n_sm} SMs, blocks per group: root {gpu._hist_blocks(1)}, a split's children "
          f"{gpu._hist_blocks(2)} (set-up {time.perf_counter() - start:.1f} s)", flush=True)
    params = GrowerParams(max_leaves=max_leaves)
    variants = {f"chunks of {HIST_CHUNK} rows": HIST_CHUNK, "no chunks": 1 << 30}
    same = dict.fromkeys(variants, 0)
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    F = np.zeros((n_rows, n_classes))
    for k in range(n_trees):
        cpu.set_scores(F)
        t0 = time.perf_counter()
        tree_cpu, seg_cpu, ids_cpu = cpu.grow_tree(params, bin_edge)
        line = f"  tree {k} (cpu {time.perf_counter() - t0:.1f} s):"
        for name, chunk in variants.items():
            gpu.hist_chunk = chunk
            gpu.set_scores(F)
            t0 = time.perf_counter()
            tree_gpu, _, _ = gpu.grow_tree(params, bin_edge)
            seconds[name].append(time.perf_counter() - t0)
            equal, what = describe(tree_cpu, tree_gpu)
            same[name] += equal
            line += f" | {name}: {what}"
        print(line, flush=True)
        cpu.update_scores(F, seg_cpu, 0.1 * tree_cpu.node_vectors(n_classes)[ids_cpu])
    for name in variants:
        later = seconds[name][1:] or seconds[name]  # (the first holds the compilation)
        print(f"  {name}: {same[name]} of {n_trees} trees the same as the CPU's; "
              f"median GPU tree {1000 * statistics.median(later):.1f} ms (after the first)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--features", type=int, nargs="+", default=[2000, 20])
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--trees", type=int, default=8)
    parser.add_argument("--max-leaves", type=int, default=20)
    parser.add_argument("--threads", type=int, default=16)
    args = parser.parse_args()
    for d in args.features:
        compare(args.rows, d, args.classes, args.trees, args.max_leaves, args.threads)


if __name__ == "__main__":
    main()
