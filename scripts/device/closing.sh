#!/usr/bin/env bash
# The closing GPU run of a change to the kernels, in one call of the device tool
# (carry .device and .gl): sanitizers over the MSM/NTT tests, the large NTT/H
# tests, every crossgroth-cuda benchmark up to 2^26, the prove matrix for cuda
# (chains 2^16/2^20/2^22), the wgpu G1 MSM at 2^22 on both field paths, the NTT
# variants. Each part has its own time limit so the call stays within ~8 minutes.
# The device tool returns only a few files, so everything ends up in one log,
# $OUT/all.txt (rewritten after each part, so a call cut short still returns it).
set -u
cd "$(dirname "$0")/../.."
logs=$(mktemp -d)
final=${OUT:-device-logs}
mkdir -p "$final"
collect() { (cd "$logs" && tail -n +1 ./*.txt > "$final/all.txt"); }
trap collect EXIT
part() {  # seconds, run.sh phases...
    local t=$1
    shift
    OUT=$logs timeout "$t" bash scripts/device/run.sh "$@" 2>&1 |
        grep -v "^Benchmarking\|Warming up\|Collecting\|Analyzing" >> "$logs/run.txt"
    collect
}
part 45 sanitize
CROSSGROTH_REQUIRE_CUDA=1 timeout 40 /tmp/crossgroth-bin/gpu --test-threads=1 --nocapture t32 t33 \
    > "$logs/ntt-large.txt" 2>&1
echo "rc=$?" >> "$logs/ntt-large.txt"
collect
BENCH_MAX_LOG=26 part 200 bench
MATRIX_GROUPS=prove MATRIX_MAX_LOG=22 MATRIX_FILTER='prove_from_assignment/cuda' part 110 matrix
WGPU_MSM_LOGS=22 part 50 wgpu-msm
TUNE_NTT="r2:2 r2x4 r4" TUNE_C="" part 45 tune
