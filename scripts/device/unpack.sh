# Sourced by the scripts of scripts/device: sets $out (the logs: $OUT, else
# ./device-logs) and unpacks the binaries carried in .device (xz) into $bin;
# sample_gpu_memory starts nvidia-smi's samples of memory in use (every 2 s,
# into $out/gpu-memory.csv) until the script exits.
out="${OUT:-device-logs}"
mkdir -p "$out"
bin=/tmp/crossgroth-bin
mkdir -p "$bin"
for f in .device/*.xz; do
    b="$bin/$(basename "$f" .xz)"
    [ -x "$b" ] || { xz -dc "$f" > "$b" && chmod +x "$b"; }
done
sample_gpu_memory() {
    nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv -l 2 > "$out/gpu-memory.csv" 2>/dev/null &
    smi=$!
    trap 'kill $smi 2>/dev/null' EXIT
}
