#!/usr/bin/env bash
# What the portable backend must keep showing on a real GPU, on the GPU test
# machine (see shared/DEVICE.md): the cuda witness tests (a staged witness
# gives what an uploaded one gives), every 2 KiB Filecoin kind on wgpu
# (Vulkan) byte-identical to bellperson (filecoin/tests/kinds.rs, ignored
# tests included), then squaring chains of 2^LOG rows on wgpu's portable u32
# field code against cuda (scripts/device/wgpu-chain.sh with --wgpu-portable).
#
#   carry .device (crossgroth, gpu, kinds, xz) and .gl (the Vulkan loader)
#   scripts/device/portable.sh [LOG...]          (24 26)
#
# Logs go to $OUT (or ./device-logs).
set -uo pipefail
[ $# -eq 0 ] && set -- 24 26
here="$(dirname "$0")"
. "$here/unpack.sh"
. "$here/vulkan-env.sh"
rc=0
echo "== [$(date -u +%H:%M:%S)] cuda witness tests" | tee "$out/tests.log"
(cd backends/cuda && CROSSGROTH_REQUIRE_CUDA=1 timeout 120 "$bin/gpu" --test-threads=1 witness::) >> "$out/tests.log" 2>&1 || rc=1
grep -E "^test |test result" "$out/tests.log"
echo "== [$(date -u +%H:%M:%S)] 2 KiB kinds on wgpu (Vulkan) against bellperson" | tee "$out/kinds.log"
(cd filecoin && CROSSGROTH_REQUIRE_WGPU=1 timeout 300 "$bin/kinds" --include-ignored --test-threads=1 wgpu) >> "$out/kinds.log" 2>&1 || rc=1
grep -E "^test |test result|parameters:" "$out/kinds.log"
WGPU_FLAGS=--wgpu-portable "$here/wgpu-chain.sh" "$@" || rc=1
grep -E "^==|s wall|equal|DIFFER|MSM of|wgpu: " "$out/wgpu-chain.log" | tail -40
exit $rc
