#!/usr/bin/env bash
# Build, on the development machine, kernel variants for a GPU comparison
# (scripts/device/variants.sh loads each with CROSSGROTH_CUDA_CUBIN) into
# .device-cubins/<name>.cubin; carry it with .device and .gl.
#
#   scripts/device/build-variants.sh name:-DNAME=VALUE[,-DNAME=VALUE...]...
#
#   e.g. scripts/device/build-variants.sh g1b3:-DMSM_G1_ACC_MIN_BLOCKS=3
#
# Each is built as the committed sm_90 cubin is (scripts/cuda/build-ptx.sh
# --variant: HOPPER_DEFINES first, then these), and ptxas's register, stack
# and shared-memory report for its accumulation kernels is printed. About a
# minute and a half a variant on two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -eq 0 ]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
fi
mkdir -p .device-cubins .device-variants
for spec in "$@"; do
    name=${spec%%:*}
    defines=()
    [ "$name" != "$spec" ] && IFS=, read -r -a defines <<< "${spec#*:}"
    bash scripts/cuda/build-ptx.sh --variant ".device-variants/$name" "${defines[@]}" >/dev/null
    cp ".device-variants/$name/crossgroth.sm_90.cubin" ".device-cubins/$name.cubin"
    echo "== $name (${defines[*]}): .device-cubins/$name.cubin"
    grep -A2 -E "Function properties for g[12]_msm_accumulate\$" ".device-variants/$name/ptxas.txt" |
        grep -oE "for g[12]_msm_accumulate|[0-9]+ bytes stack frame|Used [0-9]+ registers(, [0-9]+ bytes smem)?" |
        paste -sd' ' | sed 's/ for /\n/g; s/^for //'
done
ls -la .device-cubins
