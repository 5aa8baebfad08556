#!/usr/bin/env bash
# Run crossgroth-cuda's GPU tests (and benchmarks, if built) on a CUDA machine.
#
# On the development machine (Rust toolchain, no GPU needed):
#   scripts/cuda/device-test.sh --build     # builds and copies stripped binaries to .device/
# On the GPU machine (no Rust toolchain needed), from the repository root:
#   scripts/cuda/device-test.sh [--bench] [--sanitize] [LOGDIR]
# Logs go to LOGDIR (default: $OUT if set, else ./device-logs). CROSSGROTH_REQUIRE_CUDA=1
# is set so a missing device fails instead of skipping.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"

if [[ "${1:-}" == "--build" ]]; then
    set -e
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
    mkdir -p .device
    bin=$(cargo test --release -p crossgroth-cuda --test gpu --no-run --message-format=json 2>/dev/null |
        python3 -c 'import sys,json
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="gpu": print(m["executable"])' | tail -1)
    cp "$bin" .device/gpu-tests && strip .device/gpu-tests
    if [[ "${2:-}" == "--bench" ]]; then
        bench=$(cargo bench -p crossgroth-cuda --bench cuda --no-run --message-format=json 2>/dev/null |
            python3 -c 'import sys,json
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="cuda": print(m["executable"])' | tail -1)
        cp "$bench" .device/cuda-bench && strip .device/cuda-bench
    fi
    ls -la .device/
    exit 0
fi

bench=0; sanitize=0
while [[ "${1:-}" == --* ]]; do
    case "$1" in
        --bench) bench=1 ;;
        --sanitize) sanitize=1 ;;
    esac
    shift
done
logdir="${1:-${OUT:-$repo/device-logs}}"
mkdir -p "$logdir"
export CROSSGROTH_REQUIRE_CUDA=1
rc=0
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv 2>&1 | tee "$logdir/nvidia-smi.txt"
echo "== gpu tests ($(date -u +%FT%TZ))"
./.device/gpu-tests --test-threads=1 --nocapture 2>&1 | tee "$logdir/gpu-tests.log" || rc=1
if [[ $sanitize == 1 ]]; then
    echo "== compute-sanitizer memcheck (selected tests)"
    /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 20 \
        ./.device/gpu-tests --test-threads=1 t11 t12 t20 t29 t31 2>&1 | tail -40 | tee "$logdir/memcheck.log" || rc=1
fi
if [[ $bench == 1 && -x .device/cuda-bench ]]; then
    echo "== benchmarks"
    ./.device/cuda-bench --bench 2>&1 | tee "$logdir/bench.log" || rc=1
fi
echo "== device-test.sh done, rc=$rc"
exit $rc
