#!/usr/bin/env bash
# A Filecoin PoRep BENCHMARK partition on the portable backend, on the GPU
# test machine (see shared/DEVICE.md): `crossgroth filecoin bench-porep` of
# JOBS one-partition jobs on wgpu (Vulkan), then on cuda, with one --seed and
# the parameters generated on cuda; the proofs of the two backends must be the
# same bytes (BENCHMARK proofs are never valid, so equal bytes are the check).
# The wgpu run's first job pays the pipelines' compilation (a fresh cache
# directory); the later ones show its steady stage times.
#
#   carry .device (crossgroth, xz) and .gl (the Vulkan loader, see DEVICE.md)
#   scripts/device/porep-wgpu.sh [SIZE [JOBS [SEED [BUDGET]]]]    (32GiB 2 5 100GiB)
#
# Logs go to $OUT (or ./device-logs).
set -uo pipefail
size="${1:-32GiB}" jobs="${2:-2}" seed="${3:-5}" budget="${4:-100GiB}"
out="${OUT:-device-logs}"
mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=/tmp/crossgroth-bin
mkdir -p "$bin"
[ -x "$bin/crossgroth" ] || { xz -dc .device/crossgroth.xz > "$bin/crossgroth" && chmod +x "$bin/crossgroth"; }
cg="$bin/crossgroth"
work=/tmp/porep-wgpu
rm -rf "$work"
mkdir -p "$work"
export CROSSGROTH_CACHE_DIR="$work/cache"
nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv -l 2 > "$out/gpu-memory.csv" 2>/dev/null &
smi=$!
trap 'kill $smi 2>/dev/null' EXIT
rc=0
# the wgpu run first (the one at risk), each bounded so that the logs come back
for run in wgpu:380 cuda:190; do
    backend="${run%:*}"
    echo "== [$(date -u +%H:%M:%S)] bench-porep $size on $backend, $jobs jobs, seed $seed" | tee -a "$out/porep-wgpu.log"
    RUST_LOG=info timeout "${run#*:}" /usr/bin/time -v "$cg" filecoin bench-porep --sector-size "$size" \
        --partitions 1 --jobs "$jobs" --backend "$backend" --setup-backend cuda --seed "$seed" \
        --memory-budget "$budget" --proofs "$work/$backend.proofs" 2>&1 | tee -a "$out/porep-wgpu.log" || rc=1
done
if cmp "$work/wgpu.proofs" "$work/cuda.proofs"; then
    echo "wgpu proof bytes equal cuda's ($(stat -c %s "$work/cuda.proofs") bytes)" | tee -a "$out/porep-wgpu.log"
else
    echo "wgpu proof bytes DIFFER from cuda's" | tee -a "$out/porep-wgpu.log"
    rc=1
fi
exit $rc
