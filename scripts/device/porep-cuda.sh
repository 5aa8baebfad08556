#!/usr/bin/env bash
# A Filecoin PoRep BENCHMARK partition on cuda alone, on the GPU test machine
# (see shared/DEVICE.md), with the kernels' profile of each H and MSM: one
# `crossgroth filecoin bench-porep` process records the shape, generates the
# parameters and proves JOBS one-partition jobs. With EXPECT, the proofs must
# equal that file's byte for byte (BENCHMARK proofs are never valid; a seed's
# proofs are the same on every run, so an earlier run's file is the check of a
# kernel change on the real circuit).
#
#   carry .device (crossgroth, xz)
#   EXPECT=benches/results/<run>/cuda-seed5.proofs \
#     scripts/device/porep-cuda.sh [SIZE [JOBS [SEED [BUDGET [TIMEOUT]]]]]   (32GiB 4 5 100GiB 480)
#
# EXTRA_FLAGS: more options for bench-porep. Logs and the proofs go to $OUT
# (or ./device-logs).
set -uo pipefail
size="${1:-32GiB}" jobs="${2:-4}" seed="${3:-5}" budget="${4:-100GiB}" limit="${5:-480}"
. "$(dirname "$0")/unpack.sh"
sample_gpu_memory
export CROSSGROTH_CACHE_DIR=/tmp/porep-cuda-cache
log="$out/porep-cuda.log"
echo "== [$(date -u +%H:%M:%S)] bench-porep $size, $jobs jobs, seed $seed: cuda" | tee -a "$log"
RUST_LOG=info timeout "$limit" /usr/bin/time -v "$bin/crossgroth" filecoin bench-porep --sector-size "$size" \
    --partitions 1 --jobs "$jobs" --backend cuda --seed "$seed" --memory-budget "$budget" --cuda-profile \
    ${EXTRA_FLAGS:-} --proofs "$out/cuda-seed$seed.proofs" 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
if [ -n "${EXPECT:-}" ]; then
    # A run of fewer jobs than EXPECT holds is checked against EXPECT's first
    # proofs (a seed's proofs come in the same order on every run).
    got=$(stat -c %s "$out/cuda-seed$seed.proofs" 2>/dev/null || echo 0)
    want=$(stat -c %s "$EXPECT")
    if [ "$got" -gt 0 ] && [ "$got" -le "$want" ] && cmp -n "$got" "$out/cuda-seed$seed.proofs" "$EXPECT"; then
        echo "== the $((got / 192)) proofs equal the first of $EXPECT byte for byte" | tee -a "$log"
    else
        echo "!! the proofs ($got bytes) differ from $EXPECT ($want bytes)" | tee -a "$log"
        rc=1
    fi
fi
exit "$rc"
