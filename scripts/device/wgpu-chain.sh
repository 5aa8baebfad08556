#!/usr/bin/env bash
# The portable backend past one storage binding, on the GPU test machine (see
# shared/DEVICE.md): a squaring chain of 2^LOG rows (default 24, whose G2 bases,
# 3.2 GB, exceed Vulkan's 2 GiB binding and are held in chunks) with parameters
# generated on cuda, proved on cuda and on wgpu (Vulkan) with the same seed;
# the two proofs must be the same bytes and verify.
#
#   carry .device (crossgroth, xz) and .gl (the Vulkan loader, see DEVICE.md)
#   scripts/device/wgpu-chain.sh [LOG...]
#   WGPU_FLAGS=--wgpu-portable scripts/device/wgpu-chain.sh 24   (the portable u32
#       field code on wgpu, even where the adapter has SHADER_INT64)
#
# First, the pipeline cache: a 2^12 chain proved on wgpu by two fresh
# processes with one cache directory (the first compiles every pipeline, the
# second reads them), with the driver's own shader cache off so that only
# crossgroth's cache can help.
#
# Logs go to $OUT (or ./device-logs).
set -uo pipefail
[ $# -eq 0 ] && set -- 24
. "$(dirname "$0")/vulkan-env.sh"
work=/tmp/wgpu-chain
mkdir -p "$work"
step() { echo "== [$(date -u +%H:%M:%S)] $*" | tee -a "$out/wgpu-chain.log"; }
run() { /usr/bin/time -f "%e s wall, peak resident %M KiB" "$@" 2>&1 | tee -a "$out/wgpu-chain.log"; }
step "devices"
run "$cg" devices
export __GL_SHADER_DISK_CACHE=0
export CROSSGROTH_CACHE_DIR="$work/cache"
rm -rf "$CROSSGROTH_CACHE_DIR"
step "pipeline cache: setup chain:12 on cuda"
run "$cg" setup --circuit chain:12 --params "$work/12.params" --vk "$work/12.vk" --seed 7 --backend cuda
for k in cold warm; do
    step "pipeline cache: prove chain:12 on wgpu, fresh process, cache $k"
    CROSSGROTH_REQUIRE_WGPU=1 run "$cg" prove --circuit chain:12 --params "$work/12.params" --proof "$work/12-$k.proof" --backend wgpu --seed 1 --trust-params
done
ls -la "$CROSSGROTH_CACHE_DIR/wgpu-pipelines" 2>&1 | tee -a "$out/wgpu-chain.log"
cmp "$work/12-cold.proof" "$work/12-warm.proof" && echo "cold and warm proofs equal" | tee -a "$out/wgpu-chain.log"
one_size() {
    local log_n="$1" circuit="chain:$1"
    step "setup $circuit on cuda"
    run "$cg" setup --circuit "$circuit" --params "$work/$log_n-c.params" --vk "$work/$log_n-c.vk" --seed 7 --backend cuda || return 1
    step "prove $circuit on cuda, seed 1"
    run "$cg" prove --circuit "$circuit" --params "$work/$log_n-c.params" --proof "$work/$log_n-cuda.proof" --backend cuda --seed 1 --trust-params || return 1
    step "prove $circuit on wgpu (Vulkan), seed 1 ${WGPU_FLAGS:-}"
    # shellcheck disable=SC2086 # WGPU_FLAGS is a list of flags
    RUST_LOG=info CROSSGROTH_REQUIRE_WGPU=1 run "$cg" prove --circuit "$circuit" --params "$work/$log_n-c.params" --proof "$work/$log_n-wgpu.proof" --backend wgpu --seed 1 --trust-params ${WGPU_FLAGS:-} || return 1
    step "compare and verify"
    if cmp "$work/$log_n-cuda.proof" "$work/$log_n-wgpu.proof"; then
        echo "wgpu proof bytes equal cuda's" | tee -a "$out/wgpu-chain.log"
    else
        echo "wgpu proof bytes DIFFER from cuda's" | tee -a "$out/wgpu-chain.log"
        rc=1
    fi
    run "$cg" verify --vk "$work/$log_n-c.vk" --proof "$work/$log_n-wgpu.proof" || rc=1
    rm -f "$work/$log_n-c.params"
}
for log_n in "$@"; do
    one_size "$log_n" || rc=1
done
exit "${rc:-0}"
