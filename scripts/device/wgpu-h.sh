#!/usr/bin/env bash
# H kept on the device against H read back, on the GPU's Vulkan driver: the
# wgpu crate's `h_msm_timed` at 2^LOG (H in chunks from 2^26 on an 80 GB
# card) and its chunked-MSM and H tests. Needs .device/perf.xz and
# .device/shaders.xz (the crate's test binaries, `cargo test --release -p
# crossgroth-wgpu --no-run`) and .gl. Usage: wgpu-h.sh LOG [REPS]
set -uo pipefail
. "$(dirname "$0")/vulkan-env.sh"
log="${1:-26}"
export CROSSGROTH_PERF_H_LOG="$log" CROSSGROTH_PERF_MSM_REPS="${2:-2}"
export CROSSGROTH_REQUIRE_WGPU=1 RUST_LOG=info
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
"$bin/perf" --ignored --nocapture h_msm_timed 2>&1 | grep -v XDG_RUNTIME | tee "$out/h-msm-$log.log"
"$bin/shaders" --nocapture chunked 2>&1 | grep -v -e XDG_RUNTIME -e '^TIMES' | tee "$out/chunked.log"
