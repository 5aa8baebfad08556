#!/usr/bin/env bash
# Runs on the GPU test machine (see shared/DEVICE.md), from the repository root,
# after scripts/device/build.sh on the development machine; carry .device and .gl.
#
#   scripts/device/run.sh <phase>... (check kernels ptx shaders proofs sanitize bench matrix tune wgpu-msm msm unpack all)
#
#   check     kernels, shaders, and the NTT / MSM benchmarks of crossgroth-cuda at
#             2^20..2^24
#   kernels   crossgroth-cuda's kernel tests (every kernel against the CPU), and
#             what a sticky launch error leaves (tests/fault.rs, tests/gpu_fault.rs)
#   ptx       the kernel tests again on the embedded PTX (CROSSGROTH_CUDA_NO_CUBIN=1,
#             JIT-compiled: what GPUs other than Hopper run; the sm_90 cubin is
#             built with other defines, see scripts/cuda/build-ptx.sh)
#   shaders   the WGSL shader tests at sizes up to WGPU_TEST_LOG (default 22)
#             over Vulkan, every field path
#   proofs    whole proofs on cuda and wgpu byte-identical to the cpu backend
#             (SHA-256 512 B, squaring chains up to 2^20), crosscheck
#   sanitize  the CUDA kernel tests under compute-sanitizer memcheck and racecheck
#   bench     every crossgroth-cuda benchmark, G1 MSM 2^26 resident and streamed
#   matrix    benches/backends.rs: every backend on identical inputs
#             (MATRIX_GROUPS=g1_msm,ntt_and_h,prove, MATRIX_FILTER, MATRIX_MAX_LOG)
#   tune      a choice fixed by measurement: G1 MSM window sizes at 2^24 with
#             the per-phase profile (CROSSGROTH_CUDA_MSM_C; TUNE_C picks the
#             sizes, default 18 20)
#   wgpu-msm  the wgpu G1 MSM on both field paths at WGPU_MSM_LOGS (default
#             16,20,22), checked against blst (backends/wgpu/tests/perf.rs)
#   msm24     the G1 MSM of 2^24, plain and on a table of precomputed copies
#   msm       the crossgroth-cuda MSM benchmarks matching MSM_FILTER (default
#             'g1_msm(_precomputed)?/2[024]$') with CROSSGROTH_CUDA_PROFILE=1,
#             one profile line kept per eight (set other CROSSGROTH_CUDA_* knobs
#             in the environment to compare)
#   filecoin  every Filecoin kind at 2 KiB: the CLI on cpu, cuda and wgpu
#             (test-sector, then each kind's command; times in filecoin-cli.txt),
#             then tests/kinds.rs of crossgroth-filecoin with its ignored tests:
#             cuda and wgpu proofs byte-identical to bellperson, verified
#   unpack    only unpack the binaries into /tmp/crossgroth-bin (for commands
#             of your own after it)
#   all       check proofs sanitize bench matrix (more than one 10-minute call;
#             split it)
#
# With no argument it prints this and exits: every phase costs device time.
# scripts/device/closing.sh runs a fitting selection in two calls, one log file each.
# Logs go to $OUT (or ./device-logs).
set -uo pipefail
if [ $# -eq 0 ]; then
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
fi
. "$(dirname "$0")/unpack.sh"
# Vulkan loader for wgpu (the NVIDIA driver ships the ICD, not the loader)
if [ -d .gl ]; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export CROSSGROTH_REQUIRE_CUDA=1
phases=("$@")
[ "${phases[*]}" = unpack ] && exit 0
[ "${phases[*]}" = all ] && phases=(check proofs sanitize bench matrix)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
"$bin/crossgroth" devices 2>&1 | tee "$out/devices.txt"
status=0
step() {  # name, command...: run, log to $out/<name>.txt, remember failure
    local name=$1; shift
    echo "== $name ($(date -u +%T))"
    "$@" 2>&1 | grep -v XDG_RUNTIME | tee "$out/$name.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "!! $name failed"; status=1; }
}
sanitize() {  # tool: the kernel tests that reach every kernel, at small sizes
    /usr/local/cuda/bin/compute-sanitizer --tool "$1" --print-limit 20 \
        "$bin/gpu" --test-threads=1 msm_g1_edge_cases msm_g1_density msm_streamed \
            msm_g1_precomputed msm_g1_in_passes fq_inverse msm_g2 ntt_matches_host \
            compute_h_matches_host
}
for phase in "${phases[@]}"; do
    case "$phase" in
    check | kernels)
        step kernels "$bin/gpu" --test-threads=1 --nocapture
        # each in its own process: a sticky launch error spoils the device for it
        step fault "$bin/fault" --nocapture
        step fault-prover "$bin/gpu_fault" --nocapture
        ;;&
    ptx)
        CROSSGROTH_CUDA_NO_CUBIN=1 step kernels-ptx "$bin/gpu" --test-threads=1 --nocapture
        ;;
    check | shaders)
        CROSSGROTH_REQUIRE_WGPU=1 CROSSGROTH_WGPU_TEST_LOG="${WGPU_TEST_LOG:-22}" \
            step shaders "$bin/shaders" --test-threads=1 --nocapture
        ;;&
    check)
        step cuda-bench-quick "$bin/cuda" --bench --warm-up-time 1 --measurement-time 3 'g1_msm/2[04]|ntt|compute_h/20'
        ;;
    kernels | shaders) ;;
    proofs)
        CROSSGROTH_REQUIRE_WGPU=1 CROSSGROTH_GPU_PROOF_MAX_LOG="${MAX_LOG:-20}" \
            step proofs "$bin/gpu_proofs" --test-threads=1 --nocapture
        step crosscheck "$bin/crossgroth" crosscheck --circuit sha256:512
        ;;
    sanitize)
        step memcheck sanitize memcheck
        step racecheck sanitize racecheck
        ;;
    bench)
        CROSSGROTH_BENCH_MAX_LOG="${BENCH_MAX_LOG:-26}" step cuda-bench "$bin/cuda" --bench
        ;;
    matrix)
        CROSSGROTH_BENCH_MAX_LOG="${MATRIX_MAX_LOG:-24}" \
            CROSSGROTH_BENCH_GROUPS="${MATRIX_GROUPS:-g1_msm,ntt_and_h,prove}" \
            step backends "$bin/backends" --bench --warm-up-time 1 --measurement-time 3 ${MATRIX_FILTER:-}
        ;;
    wgpu-msm)
        CROSSGROTH_REQUIRE_WGPU=1 CROSSGROTH_PERF_MSM_LOGS="${WGPU_MSM_LOGS:-16,20,22}" \
            step wgpu-msm "$bin/perf" --ignored --nocapture --test-threads=1 msm_g1_timed
        ;;
    tune)
        for c in ${TUNE_C-18 20}; do
            CROSSGROTH_CUDA_MSM_C=$c CROSSGROTH_CUDA_PROFILE=1 CROSSGROTH_BENCH_MAX_LOG=24 \
                step "tune-msm-c$c" "$bin/cuda" --bench --warm-up-time 1 --measurement-time 3 'g1_msm/24'
        done
        ;;
    msm24)
        CROSSGROTH_BENCH_MAX_LOG=24 step msm24 "$bin/cuda" --bench --warm-up-time 1 \
            --measurement-time 4 'g1_msm(_precomputed)?/24$'
        ;;
    msm)
        echo "== msm ($(date -u +%T))"
        CROSSGROTH_CUDA_PROFILE=1 "$bin/cuda" --bench --warm-up-time 1 --measurement-time 3 \
            "${MSM_FILTER:-g1_msm(_precomputed)?/2[024]\$}" 2>&1 |
            awk '/ profile / { if (n++ % 8 != 1) next } !/^(Benchmarking|Warming|Collecting|Analyzing)/' |
            tee "$out/msm.txt"
        [ "${PIPESTATUS[0]}" = 0 ] || { echo "!! msm failed"; status=1; }
        ;;
    filecoin)
        step filecoin-cli bash scripts/device/filecoin-cli.sh "$bin/crossgroth" /tmp/fc-sector
        CROSSGROTH_REQUIRE_WGPU=1 CROSSGROTH_TEST_FILECOIN_PARAMS=/tmp/fc-sector/params \
            step filecoin-kinds "$bin/kinds" --include-ignored --test-threads=1 --nocapture
        ;;
    *) echo "unknown phase $phase"; status=2 ;;
    esac
done
echo "== done ($(date -u +%T)), status $status"
exit $status
