#!/usr/bin/env bash
# Filecoin scale on the GPU test machine (see shared/DEVICE.md): parameters
# generated on the GPU and proofs of satisfiable stand-ins (squaring chains) at
# 2^24..2^27, all in memory. Build on the development machine first:
#
#   cargo build --release --bin crossgroth      (and the test binaries for `tests`)
#   then copy them, stripped and xz-compressed, into .device/ and carry .device
#
#   scripts/device/scale.sh <step>...
#     tests        the cuda setup tests: fixed-base products against blst
#                  (crossgroth-cuda tests/gpu setup::) and whole parameter sets
#                  against the host generator (tests/gpu_proofs.rs); witness-only
#                  engine proofs (a, b, c from the matrices on the device)
#                  against the cpu backend's
#     chain:LOG[:COUNT[:BUDGET[:FLAG]]]
#                  bench-engine of COUNT (default 4) proofs of the 2^LOG chain on
#                  cuda with parameters generated on the GPU in memory: the
#                  generation's stages, the engine's stage p50/p99, throughput,
#                  peak resident memory (JSON in $OUT/chain-LOG.json), under
#                  the memory budget BUDGET (e.g. 110GiB; default 80%); FLAG:
#                  bench-engine flags joined by +, e.g. recorded (witness-only
#                  jobs: a, b, c from the recorded matrices on the device) or
#                  synthesis-workers=16
#     porep:SIZE[:PARTITIONS[:JOBS[:BUDGET[:FLAG]]]]
#                  BENCHMARK: `crossgroth filecoin bench-porep` of JOBS C2-shaped
#                  jobs of PARTITIONS partitions (default: all of the size's)
#                  of the real PoRep circuit of a SIZE sector (e.g. 32GiB) on
#                  fabricated vanilla proofs (proofs never valid), parameters
#                  generated on the GPU in memory; FLAG: bench-porep flags
#                  joined by +, e.g. compare-synthesis, direct, or
#                  compare-synthesis+synthesis-only (one partition synthesized
#                  both ways, then stop)
#
# Logs go to $OUT (or ./device-logs), one per step, and nvidia-smi's memory
# figures every 2 s to gpu-memory.csv.
set -uo pipefail
if [ $# -eq 0 ]; then
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
fi
. "$(dirname "$0")/unpack.sh"
sample_gpu_memory
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -v "$@"; else "$@"; fi; }
rc=0
for step in "$@"; do
    echo "== $step ($(date -u +%H:%M:%S))"
    case "$step" in
    tests)
        CROSSGROTH_REQUIRE_CUDA=1 "$bin/gpu" --test-threads=1 setup:: 2>&1 | tee "$out/tests.log" || rc=1
        CROSSGROTH_REQUIRE_CUDA=1 "$bin/gpu_proofs" --test-threads=1 cuda_setup cuda_witness_only --nocapture 2>&1 | tee -a "$out/tests.log" || rc=1
        ;;
    chain:*)
        IFS=: read -r _ log count budget extra <<< "$step"
        name="chain-$log${extra:+-${extra//+/-}}"
        RUST_LOG=info timed "$bin/crossgroth" bench-engine --circuit "chain:$log" --count "${count:-4}" \
            --backend cuda ${budget:+--memory-budget "$budget"} ${extra:+--${extra//+/ --}} \
            --json "$out/$name.json" 2>&1 | tee "$out/$name.log" || rc=1
        ;;
    porep:*)
        IFS=: read -r _ size partitions jobs budget extra <<< "$step"
        RUST_LOG=info timed "$bin/crossgroth" filecoin bench-porep --sector-size "$size" \
            ${partitions:+--partitions "$partitions"} --jobs "${jobs:-1}" --backend cuda \
            ${budget:+--memory-budget "$budget"} ${extra:+--${extra//+/ --}} 2>&1 | tee "$out/porep-$size-$partitions-$jobs-$budget.log" || rc=1
        ;;
    *) echo "unknown step $step"; rc=2 ;;
    esac
done
exit $rc
