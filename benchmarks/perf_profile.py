"""Where a compiled CPU tree's time goes, by function and thread: a sampled profile with Linux perf.

profile_cpu.py times grow_tree's stages from inside (cycle counters around each stage), but
a stage that runs in a two-thread region shows as one figure, its waits included. This script
samples instead: it grows the tree after ``--trees`` many times in a child process (with
``--fit``: whole fits of ``--trees`` trees, the scoring between trees included), lets
``perf record`` sample both threads, and names the samples' functions from a perf map
(``/tmp/perf-PID.map``) that it writes from numba's compiled functions. numba's cache is off
in the child (a temporary cache folder), so that every function is compiled in this process
and its address is known; the child's first tree compiles for about a minute.

    python benchmarks/perf_profile.py letter --seconds 12

Prints each function's share of the samples per thread (the main thread first), with the
functions that only wait grouped: ``libgomp`` (OpenMP's workers between parallel regions)
and each parallel region's own code (``parfor of KERNEL``: its barriers' spinning, and what
numba inlined there, such as the whole loop body of ``softmax_from_exponentials``). A
function's figure includes what LLVM inlined into it. Needs ``perf`` (Debian's linux-perf)
and a kernel that lets this user sample its own processes; hardware counters are not needed
(the software clock is sampled).

A development tool, like profile_cpu.py; the timed benchmark is bench_cpu.py.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child(dataset: str, trees: int, leaves: int, threads: int, seconds: float, ready: str, fit: bool) -> None:
    """Grow the tree after `trees` in a loop for `seconds`, after writing the perf map and
    touching `ready`; fit: whole fits of `trees` trees in the loop instead."""
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "benchmarks"))
    import numba

    from gpuboost.backends import _numba_cpu as kernels
    from profile_cpu import grow_tree_arguments

    arguments, Xtr, ytr = grow_tree_arguments(dataset, trees, leaves, threads)
    numba.set_num_threads(threads)
    if fit:
        from gpuboost import BoostClassifier

        def step():
            BoostClassifier(n_estimators=trees, max_leaves=leaves, n_jobs=threads).fit(Xtr, ytr)
    else:
        def step():
            kernels.grow_tree(*arguments)
    step()
    libraries = {}

    def walk(library):
        if id(library) not in libraries:
            libraries[id(library)] = library
            for linked in getattr(library, "_linking_libraries", ()):
                walk(linked)

    regions = collections.defaultdict(set)  # a kernel: the parallel regions' functions linked into its code
    for name in dir(kernels):
        dispatcher = getattr(kernels, name)
        if isinstance(dispatcher, numba.core.registry.CPUDispatcher):
            for compiled in dispatcher.overloads.values():
                walk(compiled.library)
                for linked in getattr(compiled.library, "_linking_libraries", ()):
                    try:
                        functions = [f.name for f in linked._final_module.functions if not f.is_declaration]
                    except Exception:
                        continue
                    regions[name].update(f for f in functions if "parfor_gufunc" in f)
    owners = {}  # a region's function: the kernel with the fewest regions that links it (its own, not a caller)
    for name in sorted(regions, key=lambda name: len(regions[name]), reverse=True):
        owners.update(dict.fromkeys(regions[name], name))
    symbols = set()
    for library in libraries.values():
        try:
            functions = [f.name for f in library._final_module.functions if not f.is_declaration]
        except Exception:  # (a library loaded from a cache has no module: not here, the cache is off)
            continue
        for function in functions:
            address = library._codegen._engine.get_function_address(function)
            if address:
                symbols.add((address, f"parfor_gufunc[{owners[function]}]" if function in owners else function))
    symbols = sorted(symbols)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for j, (address, function) in enumerate(symbols):
            following = symbols[j + 1][0] if j + 1 < len(symbols) else address + 4096
            out.write(f"{address:x} {min(following - address, 1 << 20):x} {function}\n")
    Path(ready).write_text(str(os.getpid()))
    began = time.perf_counter()
    n = 0
    while time.perf_counter() - began < seconds:
        step()
        n += 1
    per_tree = (time.perf_counter() - began) / n / (trees if fit else 1)
    what = f"fits of {trees} trees" if fit else f"the tree after {trees}"
    print(f"{dataset}: {n} loops in {seconds:.0f} s, {per_tree * 1e3:.3f} ms a tree ({threads} threads, {what})",
          flush=True)


def short_name(symbol: str, dso: str) -> str:
    """A readable name: the kernel's Python name, 'parfor' for a parallel region's code,
    'libgomp' for OpenMP's."""
    if "libgomp" in dso:
        return "libgomp (OpenMP workers waiting between regions)"
    if "parfor_gufunc" in symbol:
        owner = re.search(r"parfor_gufunc\[(\w+)\]", symbol)
        return f"parfor of {owner.group(1) if owner else '?'} (the region's own code: its barriers' waits, inlined work)"
    found = re.search(r"_numba_cpu(\d+)(\w+?)B\d", symbol)
    if found:
        return found.group(2)[:int(found.group(1))]
    return symbol[:60] or dso


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trees", type=int, default=500, help="trees fitted first (the scores grown from)")
    parser.add_argument("--leaves", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=12.0, help="seconds sampled")
    parser.add_argument("--top", type=int, default=14, help="functions listed per thread")
    parser.add_argument("--fit", action="store_true",
                        help="sample whole fits of --trees trees (the scoring and update too), not one tree")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ready", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.dataset, args.trees, args.leaves, args.threads, args.seconds + 3.0, args.ready, args.fit)
        return
    if shutil.which("perf") is None:
        raise SystemExit("perf_profile.py: needs Linux perf (Debian: apt install linux-perf)")
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "ready"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba-cache"))
        proc = subprocess.Popen([sys.executable, __file__, args.dataset, "--threads", str(args.threads),
                                 "--trees", str(args.trees), "--leaves", str(args.leaves), "--seconds",
                                 str(args.seconds), "--child", "--ready", str(ready)] + ["--fit"] * args.fit,
                                env=env)
        while not ready.exists():
            if proc.poll() is not None:
                raise SystemExit("perf_profile.py: the child process ended before its loop")
            time.sleep(0.5)
        pid = ready.read_text()
        data = Path(tmp) / "perf.data"
        time.sleep(1.0)
        recorded = subprocess.run(["perf", "record", "-q", "-F", "2000", "-p", pid, "-o", str(data), "--", "sleep",
                                   str(args.seconds)], stdout=subprocess.DEVNULL)
        proc.wait()
        if recorded.returncode != 0:
            raise SystemExit("perf_profile.py: perf record failed (see its message above; a kernel that "
                             "does not let users sample processes needs kernel.perf_event_paranoid <= 2)")
        report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "pid,dso,sym",
                                 "--stdio", "-t", "|"], capture_output=True, text=True).stdout
        Path(f"/tmp/perf-{pid}.map").unlink(missing_ok=True)
    shares = collections.defaultdict(collections.Counter)
    for line in report.splitlines():
        fields = [field.strip() for field in line.split("|")]  # overhead | tid:comm | dso | [.] symbol
        if len(fields) == 4 and fields[0].endswith("%") and ":" in fields[1]:
            tid = int(fields[1].split(":")[0])
            shares[tid][short_name(fields[3].split()[-1], fields[2])] += float(fields[0][:-1])
    main_tid = int(pid)
    for tid in sorted(shares, key=lambda t: (t != main_tid, t)):
        counter = shares[tid]
        total = sum(counter.values())
        print(f"thread {tid}{' (main)' if tid == main_tid else ''}: {total:.1f}% of the samples")
        for name, share in counter.most_common(args.top):
            print(f"  {share:6.2f}%  {name}")


if __name__ == "__main__":
    main()
