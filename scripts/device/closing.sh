#!/usr/bin/env bash
# The closing GPU runs of a change to the kernels or shaders, two calls of the
# device tool (carry .device and .gl), each within ~9 minutes:
#
#   scripts/device/closing.sh checks    every CUDA kernel test (on the sm_90
#       cubin, then on the PTX), memcheck and racecheck, the WGSL shader tests
#       (WGPU_TEST_LOG, default 16) on every path, the wgpu G1 MSM at 2^22 on
#       both field paths checked against blst,
#       whole proofs on cuda and both wgpu paths (SHA-256 512 B, chains to 2^20),
#       crosscheck
#   scripts/device/closing.sh quick     after a host-code change: kernel tests,
#       proofs to the 2^20 chain, G1 MSM 2^24 and the 2^20-chain proof
#   scripts/device/closing.sh benches   every crossgroth-cuda benchmark up to
#       2^26, the backends matrix without the cpu (G1 MSM, NTT and H at 2^20 and
#       2^22; cuda, wgpu, wgpu-u32 in one run) and proving the 2^16 and 2^20
#       chains on each GPU backend
#
# The device tool returns only a few files, so each call leaves one log,
# $OUT/<checks|benches>.txt (rewritten after each part, so a call cut short
# still returns what it did).
set -u
cd "$(dirname "$0")/../.."
what=${1:-}
logs=$(mktemp -d)
final=${OUT:-device-logs}
mkdir -p "$final"
collect() { (cd "$logs" && tail -n +1 ./*.txt > "$final/$what.txt"); }
trap collect EXIT
part() {  # seconds, run.sh phases...
    local t=$1
    shift
    OUT=$logs timeout "$t" bash scripts/device/run.sh "$@" 2>&1 |
        grep -v "^Benchmarking\|Warming up\|Collecting\|Analyzing" >> "$logs/run.txt"
    collect
}
gpu_only='(cuda|wgpu|wgpu-u32)'
case "$what" in
checks)
    part 120 kernels
    part 150 ptx
    part 90 sanitize
    WGPU_TEST_LOG=${WGPU_TEST_LOG:-16} part 90 shaders
    WGPU_MSM_LOGS=22 part 60 wgpu-msm
    MAX_LOG=20 part 180 proofs
    ;;
benches)
    BENCH_MAX_LOG=26 part 220 bench
    MATRIX_GROUPS=g1_msm,ntt_and_h MATRIX_MAX_LOG=22 \
        MATRIX_FILTER="^(g1_msm/$gpu_only/uniform/2[02]|ntt/$gpu_only/2[02]|h/$gpu_only/2[02])\$" \
        part 170 matrix
    MATRIX_GROUPS=prove MATRIX_MAX_LOG=20 MATRIX_FILTER="prove_from_assignment/$gpu_only/" \
        part 150 matrix
    ;;
quick)
    # one call after a change of the host code only: the kernel tests on the
    # cubin, whole proofs on every GPU backend to the 2^20 chain, the G1 MSM of
    # 2^24 plain and on a table, proving the 2^20 chain (tables and plain)
    part 120 kernels
    MAX_LOG=20 part 200 proofs
    part 110 msm24
    MATRIX_GROUPS=prove MATRIX_MAX_LOG=20 MATRIX_FILTER="prove_from_assignment/cuda(-plain)?/chain:20" \
        part 120 matrix
    ;;
*)
    echo "usage: scripts/device/closing.sh checks|benches|quick" >&2
    exit 2
    ;;
esac
