#!/usr/bin/env bash
# Whether Fq products could run partly on the FP64 pipe, on the GPU test
# machine (see shared/DEVICE.md): the probe's products on both pipes against
# blst (crossgroth-cuda tests/gpu field::), then the fq_pipes bench (Fq
# products on the multiplier's pipe, FP64 limb products alone and beside them,
# products moved to the FP64 pipe), with the SM clock sampled meanwhile.
#
#   scripts/device/build.sh (or the gpu test and cuda bench binaries in .device)
#   carry .device; scripts/device/pipes.sh
#
# Logs go to $OUT (or ./device-logs): pipes-tests.log, fq_pipes.log, clocks.csv.
set -uo pipefail
. "$(dirname "$0")/unpack.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$out/clocks.csv"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 500 >> "$out/clocks.csv" 2>/dev/null &
clocks=$!
trap 'kill $clocks 2>/dev/null' EXIT
rc=0
CROSSGROTH_REQUIRE_CUDA=1 "$bin/gpu" --test-threads=1 field:: --nocapture 2>&1 | tee "$out/pipes-tests.log" || rc=1
"$bin/cuda" --bench fq_pipes 2>&1 | tee "$out/fq_pipes.log" | grep -E '^fq_pipes|time:|thrpt:|device:' || rc=1
exit $rc
