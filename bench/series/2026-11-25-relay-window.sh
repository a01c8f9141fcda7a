#!/bin/bash
# After the relay-window fix (810dc25), the two configurations it changes, 5 rounds each,
# fixed before running (2026-11-25 00:43 UTC); both runs are kept in bench/RESULTS.md.
#   bash bench/series/2026-11-25-relay-window.sh [OUT]
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-bench-series-out}
mkdir -p "$OUT"
for s in cold warm; do
  f=$OUT/outbound-smarthost-d20-$s-relaywindow.txt
  { echo "\$ bun run bench:outbound --route smarthost --domains 20 --start $s --rounds 5"; timeout 1800 bun run bench:outbound --route smarthost --domains 20 --start $s --rounds 5 2>&1; echo "exit $?"; } > "$f"
done
