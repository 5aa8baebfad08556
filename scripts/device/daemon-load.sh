#!/usr/bin/env bash
# Every Filecoin kind at 2 KiB through `crossgroth serve` on one backend, against
# the same proofs through the CLI (a fresh process each): latency p50/p99 of
# sequential proofs, proofs per second with several clients at once, and the
# latency of CRITICAL WinningPoSt proofs while PoRep C2 jobs fill the queue.
# Each figure is a `crossgroth client prove` call timed from outside (its process
# start included).
#
#   scripts/device/daemon-load.sh <crossgroth binary> <dir> [backend (cuda)]
#
# Knobs: SEQ (sequential proofs a kind, default 20; PoRep half), CLIENTS (4) and
# EACH (5) for throughput, CLI_RUNS (3), KINDS (default every kind; e.g.
# "winning-post window-post" for a quick check, which skips the PoRep load part).
set -uo pipefail
bin=$1
dir=$2
backend=${3:-cuda}
seq_n=${SEQ:-20}
clients=${CLIENTS:-4}
each=${EACH:-5}
cli_runs=${CLI_RUNS:-3}
kinds=${KINDS:-porep-c2 winning-post window-post snap-prove}
sector_kinds=post
case "$kinds" in *porep*) sector_kinds=$sector_kinds,porep ;; esac
case "$kinds" in *snap*) sector_kinds=$sector_kinds,snap ;; esac
mkdir -p "$dir"
export FIL_PROOFS_PARENT_CACHE="$dir/parents"
t0=$SECONDS
"$bin" filecoin test-sector --kind "$sector_kinds" --dir "$dir" > "$dir/commands.txt" 2>"$dir/sector.log" ||
    { cat "$dir/sector.log"; exit 1; }
echo "test-sector (seal, vanilla proofs, parameters): $((SECONDS - t0)) s"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }'; }
# Sorted latencies (seconds, one a line) on stdin -> "n= p50= p99= mean="
stats() {
    sort -g | awk '{v[NR]=$1; s+=$1} END {
        if (NR == 0) { print "n=0"; exit }
        i50 = int((NR + 1) * 0.50); if (i50 < 1) i50 = 1
        i99 = int(NR * 0.99 + 0.999); if (i99 > NR) i99 = NR
        printf "n=%d p50=%.3f s p99=%.3f s mean=%.3f s\n", NR, v[i50], v[i99], s / NR }'
}
# The command line of one kind, for the CLI (filecoin ...) or the client (prove ...).
line_of() { grep " $1 " "$dir/commands.txt" | head -1 | sed 's/^crossgroth //; s/ --out [^ ]*$//'; }
client_args() { line_of "$1" | sed "s/^filecoin $1/prove --kind $1/; s/ --params-dir [^ ]*//"; }

echo "== the CLI on $backend, a fresh process a proof ($cli_runs each)"
for k in $kinds; do
    : > "$dir/cli-$k.txt"
    for _ in $(seq 1 "$cli_runs"); do
        a=$(now)
        # shellcheck disable=SC2046
        "$bin" $(line_of "$k") --backend "$backend" --out "$dir/cli-$k.proof" >/dev/null 2>&1 ||
            echo "!! cli $k failed"
        since "$a" >> "$dir/cli-$k.txt"
    done
    echo "cli $k: $(stats < "$dir/cli-$k.txt")"
done

RUST_LOG=info "$bin" serve --listen 127.0.0.1:0 --backend "$backend" --params-dir "$dir/params" \
    2>"$dir/serve.log" &
pid=$!
trap 'kill -KILL $pid 2>/dev/null' EXIT
addr=""
for _ in $(seq 1 600); do
    addr="$(sed -n 's/^crossgroth serve: listening on //p' "$dir/serve.log" | head -1)"
    [ -n "$addr" ] && break
    sleep 0.1
done
[ -n "$addr" ] || { echo "the daemon did not start"; cat "$dir/serve.log"; exit 1; }
prove() {  # kind out [extra args]: one client call, prints its seconds
    local k=$1 out=$2; shift 2
    local a; a=$(now)
    # shellcheck disable=SC2046
    "$bin" client --addr "$addr" $(client_args "$k") "$@" --out "$out" >/dev/null 2>>"$dir/client.log" ||
        echo "!! client $k failed" >&2
    since "$a"
}

echo "== through the daemon on $backend, sequential (the first proof of each kind loads its parameters)"
for k in $kinds; do
    n=$seq_n; [ "$k" = porep-c2 ] && n=$((seq_n / 2))
    first=$(prove "$k" "$dir/d-$k.proof")
    : > "$dir/seq-$k.txt"
    for _ in $(seq 1 "$n"); do prove "$k" "$dir/d-$k.proof" >> "$dir/seq-$k.txt"; done
    echo "daemon $k: first $first s; then $(stats < "$dir/seq-$k.txt")"
done

echo "== through the daemon, $clients clients at once, $each proofs each"
for k in $kinds; do
    a=$(now)
    for c in $(seq 1 "$clients"); do
        ( for i in $(seq 1 "$each"); do prove "$k" "$dir/t-$k-$c.proof"; done ) > "$dir/tp-$k-$c.txt" &
    done
    wait $(jobs -p | grep -v "^$pid$") 2>/dev/null
    wall=$(since "$a")
    cat "$dir"/tp-"$k"-*.txt > "$dir/tp-$k.txt"
    echo "daemon $k: $((clients * each)) proofs in $wall s: $(awk -v n=$((clients * each)) -v w="$wall" 'BEGIN { printf "%.2f", n / w }') proofs/s; latency $(stats < "$dir/tp-$k.txt")"
done

case "$kinds" in *porep*) ;; *) kill -TERM $pid; wait $pid; echo "serve exited $?"; exit 0 ;; esac
echo "== CRITICAL WinningPoSt while PoRep C2 jobs keep the queue full"
: > "$dir/crit.txt"
for c in $(seq 1 "$clients"); do
    ( for i in $(seq 1 4); do prove porep-c2 "$dir/bg-$c.proof" >/dev/null; done ) &
done
sleep 2
for _ in $(seq 1 10); do prove winning-post "$dir/crit.proof" >> "$dir/crit.txt"; sleep 0.3; done
echo "daemon winning-post under PoRep load: $(stats < "$dir/crit.txt")"
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null
"$bin" client --addr "$addr" status
"$bin" client --addr "$addr" metrics | grep -E "^crossgroth_proofs_total|^crossgroth_proof_stage_seconds_(sum|count)|^crossgroth_device_busy" | head -40
kill -TERM $pid
wait $pid
echo "serve exited $?"
echo "client calls logged: $(grep -c "written to" "$dir/client.log") proofs written"
exit 0
