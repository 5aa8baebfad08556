#!/usr/bin/env bash
# Run on the GPU test machine, from the repository root, after scripts/device/build.sh:
# every GPU test, the whole-proof comparison up to a 2^20 squaring chain, crosscheck,
# and the CUDA benchmarks. Logs go to $OUT (or ./device-logs).
set -uo pipefail
out="${OUT:-device-logs}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
export CROSSGROTH_REQUIRE_CUDA=1
status=0
./.device/crossgroth devices 2>&1 | tee "$out/devices.txt"
[ -x .device/gpu ] && { ./.device/gpu --test-threads=1 2>&1 | tee "$out/kernels.txt" || status=1; }
CROSSGROTH_GPU_PROOF_MAX_LOG="${MAX_LOG:-20}" ./.device/gpu_proofs --test-threads=1 --nocapture 2>&1 | tee "$out/proofs.txt" || status=1
./.device/crossgroth crosscheck --circuit sha256:512 2>&1 | tee "$out/crosscheck.txt" || status=1
if [ "${BENCH:-1}" = 1 ] && [ -x .device/cuda ]; then
    ./.device/cuda --bench 2>&1 | tee "$out/bench.txt" || status=1
fi
exit $status
