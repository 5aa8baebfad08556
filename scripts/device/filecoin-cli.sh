#!/usr/bin/env bash
# Every Filecoin kind through the command line on each backend here: seals a
# 2 KiB test sector (inputs and insecure parameters in DIR), then runs each
# printed command with --backend cpu, cuda and wgpu; every proof is verified by
# filecoin-proofs before it is written. The timings are what a provider sees.
#
#   scripts/device/filecoin-cli.sh <crossgroth binary> <dir>
set -euo pipefail
bin=$1
dir=$2
mkdir -p "$dir"
export FIL_PROOFS_PARENT_CACHE="$dir/parents"
start=$SECONDS
"$bin" filecoin test-sector --kind porep,post,snap --dir "$dir" > "$dir/commands.txt"
echo "test-sector (seal, vanilla proofs, parameters): $((SECONDS - start)) s"
for backend in cpu cuda wgpu; do
    while read -r line; do
        kind=$(echo "$line" | awk '{print $3}')
        # shellcheck disable=SC2086
        cmd=${line#crossgroth }
        "$bin" ${cmd% --out *} --backend "$backend" --out "$dir/$kind-$backend.proof" 2>&1 |
            sed "s/^/$backend $kind: /" | grep -v "^.*proving "
    done < "$dir/commands.txt"
done
