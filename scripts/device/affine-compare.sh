#!/usr/bin/env bash
# Runs on the GPU test machine, in one call (~6 minutes): the measurements that
# decide whether the batch-affine accumulation pays (backends/cuda/BENCHMARKS.md,
# "2026-12-01 (evening)"). Build first, on the development machine:
# scripts/device/build.sh and scripts/device/build-variants.sh; carry .device,
# .gl and .device-cubins. Logs: $OUT/variants.txt (see variants.sh) and
# $OUT/fq-inverse.txt.
#
#   1. fq_inverse/{fermat,divsteps}/20: what an inversion costs
#   2. the G1 MSM of 2^20 and 2^24 on a table with the shipped kernels, each
#      batch-affine variant and three blocks an SM (every variant first passes
#      the MSM kernel tests against blst with its kernel)
#   3. the G2 MSM of 2^20 with the shipped kernel and the G2 batch-affine ones
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-device-logs}"
mkdir -p "$out"
bash "$here/run.sh" unpack || exit 1
bin=/tmp/crossgroth-bin
status=0
"$bin/cuda" --bench --warm-up-time 1 --measurement-time 3 'fq_inverse' 2>&1 |
    grep -v -E '^(Benchmarking|Warming|Collecting|Analyzing)' | tee "$out/fq-inverse.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
cubin=.device-cubins/affine.cubin
MSM_FILTER='g1_msm_precomputed/2[04]$' bash "$here/variants.sh" base \
    "affine8:CROSSGROTH_CUDA_CUBIN=$cubin,CROSSGROTH_CUDA_MSM_AFFINE=8" \
    "affine16:CROSSGROTH_CUDA_CUBIN=$cubin,CROSSGROTH_CUDA_MSM_AFFINE=16" \
    "affine_s4:CROSSGROTH_CUDA_CUBIN=$cubin,CROSSGROTH_CUDA_MSM_AFFINE=s4" \
    "affine_s8:CROSSGROTH_CUDA_CUBIN=$cubin,CROSSGROTH_CUDA_MSM_AFFINE=s8" \
    "g1b3:CROSSGROTH_CUDA_CUBIN=.device-cubins/g1b3.cubin" || status=1
MSM_FILTER='g2_msm/20$' VARIANT_TESTS='t20 t21' bash "$here/variants.sh" g2-base \
    "g2-affine4:CROSSGROTH_CUDA_CUBIN=$cubin,CROSSGROTH_CUDA_MSM_AFFINE=4" \
    "g2-affine8:CROSSGROTH_CUDA_CUBIN=$cubin,CROSSGROTH_CUDA_MSM_AFFINE=8" \
    "g2-affine_s4:CROSSGROTH_CUDA_CUBIN=$cubin,CROSSGROTH_CUDA_MSM_AFFINE=s4" || status=1
exit $status
