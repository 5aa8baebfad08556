#!/usr/bin/env bash
# Runs scripts/daemon/python_client.py against a real `crossgroth serve`: makes a
# 2 KiB test sector (PoSt inputs and insecure parameters), starts the daemon on a
# free loopback port, runs the Python client, then stops the daemon with SIGTERM
# and checks that it exits 0. Needs `pip install grpcio grpcio-tools` and a built
# binary (default target/release/crossgroth; CROSSGROTH_BIN overrides).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${CROSSGROTH_BIN:-target/release/crossgroth}"
[ -x "$bin" ] || cargo build --release -p crossgroth-cli --quiet
work="$(mktemp -d)"
pid=""
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin" filecoin test-sector --kind post --dir "$work/t" >/dev/null 2>"$work/sector.log" || {
    cat "$work/sector.log" >&2; exit 1; }
export FIL_PROOFS_PARENT_CACHE="$work/parents"
RUST_LOG=info "$bin" serve --listen 127.0.0.1:0 --backend cpu --params-dir "$work/t/params" \
    2>"$work/serve.log" &
pid=$!
addr=""
for _ in $(seq 1 600); do
    addr="$(sed -n 's/^crossgroth serve: listening on //p' "$work/serve.log" | head -1)"
    [ -n "$addr" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$addr" ] || { echo "the daemon did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

python3 scripts/daemon/python_client.py --addr "$addr" --sector-dir "$work/t" || {
    cat "$work/serve.log" >&2; exit 1; }

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
if [ "$rc" -ne 0 ]; then
    echo "crossgroth serve exited $rc after SIGTERM (expected 0)" >&2
    cat "$work/serve.log" >&2
    exit 1
fi
echo "crossgroth serve stopped on SIGTERM with exit 0"
