#!/usr/bin/env bash
# The checks of the CUDA backend that need an NVIDIA GPU, in one command (docs/gpu.md lists
# which of them are still owed). Run from the repository root on a machine with a GPU, CuPy and
# numba-cuda (XGBoost and LightGBM optional: a missing one is reported, not fatal):
#
#   GPUBOOST_DATA=/path/to/shared/data bash benchmarks/gpu_checks.sh OUTDIR
#
# Writes the logs and JSON files under OUTDIR (default gpu-checks/). GPUBOOST_DATA must hold
# pendigits.npz, optdigits.npz and covtype.npz: without them five GPU tests skip themselves.
set -uo pipefail
out=${1:-gpu-checks}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
# every GPU test (stages against NumPy, trees from the same F, determinism, fused update, GPU inputs, OOM)
$python -m pytest -q tests/test_cuda.py tests/test_numba_kernels.py -p no:warnings 2>&1 | tee "$out/tests.log"
# the stage kernels under compute-sanitizer (K = 10 and 16: class_stats with two classes per lane),
# where it exists; API errors are left out (numba-cuda probes cuGetProcAddress while it starts)
if command -v compute-sanitizer > /dev/null; then
    stages="tests/test_cuda.py::test_stages_against_numpy[K=4] tests/test_cuda.py::test_stages_against_numpy[K=10]"
    stages="$stages tests/test_cuda.py::test_stages_against_numpy[K=16] tests/test_cuda.py::test_stages_against_numpy[K=100]"
    stages="$stages tests/test_cuda.py::test_stages_against_numpy[hist_chunk=8]"
    for tool in memcheck racecheck synccheck; do
        api=""; [ $tool = memcheck ] && api="--report-api-errors no"  # as run on the H200 (2026-11-26)
        compute-sanitizer --tool $tool $api --error-exitcode 9 $python -m pytest -q $stages \
            -p no:cacheprovider > "$out/sanitizer-$tool.log" 2>&1
        echo "compute-sanitizer $tool: exit $? ($out/sanitizer-$tool.log)"
    done
fi
# the fixed-point histograms on wide data against the CPU's float64 trees (two trees: the CPU's
# take about 25 s each on 16 cores), with and without the histogram chunks
$python benchmarks/gpu_wide.py --rows 1000000 --features 2000 20 --trees 2 2>&1 | tee "$out/wide.log"
# per-kernel device time (Nsight Compute), where ncu exists
if command -v ncu > /dev/null; then
    for data in covertype290k poker; do
        ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
            --log-file "$out/ncu-$data.csv" $python benchmarks/profile_kernels.py $data --trees 3 > /dev/null 2>&1
        $python benchmarks/profile_kernels.py --summarise "$out/ncu-$data.csv" --trees 3 | tee "$out/kernels-$data.txt"
    done
    # what limits the class statistics and the histogram at the root of ten million rows (their
    # first launches after the warm-up trees): throughput, occupancy, warp stall reasons
    for kernel in class_stats histogram; do
        ncu --clock-control none --profile-from-start off --set full -k "regex:$kernel" --launch-count 1 \
            $python benchmarks/profile_kernels.py poker --trees 1 > "$out/ncu-full-$kernel.txt" 2>&1
    done
fi
# HIST_CHUNK on ten million poker hands, A/B (owed since the thirty-second session): the chunks
# of 4096 rows against none (one chunk of a block's whole share), the same 200 trees, GPU only
for chunk in 4096 2147483647 4096; do
    $python benchmarks/bench_gpu.py poker --trees 200 --every 50 --skip xgboost lightgbm cpu --hist-chunk $chunk \
        --json "$out/poker-hist-chunk-$chunk.json" 2>&1 | tee -a "$out/poker-hist-chunk.log"
done
# the benchmark: Covertype290k to 7000 trees (time to XGBoost-GPU's error at 1000 rounds,
# measured), ten million poker hands, with the kernel breakdown
$python benchmarks/bench_gpu.py covertype290k --trees 7000 --every 20 --peer-every 50 --breakdown \
    --json "$out/covertype.json" 2>&1 | tee "$out/covertype.log"
$python benchmarks/bench_gpu.py poker --trees 300 --every 50 --peer-every 10 --breakdown --lgb-rounds 10 --xgb-rounds 30 \
    --json "$out/poker.json" 2>&1 | tee "$out/poker.log"
