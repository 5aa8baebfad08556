#!/usr/bin/env bash
# Build kernels/crossgroth.ptx (and kernels/crossgroth.sm_90.cubin) from
# kernels/*.cu(h), or check that the committed files are up to date.
#
#   scripts/cuda/build-ptx.sh          regenerate both
#   scripts/cuda/build-ptx.sh --check  regenerate into a temp dir (PTX, then
#                                      ptxas -arch=sm_90, which also catches
#                                      assembler errors) and fail if either
#                                      differs from the committed file
#   scripts/cuda/build-ptx.sh --variant DIR [-DNAME=VALUE...]
#                                      build a variant of the module with extra
#                                      defines into DIR (its sm_90 cubin, built
#                                      as the committed one is, with
#                                      HOPPER_DEFINES first, the PTX it came
#                                      from, and ptxas's register report), for
#                                      experiments: load it on the GPU with
#                                      CROSSGROTH_CUDA_CUBIN=DIR/crossgroth.sm_90.cubin
#                                      (a later -DNAME=0 undoes a Hopper define)
#
# The PTX is what every GPU from Volta on runs (the driver JIT-compiles it,
# ~15 s on first load for this module). The sm_90 cubin is machine code for
# Hopper (H100/H200), which the backend loads instead of the PTX there, so it
# starts without the JIT. It is compiled with HOPPER_DEFINES on top: the G1
# accumulation with its Fq products inlined (MSM_G1_ACC_INLINE), 1.7 % faster
# on the G1 MSM of 2^24 on the H200 but a PTX that took the driver 26.9 s to
# JIT instead of 14-20 s, a cost that only GPUs without a cubin would pay.
#
# Toolchain: pinned PyPI wheels of CUDA 12.0 (no CUDA install, no GPU needed):
# NVRTC compiles CUDA C to PTX for the virtual architecture compute_70; ptxas
# assembles it for checking. The PyPI -cu12 nvcc wheels carry no nvcc driver
# (only ptxas), so NVRTC is the compiler. PTX from CUDA 12.0 is ISA 8.0, which
# every driver from R525 on JIT-compiles: minimum NVIDIA driver 525.60.13
# (Linux), GPUs from Volta (sm_70) on.
#
# The wheels go to $CROSSGROTH_CUDA_TOOLS (default: target/cuda-tools in the
# repository), installed once.
set -euo pipefail

NVRTC_WHEEL="nvidia-cuda-nvrtc-cu12==12.0.140"
NVCC_WHEEL="nvidia-cuda-nvcc-cu12==12.0.140"
ARCH="compute_70"
# Defines of the sm_90 cubin only (see above); the PTX has none.
HOPPER_DEFINES=(-DMSM_G1_ACC_INLINE=1)

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tools="${CROSSGROTH_CUDA_TOOLS:-$repo/target/cuda-tools}"
stamp="$tools/.installed-12.0.140"
python="${PYTHON:-python3}"

if [[ ! -f "$stamp" ]]; then
    echo "build-ptx: installing $NVRTC_WHEEL $NVCC_WHEEL into $tools" >&2
    mkdir -p "$tools"
    "$python" -m pip install --quiet --disable-pip-version-check --no-deps --target "$tools" \
        "$NVRTC_WHEEL" "$NVCC_WHEEL"
    touch "$stamp"
fi
libnvrtc="$tools/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"
ptxas="$tools/nvidia/cuda_nvcc/bin/ptxas"
chmod +x "$ptxas" 2>/dev/null || true

compile() {  # $1: output file, then extra NVRTC options
    # Work on a copy under a fixed relative name so no checkout path can reach
    # the output; -I. resolves the kernels' includes.
    local out=$1
    shift
    (cd "$repo/kernels" && "$python" "$repo/scripts/cuda/nvrtc_ptx.py" "$libnvrtc" crossgroth.cu "$out" \
        "--gpu-architecture=$ARCH" -std=c++17 -I. -DNDEBUG "$@")
}

assemble() {  # $1: ptx, $2: cubin, then extra ptxas options
    local ptx=$1 cubin=$2
    shift 2
    "$ptxas" -arch=sm_90 -O3 "$@" "$ptx" -o "$cubin"
}

build_cubin() {  # $1: cubin, $2: where its PTX goes, then extra ptxas options; HOPPER_DEFINES + $EXTRA
    local cubin=$1 ptx=$2
    shift 2
    compile "$ptx" "${HOPPER_DEFINES[@]}" "${EXTRA[@]}"
    assemble "$ptx" "$cubin" "$@"
}

EXTRA=()
if [[ "${1:-}" == "--variant" ]]; then
    mkdir -p "${2:?--variant needs a folder}"
    dir="$(cd "$2" && pwd)"
    shift 2
    EXTRA=("$@")
    build_cubin "$dir/crossgroth.sm_90.cubin" "$dir/crossgroth.ptx" -v 2> "$dir/ptxas.txt"
    echo "build-ptx: variant ${HOPPER_DEFINES[*]} $* -> $dir/crossgroth.sm_90.cubin"
    grep -A3 "Function properties for g1_msm_accumulate\$" "$dir/ptxas.txt" | grep -o "Used [0-9]* registers\|[0-9]* bytes spill stores" || true
elif [[ "${1:-}" == "--check" ]]; then
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    # The PTX (which must assemble too) and the sm_90 cubin are independent
    # builds, so they run side by side.
    { compile "$tmp/crossgroth.ptx" &&
        "$ptxas" -arch=sm_90 -O3 "$tmp/crossgroth.ptx" -o "$tmp/plain.sm_90.cubin"; } &
    plain=$!
    build_cubin "$tmp/crossgroth.sm_90.cubin" "$tmp/hopper.ptx"
    wait "$plain"
    stale=0
    for f in crossgroth.ptx crossgroth.sm_90.cubin; do
        if ! cmp -s "$tmp/$f" "$repo/kernels/$f"; then
            echo "build-ptx: kernels/$f is stale; run scripts/cuda/build-ptx.sh and commit it" >&2
            stale=1
        fi
    done
    if [[ $stale == 1 ]]; then
        diff <(head -c 300000 "$repo/kernels/crossgroth.ptx" 2>/dev/null || true) \
             <(head -c 300000 "$tmp/crossgroth.ptx") | head -20 >&2 || true
        exit 1
    fi
    echo "build-ptx: kernels/crossgroth.ptx and kernels/crossgroth.sm_90.cubin are up to date (ptxas sm_90 ok for both)"
else
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    compile "$repo/kernels/crossgroth.ptx"
    build_cubin "$repo/kernels/crossgroth.sm_90.cubin" "$tmp/hopper.ptx"
    echo "build-ptx: wrote kernels/crossgroth.ptx ($(wc -c < "$repo/kernels/crossgroth.ptx") bytes)" \
         "and kernels/crossgroth.sm_90.cubin ($(wc -c < "$repo/kernels/crossgroth.sm_90.cubin") bytes," \
         "with ${HOPPER_DEFINES[*]})"
fi
