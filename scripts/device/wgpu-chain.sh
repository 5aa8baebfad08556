#!/usr/bin/env bash
# The portable backend past one storage binding, on the GPU test machine (see
# shared/DEVICE.md): a squaring chain of 2^LOG rows (default 24, whose G2 bases,
# 3.2 GB, exceed Vulkan's 2 GiB binding and are held in chunks) with parameters
# generated on cuda, proved on cuda and on wgpu (Vulkan) with the same seed;
# the two proofs must be the same bytes and verify.
#
#   carry .device (crossgroth, xz) and .gl (the Vulkan loader, see DEVICE.md)
#   scripts/device/wgpu-chain.sh [LOG]
#
# Logs go to $OUT (or ./device-logs).
set -uo pipefail
log_n="${1:-24}"
out="${OUT:-device-logs}"
mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=/tmp/crossgroth-bin
mkdir -p "$bin"
[ -x "$bin/crossgroth" ] || { xz -dc .device/crossgroth.xz > "$bin/crossgroth" && chmod +x "$bin/crossgroth"; }
cg="$bin/crossgroth"
work=/tmp/wgpu-chain
mkdir -p "$work"
circuit="chain:$log_n"
step() { echo "== [$(date -u +%H:%M:%S)] $*" | tee -a "$out/wgpu-chain.log"; }
run() { /usr/bin/time -f "%e s wall, peak resident %M KiB" "$@" 2>&1 | tee -a "$out/wgpu-chain.log"; }
step "devices"
run "$cg" devices
step "setup $circuit on cuda"
run "$cg" setup --circuit "$circuit" --params "$work/c.params" --vk "$work/c.vk" --seed 7 --backend cuda || exit 1
step "prove $circuit on cuda, seed 1"
run "$cg" prove --circuit "$circuit" --params "$work/c.params" --proof "$work/cuda.proof" --backend cuda --seed 1 --trust-params || exit 1
step "prove $circuit on wgpu (Vulkan), seed 1"
CROSSGROTH_REQUIRE_WGPU=1 run "$cg" prove --circuit "$circuit" --params "$work/c.params" --proof "$work/wgpu.proof" --backend wgpu --seed 1 --trust-params
step "compare and verify"
if cmp "$work/cuda.proof" "$work/wgpu.proof"; then
    echo "wgpu proof bytes equal cuda's" | tee -a "$out/wgpu-chain.log"
else
    echo "wgpu proof bytes DIFFER from cuda's" | tee -a "$out/wgpu-chain.log"
    rc=1
fi
run "$cg" verify --vk "$work/c.vk" --proof "$work/wgpu.proof"
exit "${rc:-0}"
