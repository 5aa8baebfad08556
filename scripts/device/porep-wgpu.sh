#!/usr/bin/env bash
# A Filecoin PoRep BENCHMARK partition on the portable backend, on the GPU
# test machine (see shared/DEVICE.md): one `crossgroth filecoin bench-porep`
# process records the shape and generates the parameters (on cuda) once,
# proves JOBS one-partition jobs on cuda, then the same jobs on wgpu (Vulkan)
# with --compare-backend, and fails unless the bytes are equal (BENCHMARK
# proofs are never valid, so equal bytes are the check). The wgpu engine's
# first job pays the pipelines' compilation (a fresh cache directory).
#
#   carry .device (crossgroth, xz) and .gl (the Vulkan loader, see DEVICE.md)
#   scripts/device/porep-wgpu.sh [SIZE [JOBS [SEED [BUDGET [TIMEOUT [SETUP]]]]]]   (32GiB 1 5 100GiB 560 cuda)
#
# SETUP: the backend that generates the parameters (cuda, or wgpu to time
# parameter generation on the portable backend; the same bytes either way).
#
# EXTRA_FLAGS: more options for bench-porep (e.g. --cuda-profile for the
# cuda kernels' profile of each H and MSM).
#
# Logs and the cuda proofs go to $OUT (or ./device-logs).
set -uo pipefail
size="${1:-32GiB}" jobs="${2:-1}" seed="${3:-5}" budget="${4:-100GiB}" limit="${5:-560}" setup="${6:-cuda}"
. "$(dirname "$0")/vulkan-env.sh"
work=/tmp/porep-wgpu
rm -rf "$work"
mkdir -p "$work"
export CROSSGROTH_CACHE_DIR="$work/cache"
nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv -l 2 > "$out/gpu-memory.csv" 2>/dev/null &
smi=$!
trap 'kill $smi 2>/dev/null' EXIT
echo "== [$(date -u +%H:%M:%S)] bench-porep $size, $jobs jobs, seed $seed: cuda, then wgpu" | tee -a "$out/porep-wgpu.log"
RUST_LOG=info timeout "$limit" /usr/bin/time -v "$cg" filecoin bench-porep --sector-size "$size" \
    --partitions 1 --jobs "$jobs" --backend cuda --compare-backend wgpu --setup-backend "$setup" --seed "$seed" \
    --memory-budget "$budget" ${EXTRA_FLAGS:-} --proofs "$out/cuda-seed$seed.proofs" 2>&1 | tee -a "$out/porep-wgpu.log"
