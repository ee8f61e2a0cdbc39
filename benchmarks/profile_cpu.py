"""Where a compiled CPU tree's time goes: grow_tree's stages, timed inside the kernel.

Python profilers see ``grow_tree`` as one call. This script compiles a copy of
``gpuboost/backends/_numba_cpu.py`` (in a temporary module, numba's cache off) in which
``grow_tree`` reads the CPU's cycle counter around each of its stages, fits a model to reach
realistic scores, then grows the next tree many times from the same scores and prints each
stage's share. The copy is made by inserting lines around known statements of ``grow_tree``:
if one is no longer there, the script says which, and the table below needs updating.

    python benchmarks/profile_cpu.py pendigits --threads 2

Stages (what runs between the cycle reads): the class sums of the root (taken from the scoring's
row blocks, which summed them with p, for up to ROOT_SUMS_CLASSES classes) or a split's smaller
child (by halves on two threads, or on one), the cross-sum stage of large nodes, the large
children's pair / histogram / split stages (all of a large batch's stages in one region, BATCH or
LARGE, where its two threads may wait for each other), a split's two children a thread each (WHOLE),
batches on one thread (the root's evaluation, small splits), and the rows' partition. Each
figure includes what the stage calls; "other" is the rest of the loop (choosing the best
leaf, bookkeeping). A development tool: a timed benchmark is bench_cpu.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

#: (the start of a statement inside grow_tree, its stage)
STAGES = [
    ("summed_stats(root_sums[0, 0]", "root class sums (the scoring's, one block)"),
    ("block_stats(root_sums", "root class sums (the scoring's blocks)"),
    ("split_stats(rows, ZERO, n_root", "root class sums (halves)"),
    ("_class_sums_by_halves(rows, start[node]", "smaller child's class sums (halves)"),
    ("_batch_class_stats(batch, small, plan[PARENT_NODE]",
     "smaller child's class sums (one thread), the larger's derived"),
    ("_pairs_r(n_batch", "cross sums of large nodes"),
    ("_siblings_parallel(CROSS", "cross sums of large nodes"),
    ("_pairs_s(n_batch", "cross sums of large nodes"),
    ("_siblings_parallel(stages, batch", "large batches in one region (all of their stages)"),
    ("_siblings_parallel(stage,", "large children: pairs, histograms, splits"),
    ("_siblings_parallel(WHOLE", "two children a thread each (WHOLE)"),
    ("_evaluate_node(b, batch[b]", "batches on one thread (root, small splits)"),
    ("n_left = partition(rows, start[best]", "partition"),
]

TSC = '''
@intrinsic
def _profile_tsc(typingctx):
    """The CPU's cycle counter (llvm.readcyclecounter)."""
    from numba.core import cgutils

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.int64(), codegen


'''


def instrumented_source(source: str) -> tuple[str, list[str]]:
    """The kernels' source with grow_tree timing its stages into a new last argument, prof."""
    names = list(dict.fromkeys(name for _, name in STAGES)) + ["other", "whole tree"]
    source = source.replace("cache=True", "cache=False")
    head = "def grow_tree("
    at = source.index(head)
    close = source.index("):", at)
    source = source[:close] + ", prof" + source[close:]
    source = source[:source.rindex("@njit", 0, at)] + TSC + source[source.rindex("@njit", 0, at):]
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("@"))
    wrap = {}
    for prefix, name in STAGES:
        found = [i for i in range(start, end) if lines[i].strip().startswith(prefix)]
        if len(found) != 1:
            raise SystemExit(f"profile_cpu.py: grow_tree has {len(found)} statements starting {prefix!r}; "
                             "update STAGES")
        i = found[0]
        depth, j = 0, i
        while True:  # the statement's last line: its parentheses closed
            depth += lines[j].count("(") - lines[j].count(")")
            if depth == 0:
                break
            j += 1
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
        wrap[i] = (f"{indent}_t0 = _profile_tsc()", j, f"{indent}prof[{names.index(name)}] += _profile_tsc() - _t0")
    out, after = [], {}
    for i, line in enumerate(lines):
        if i in wrap:
            out.append(wrap[i][0])
            after[wrap[i][1]] = wrap[i][2]
        out.append(line)
        if i in after:
            out.append(after.pop(i))
    source = "\n".join(out)
    total = names.index("whole tree")
    for old, new in (("    if n_root < 0:\n        for j in range(N):\n",
                      "    _t_all = _profile_tsc()\n    if n_root < 0:\n        for j in range(N):\n"),
                     ("    if first_order:  # the histograms summed weights",
                      f"    prof[{total}] += _profile_tsc() - _t_all\n"
                      "    if first_order:  # the histograms summed weights")):
        if source.count(old) != 1:
            raise SystemExit(f"profile_cpu.py: grow_tree no longer has {old.strip()!r}; update the script")
        source = source.replace(old, new)
    return source, names


def compiled_copy(source: str, name: str, folder: str):
    """The module `name` compiled from `source` (written to folder, which must outlive it:
    numba may read the source)."""
    path = Path(folder) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def grow_tree_arguments(dataset: str, trees: int, leaves: int, threads: int, algorithm: str = "aoso",
                        weighted: bool = False):
    """The arguments of kernels.grow_tree for the tree after a fit of `trees` iterations on the
    dataset, as CpuBackend makes them for its last tree's parameters (whatever the kernel's
    signature; the fit's backend and scores), and the training (X, y). weighted: the fit has
    sample weights (uniform in [0.5, 2], seed 0). The algorithm is one whose trees grow_tree
    grows (not klogitboost or adaboostmh). (The backend's arguments are captured, not the
    kernel's: AOSO's fits call grow_tree from another kernel, grow_rounds.)"""
    from bench_cpu import load
    from gpuboost import BoostClassifier
    from gpuboost.backends import cpu

    Xtr, ytr = load(dataset)[:2]
    captured = {}
    tree_arguments = cpu.CpuBackend._tree_arguments

    def capture(self, params, *rest, **named):
        captured["backend"], captured["params"] = self, params
        return tree_arguments(self, params, *rest, **named)

    cpu.CpuBackend._tree_arguments = capture
    try:
        weight = np.random.default_rng(0).uniform(0.5, 2.0, size=len(ytr)) if weighted else None
        BoostClassifier(n_estimators=trees, max_leaves=leaves, n_jobs=threads, algorithm=algorithm).fit(
            Xtr, ytr, sample_weight=weight)
    finally:
        cpu.CpuBackend._tree_arguments = tree_arguments
    return captured["backend"]._tree_arguments(captured["params"], None), Xtr, ytr


def main() -> None:
    import numba

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trees", type=int, default=100,
                        help="trees fitted first (the scores the profile starts from)")
    parser.add_argument("--repeat", type=int, default=100, help="times the next tree is grown")
    parser.add_argument("--leaves", type=int, default=20)
    args = parser.parse_args()

    source, names = instrumented_source((REPO / "gpuboost" / "backends" / "_numba_cpu.py").read_text())
    tmp = tempfile.TemporaryDirectory()  # kept until the end: numba may read the source
    kernels = compiled_copy(source, "_profiled_kernels", tmp.name)
    arguments, Xtr, ytr = grow_tree_arguments(args.dataset, args.trees, args.leaves, args.threads)
    numba.set_num_threads(args.threads)
    prof = np.zeros(len(names), np.int64)

    def grow():
        kernels.grow_tree(*arguments, prof)

    grow()  # compiles
    prof[:] = 0
    began = time.perf_counter()
    for _ in range(args.repeat):
        grow()
    ms = (time.perf_counter() - began) / args.repeat * 1e3
    whole = prof[names.index("whole tree")]
    prof[names.index("other")] = whole - prof[:names.index("other")].sum()
    print(f"{args.dataset}: {Xtr.shape[0]} rows, {Xtr.shape[1]} features, {len(np.unique(ytr))} classes; "
          f"{args.threads} threads; grow_tree {ms:.3f} ms a tree (the tree after {args.trees}, {args.repeat} times)")
    for name, cycles in zip(names, prof):
        if name != "whole tree":
            print(f"  {name:45s} {cycles / whole * ms:7.3f} ms  {cycles / whole * 100:5.1f}%")


if __name__ == "__main__":
    main()
