#!/usr/bin/env bash
# The next partition's witness sent to the device while the current one's
# MSMs run (EngineConfig::stage_witnesses), on the GPU test machine (see
# shared/DEVICE.md): the cuda witness tests (a staged witness gives what an
# uploaded one gives) and witness-only engine proofs against the cpu
# backend's, then one bench-porep process that proves JOBS 32 GiB C2s with
# staging, then the same jobs on a second cuda engine without it, and fails
# unless the bytes are equal.
#
#   carry .device (crossgroth, gpu, gpu_proofs, xz)
#   scripts/device/staging.sh [JOBS [BUDGET [TIMEOUT]]]     (3 100GiB 480)
#
# Logs go to $OUT (or ./device-logs).
set -uo pipefail
jobs="${1:-3}" budget="${2:-100GiB}" limit="${3:-480}"
. "$(dirname "$0")/unpack.sh"
sample_gpu_memory
rc=0
echo "== [$(date -u +%H:%M:%S)] tests" | tee "$out/tests.log"
(cd backends/cuda && CROSSGROTH_REQUIRE_CUDA=1 timeout 120 "$bin/gpu" --test-threads=1 witness::) >> "$out/tests.log" 2>&1 || rc=1
CROSSGROTH_REQUIRE_CUDA=1 timeout 120 "$bin/gpu_proofs" --test-threads=1 cuda_witness_only >> "$out/tests.log" 2>&1 || rc=1
grep -E "^test |test result" "$out/tests.log"
echo "== [$(date -u +%H:%M:%S)] bench-porep 32GiB, $jobs C2s with staging, then without" | tee "$out/staging.log"
RUST_LOG=info timeout "$limit" /usr/bin/time -v "$bin/crossgroth" filecoin bench-porep --sector-size 32GiB \
    --jobs "$jobs" --backend cuda --compare-backend cuda --compare-without-staging \
    --memory-budget "$budget" >> "$out/staging.log" 2>&1 || rc=1
grep -vE "crossgroth-stage|INFO" "$out/staging.log" | tail -80
exit $rc
