#!/usr/bin/env bash
# Run on the GPU test machine, from the repository root, after scripts/device/build.sh:
# every GPU test, the whole-proof comparison up to a 2^20 squaring chain, crosscheck,
# and the benchmarks (BENCH=0 skips them). Logs go to $OUT (or ./device-logs).
# Carry .device (and nothing larger) in the call.
set -uo pipefail
out="${OUT:-device-logs}"
mkdir -p "$out"
bin=/tmp/crossgroth-bin
mkdir -p "$bin"
for f in .device/*.xz; do xz -dc "$f" > "$bin/$(basename "$f" .xz)"; done
chmod +x "$bin"/*
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
export CROSSGROTH_REQUIRE_CUDA=1
status=0
"$bin/crossgroth" devices 2>&1 | tee "$out/devices.txt"
[ -x "$bin/gpu" ] && { "$bin/gpu" --test-threads=1 2>&1 | tee "$out/kernels.txt" || status=1; }
CROSSGROTH_GPU_PROOF_MAX_LOG="${MAX_LOG:-20}" "$bin/gpu_proofs" --test-threads=1 --nocapture 2>&1 | tee "$out/proofs.txt" || status=1
"$bin/crossgroth" crosscheck --circuit sha256:512 2>&1 | tee "$out/crosscheck.txt" || status=1
if [ "${BENCH:-1}" = 1 ] && [ -x "$bin/cuda" ]; then
    "$bin/cuda" --bench 2>&1 | tee "$out/bench.txt" || status=1
fi
# Every backend on identical inputs (criterion; GPU timed with device events).
if [ "${BENCH:-1}" = 1 ] && [ -x "$bin/backends" ]; then
    CROSSGROTH_BENCH_MAX_LOG="${BENCH_MAX_LOG:-24}" "$bin/backends" --bench 2>&1 | tee "$out/backends.txt" || status=1
fi
exit $status
