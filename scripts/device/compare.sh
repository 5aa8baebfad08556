#!/usr/bin/env bash
# Same-call speed comparison of two builds on the GPU machine: the G1 MSM of
# 2^24 (plain and on a table of precomputed copies) and proving the 2^20
# squaring chain from its assignment, each measured on the build in .device/
# and on an earlier build in .device-old/ (both made by scripts/device/build.sh;
# move the earlier one's folder to .device-old), alternating, in one call of
# about eight minutes (carry .device and .device-old). One log: $OUT/compare.txt.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-device-logs}
mkdir -p "$out"
log="$out/compare.txt"
: > "$log"
unpack() {  # folder, destination
    mkdir -p "$2"
    for f in "$1"/*.xz; do xz -dc "$f" > "$2/$(basename "$f" .xz)"; done
    chmod +x "$2"/*
}
unpack .device /tmp/new
unpack .device-old /tmp/old
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >> "$log"
quiet() { grep -v "^Benchmarking\|Warming up\|Collecting\|Analyzing\|XDG_RUNTIME"; }
run() {  # label, seconds, command...
    local label=$1 t=$2
    shift 2
    echo "== $label ($(date -u +%T))" >> "$log"
    timeout "$t" "$@" 2>&1 | quiet >> "$log"
}
export CROSSGROTH_REQUIRE_CUDA=1 CROSSGROTH_BENCH_MAX_LOG=24
msm='^g1_msm(_precomputed)?/24$'
crit="--warm-up-time 1 --measurement-time 4"
for round in 1 2; do
    run "new cuda MSM, round $round" 80 /tmp/new/cuda --bench $crit "$msm"
    run "old cuda MSM, round $round" 80 /tmp/old/cuda --bench $crit "$msm"
done
export CROSSGROTH_BENCH_GROUPS=prove CROSSGROTH_BENCH_MAX_LOG=20
run "new prove chain:20" 110 /tmp/new/backends --bench $crit 'prove_from_assignment/cuda(-plain)?/chain:20'
run "old prove chain:20" 110 /tmp/old/backends --bench $crit 'prove_from_assignment/cuda/chain:20'
echo "== done ($(date -u +%T))" >> "$log"
