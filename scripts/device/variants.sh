#!/usr/bin/env bash
# Runs on the GPU test machine: compares variants of the MSM in one call, one
# log file ($OUT/variants.txt). A variant is a name and the environment it runs
# with:
#
#   scripts/device/variants.sh name[:VAR=value[,VAR=value...]]...
#
#   e.g. base inline:CROSSGROTH_CUDA_CUBIN=.device-cubins/inline.cubin \
#        half:CROSSGROTH_CUDA_MSM_FIRST_SHARE=0.5
#
# For each: the MSM kernel tests (VARIANT_TESTS, default the small ones: the
# msm_ tests but the large and streamed ones, with the Fq inversion and Fr
# transfers; empty: none), then the crossgroth-cuda benchmarks
# matching MSM_FILTER (default the G1 MSM of 2^24 on a table; a variant may
# set either) with CROSSGROTH_CUDA_PROFILE=1, one profile line kept per eight.
# VARIANT_BENCH=prove runs the prove benchmark instead (the PROVE_LOG chain,
# default 2^20, on cuda) and keeps every profile and stage line.
# VARIANT_BIN=path/cuda.xz runs another build's crossgroth-cuda benchmarks (e.g.
# the commit before a change of host code, built into .device-base and
# carried), so that two builds compare in one call.
#
# Kernel variants: build a cubin with other defines on the development machine
#   scripts/cuda/build-ptx.sh --variant .device-variants/inline -DMSM_G1_ACC_INLINE=1
#   mkdir -p .device-cubins && cp .device-variants/inline/crossgroth.sm_90.cubin .device-cubins/inline.cubin
# and carry .device, .gl and .device-cubins.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-device-logs}"
mkdir -p "$out"
bash "$here/run.sh" unpack || exit 1
bin=/tmp/crossgroth-bin
log="$out/variants.txt"
export CROSSGROTH_REQUIRE_CUDA=1
status=0
for spec in "$@"; do
    name="${spec%%:*}"
    envs=""
    [[ "$spec" == *:* ]] && envs="${spec#*:}"
    echo "== $name ($(date -u +%T)) ${envs}" | tee -a "$log"
    (
        IFS=,
        for kv in $envs; do export "${kv?}"; done
        unset IFS
        tests="${VARIANT_TESTS-msm_ fq_inverse fr_transfers --skip msm_g1_large --skip msm_streamed}"
        filter="${MSM_FILTER:-g1_msm_precomputed/24\$}"
        if [ -n "$tests" ]; then
            # shellcheck disable=SC2086
            "$bin/gpu" --test-threads=1 $tests > /tmp/variant-tests.txt 2>&1
            rc=$?
            grep -E "^test |test result|panicked" /tmp/variant-tests.txt
            [ $rc = 0 ] || { tail -30 /tmp/variant-tests.txt; echo "!! $name: tests failed"; exit 1; }
        fi
        if [ "${VARIANT_BENCH:-msm}" = prove ]; then
            # every profile and stage line of every proof: the gaps between
            # the operations (at=, host=) are what is looked for
            CROSSGROTH_CUDA_PROFILE=1 RUST_LOG=info CROSSGROTH_BENCH_GROUPS=prove \
                CROSSGROTH_BENCH_MAX_LOG="${PROVE_LOG:-20}" "$bin/backends" --bench --warm-up-time 1 \
                --measurement-time 3 "prove_from_assignment/cuda/chain:${PROVE_LOG:-20}" 2>&1 |
                grep -v -E '^(Benchmarking|Warming|Collecting|Analyzing)|XDG_RUNTIME'
        else
            bench="$bin/cuda"
            if [ -n "${VARIANT_BIN:-}" ]; then
                bench=/tmp/variant-bench
                xz -dcf "$VARIANT_BIN" > "$bench" && chmod +x "$bench"
            fi
            CROSSGROTH_CUDA_PROFILE=1 "$bench" --bench --warm-up-time 1 --measurement-time 3 "$filter" 2>&1 |
                awk '/ profile / { if (n++ % 8 != 1) next } !/^(Benchmarking|Warming|Collecting|Analyzing)/'
        fi
        [ "${PIPESTATUS[0]}" = 0 ] || { echo "!! $name: bench failed"; exit 1; }
    ) > >(tee -a "$log") 2>&1 || status=1
done
echo "== done ($(date -u +%T)), status $status" | tee -a "$log"
exit $status
