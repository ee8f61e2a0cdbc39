"""grow_tree against a variant of itself, in one process, alternated: an A/B test that this
noisy machine cannot spoil.

Whole fits vary by 30-40% between runs here, so a change of a few percent to the kernels is
invisible in them. This script compiles two copies of ``gpuboost/backends/_numba_cpu.py`` (numba's
cache off): A as it is, B with textual replacements (``OLD=>NEW``, ``\\n`` for a newline), fits a
model to reach realistic scores, then grows the next tree from the same scores with A and with B
in alternated rounds and prints both medians and the median of the rounds' B/A ratios. The two
must grow the same tree (checked) unless ``--different`` is given (a change of the summation
order, for instance). An A/A run (a replacement that changes nothing) gives 1.000 +- 0.002.

    python benchmarks/ab_grow_tree.py pendigits "SIBLING_CELLS = 1 << 11=>SIBLING_CELLS = 1 << 14"

With ``--base REV``, A is the kernels' file at the git revision REV and B the working copy
(with the replacements, if any): a change already made, against the commit before it.

    python benchmarks/ab_grow_tree.py letter --base HEAD

A development tool, like profile_cpu.py; the timed benchmark is bench_cpu.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def main() -> None:
    import numba
    from profile_cpu import compiled_copy, grow_tree_arguments

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("replacements", nargs="*", help="OLD=>NEW, applied to B in turn")
    parser.add_argument("--base", help="A: the kernels at this git revision (B: the working copy)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trees", type=int, default=100, help="trees fitted first (the scores grown from)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--per-round", type=int, default=10, help="trees grown by each variant a round")
    parser.add_argument("--leaves", type=int, default=20)
    parser.add_argument("--different", action="store_true", help="B may grow another tree")
    parser.add_argument("--algorithm", default="aoso", help="the fit's algorithm (its last tree is grown)",
                        choices=("aoso", "mart", "robustlogit", "logitboost", "abcmart", "abcrobustlogit"))
    parser.add_argument("--weighted", action="store_true", help="a fit with sample weights (the weighted paths)")
    args = parser.parse_args()

    source = (REPO / "gpuboost" / "backends" / "_numba_cpu.py").read_text().replace("cache=True", "cache=False")
    variant = source
    if args.base:
        import subprocess

        source = subprocess.run(["git", "show", f"{args.base}:gpuboost/backends/_numba_cpu.py"], cwd=REPO,
                                check=True, capture_output=True, text=True).stdout.replace("cache=True", "cache=False")
    elif not args.replacements:
        raise SystemExit("ab_grow_tree.py: give replacements, or --base")
    for replacement in args.replacements:
        old, sep, new = replacement.partition("=>")
        old, new = old.replace("\\n", "\n"), new.replace("\\n", "\n")
        if not sep or variant.count(old) == 0:
            raise SystemExit(f"ab_grow_tree.py: {old!r} is not in the kernels' source")
        variant = variant.replace(old, new)
    folder = tempfile.TemporaryDirectory()  # kept until the end: numba may read the sources
    kernels = [compiled_copy(source, "_ab_kernels_a", folder.name), compiled_copy(variant, "_ab_kernels_b", folder.name)]

    arguments = grow_tree_arguments(args.dataset, args.trees, args.leaves, args.threads, args.algorithm,
                                    args.weighted)[0]
    numba.set_num_threads(args.threads)

    def grow(k):
        return k.grow_tree(*arguments)

    trees = [grow(k) for k in kernels]  # (compiles both)
    same = all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(*trees))
    if not same and not args.different:
        raise SystemExit("ab_grow_tree.py: A and B grow different trees (--different to time them all the same)")
    times = ([], [])
    for round_ in range(args.rounds):
        for v in ((0, 1) if round_ % 2 == 0 else (1, 0)):
            began = time.perf_counter()
            for _ in range(args.per_round):
                grow(kernels[v])
            times[v].append((time.perf_counter() - began) / args.per_round * 1e3)
    a, bb = np.array(times[0]), np.array(times[1])
    print(f"{args.dataset}: {args.threads} threads; grow_tree A {np.median(a):.3f} ms, B {np.median(bb):.3f} ms; "
          f"B/A {np.median(bb / a):.3f} (median of {args.rounds} alternated rounds of {args.per_round} trees)"
          + ("" if same else "; B grows another tree"))


if __name__ == "__main__":
    main()
