#!/usr/bin/env bash
# Build, on the development machine, the kernel variants the next GPU
# comparison loads with CROSSGROTH_CUDA_CUBIN, into .device-cubins/ (carry it
# with .device and .gl; see backends/cuda/BENCHMARKS.md for the commands):
#
#   affine.cubin  the batch-affine G1 accumulations (-DMSM_AFFINE_KERNELS=1;
#                 select one with CROSSGROTH_CUDA_MSM_AFFINE=4|8|16|s4|s8)
#   g1b3.cubin    the G1 accumulation at three blocks an SM
#                 (-DMSM_G1_ACC_MIN_BLOCKS=3)
#
# Each is built as the committed sm_90 cubin is (scripts/cuda/build-ptx.sh
# --variant), and ptxas's register and spill report for its accumulation
# kernels is printed. Some minutes on two cores (the batch-affine variant is
# the slow one: its G2 kernels are large).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .device-cubins .device-variants
build() {  # name, defines...
    local name=$1
    shift
    bash scripts/cuda/build-ptx.sh --variant ".device-variants/$name" "$@" >/dev/null
    cp ".device-variants/$name/crossgroth.sm_90.cubin" ".device-cubins/$name.cubin"
    echo "== $name ($*): .device-cubins/$name.cubin"
    grep -A2 -E "Function properties for g[12]_msm_accumulate(_affine[_s0-9]*)?\$" ".device-variants/$name/ptxas.txt" |
        grep -oE "for g[12]_msm_accumulate[_a-z0-9]*|[0-9]+ bytes stack frame|Used [0-9]+ registers(, [0-9]+ bytes smem)?" |
        paste -sd' ' | sed 's/ for /\n/g; s/^for //'
}
build affine -DMSM_AFFINE_KERNELS=1
build g1b3 -DMSM_G1_ACC_MIN_BLOCKS=3
ls -la .device-cubins
