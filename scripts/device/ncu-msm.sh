#!/usr/bin/env bash
# Runs on the GPU test machine: Nsight Compute on one launch of a kernel of a
# crossgroth-cuda benchmark (default: g1_msm_accumulate in the G1 MSM of 2^24 on
# a table; NCU_BENCH picks another benchmark, NCU_MAX_LOG its size limit, as
# CROSSGROTH_BENCH_MAX_LOG), for each cubin given
# (none: the embedded one). One report per cubin in $OUT/ncu-<name>.txt, the
# headline figures (duration, pipe utilisation, stall reasons, instruction
# counts, the busiest units of L2 and DRAM) on stdout. Carry .device (and
# .device-cubins for variants, see scripts/device/variants.sh).
#
#   scripts/device/ncu-msm.sh [name=path/to.cubin]...
#   NCU_KERNEL=g1_msm_accumulate_level scripts/device/ncu-msm.sh
#   NCU_KERNEL=msm_scatter NCU_BENCH='g1_msm/24$' scripts/device/ncu-msm.sh
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-device-logs}"
mkdir -p "$out"
bash "$here/run.sh" unpack >/dev/null 2>&1 || exit 1
bin=/tmp/crossgroth-bin
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
kernel="${NCU_KERNEL:-g1_msm_accumulate}"
bench="${NCU_BENCH:-g1_msm_precomputed/24\$}"
[ $# -eq 0 ] && set -- embedded=
status=0
for spec in "$@"; do
    name="${spec%%=*}"
    cubin="${spec#*=}"
    echo "== $name ${cubin:-(embedded cubin)}"
    # --launch-skip 2: past the first calls (tables and buffers warm)
    env ${cubin:+CROSSGROTH_CUDA_CUBIN=$cubin} CROSSGROTH_BENCH_MAX_LOG="${NCU_MAX_LOG:-24}" timeout 300 \
        "$ncu" --clock-control none --kernel-name "$kernel" --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy \
        --section SchedulerStats --section WarpStateStats --section InstructionStats \
        --section LaunchStats --print-details all \
        "$bin/cuda" --bench --profile-time 2 "$bench" > "$out/ncu-$name.txt" 2>&1 ||
        { echo "!! $name: ncu failed"; status=1; }
    grep -E "Duration|DRAM Throughput|L2 Cache Throughput|Memory Throughput  |L2 Hit Rate|Registers Per Thread|Achieved Occupancy|Pipe (Fmaheavy|Fma|Alu) Cycles|Issue Slots Busy|Eligible Warps Per|Warp Cycles Per Issued|Stall (Wait|Long Scoreboard|Math Pipe|Lg Throttle|Drain|Membar)|Executed Instructions  |L2: (T Tag Requests|Xbar2lts Cycles|D Atomic Input)|DRAM: Cycles Active" \
        "$out/ncu-$name.txt" | sort -u
done
exit $status
