#!/usr/bin/env bash
# Build, on a development machine, everything the GPU test machine runs, into the
# ignored folder .device/ (send it along as `carry: [".device"]`). The GPU machine
# has no Rust toolchain; binaries built on Debian 12 run there. They are stored
# xz-compressed; scripts/device/run.sh unpacks them there.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .device
log=/tmp/crossgroth-device-build.log
: > "$log"
cargo build --release --bin crossgroth
cargo test --release --no-run --test gpu_proofs -p crossgroth 2>&1 | tee -a "$log"
cargo test --release --no-run --test gpu_fault -p crossgroth 2>&1 | tee -a "$log"
cargo test --release --no-run --test gpu -p crossgroth-cuda 2>&1 | tee -a "$log"
cargo test --release --no-run --test fault -p crossgroth-cuda 2>&1 | tee -a "$log"
cargo test --release --no-run --test shaders -p crossgroth-wgpu 2>&1 | tee -a "$log"
cargo test --release --no-run --test perf -p crossgroth-wgpu 2>&1 | tee -a "$log"
cargo test --release --no-run --test kinds -p crossgroth-filecoin 2>&1 | tee -a "$log"
cargo bench --no-run -p crossgroth-cuda 2>&1 | tee -a "$log"
cargo bench --no-run --bench backends -p crossgroth 2>&1 | tee -a "$log"
pick() { grep -o "target/release/deps/$1-[0-9a-f]*" "$log" | tail -1; }
rm -f .device/*
cp target/release/crossgroth .device/crossgroth
for t in gpu_proofs gpu_fault gpu fault shaders perf kinds cuda backends; do
    f=$(pick "$t") && [ -n "$f" ] && cp "$f" ".device/$t"
done
strip .device/*
# Six 11-20 MB binaries would pass the 64 MiB a GPU-machine call may carry: compress.
xz -T2 -6 -f .device/*
ls -la .device
