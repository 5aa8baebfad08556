#!/usr/bin/env bash
# Runs crossgroth-wgpu's GPU tests and timed large sizes on a Vulkan GPU
# machine (the H200 test machine: see shared/DEVICE.md), from a prebuilt,
# stripped test binary.
#
# On the development machine, from the repository root:
#   scripts/wgpu/device-test.sh build      # builds .device/crossgroth-wgpu-shaders
#   mkdir -p .gl && cp ../shared/gl/*.deb .gl/   # Vulkan loader (.gl, .device are git-ignored)
# On the GPU machine (carry .device and .gl), from the repository root:
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
#   scripts/wgpu/device-test.sh run [logdir]
#
# Environment: CROSSGROTH_WGPU_TEST_LOG (test sizes, default here 14),
# CROSSGROTH_WGPU_BENCH_LOG (timed sizes, default 20), CROSSGROTH_WGPU_ADAPTER,
# WGPU_TEST_TIMEOUT / WGPU_BENCH_TIMEOUT (seconds, default 150 / 120).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=.device/crossgroth-wgpu-shaders

case "${1:-run}" in
build)
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
    out=$(cargo test --release -p crossgroth-wgpu --test shaders --no-run --message-format=json 2>/dev/null |
        grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4)
    [ -n "$out" ] || { echo "build failed"; exit 1; }
    mkdir -p .device
    cp "$out" "$BIN" && strip "$BIN" && ls -l "$BIN"
    ;;
run)
    LOG="${2:-${OUT:-.}}"
    mkdir -p "$LOG"
    [ -x "$BIN" ] || { echo "missing $BIN: run '$0 build' first"; exit 1; }
    date -u
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    export CROSSGROTH_REQUIRE_WGPU=1
    export CROSSGROTH_WGPU_TEST_LOG="${CROSSGROTH_WGPU_TEST_LOG:-14}"
    export CROSSGROTH_WGPU_BENCH_LOG="${CROSSGROTH_WGPU_BENCH_LOG:-20}"
    rc=0
    echo "== tests (sizes up to 2^$CROSSGROTH_WGPU_TEST_LOG)"
    timeout "${WGPU_TEST_TIMEOUT:-150}" "$BIN" --test-threads=1 --nocapture 2>&1 | grep -v XDG_RUNTIME | tee "$LOG/wgpu-tests.log" || rc=1
    echo "== timed large sizes (2^$CROSSGROTH_WGPU_BENCH_LOG)"
    timeout "${WGPU_BENCH_TIMEOUT:-120}" "$BIN" --test-threads=1 --nocapture --ignored large_sizes_timed 2>&1 | grep -v XDG_RUNTIME | tee "$LOG/wgpu-bench.log" || rc=1
    grep -h "^bench \|wgpu backend:\|test result" "$LOG"/wgpu-*.log
    date -u
    exit $rc
    ;;
*)
    echo "usage: $0 build|run [logdir]"; exit 2 ;;
esac
