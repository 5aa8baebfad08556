#!/usr/bin/env bash
# Build, on a development machine, everything the GPU test machine runs, into the
# ignored folder .device/ (send it along as `carry: [".device"]`). The GPU machine
# has no Rust toolchain; binaries built on Debian 12 run there. They are stored
# xz-compressed; scripts/device/run.sh unpacks them there.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .device
cargo build --release --bin crossgroth
cargo test --release --no-run --test gpu_proofs -p crossgroth 2>&1 | tee /tmp/crossgroth-device-build.log
cargo test --release --no-run --test gpu -p crossgroth-cuda 2>&1 | tee -a /tmp/crossgroth-device-build.log
cargo bench --no-run -p crossgroth-cuda 2>&1 | tee -a /tmp/crossgroth-device-build.log || true
cargo bench --no-run --bench backends -p crossgroth 2>&1 | tee -a /tmp/crossgroth-device-build.log
pick() { grep -o "target/release/deps/$1-[0-9a-f]*" /tmp/crossgroth-device-build.log | tail -1; }
cp target/release/crossgroth .device/crossgroth
for t in gpu_proofs gpu cuda backends; do
    f=$(pick "$t") && [ -n "$f" ] && cp "$f" ".device/$t"
done
strip .device/* 2>/dev/null || true
# Four 11-13 MB binaries pass the 64 MiB a GPU-machine call may carry: compress.
for f in .device/crossgroth .device/gpu_proofs .device/gpu .device/cuda .device/backends; do
    [ -f "$f" ] && xz -T2 -6 -f "$f"
done
ls -la .device
