#!/bin/bash
# The fresh series for issues 16 and 22, fixed before the first run (2026-11-25 00:11 UTC),
# run at a0e8506 with nothing else on the machine: every run is kept in bench/RESULTS.md.
# bench:outbound: 2 routes x {1, 20} domains x {cold, warm}, 5 rounds each; bench:inbound x2,
# bench:webhooks x2, bench:memory, bench:purge, bench:dashboard, bench:compose x1, defaults.
# Each run's whole output goes to OUT/NN-name.txt, a line per start and end to OUT/series.log.
#   bash bench/series/2026-11-25-issues-16-22.sh [OUT]   (as root: the Postfix peer needs it)
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-bench-series-out}
mkdir -p "$OUT"
LOG=$OUT/series.log
n=0
run() { # name args...
  n=$((n+1)); local f=$OUT/$(printf %02d $n)-$1.txt; shift
  echo "=== $(date -u +%H:%M:%S) start $f: bun run $* ; load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
  { echo "\$ bun run $*"; echo "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"; timeout 1800 bun run "$@" 2>&1; echo "exit $? at $(date -u +%H:%M:%S) UTC"; } > "$f"
  echo "=== $(date -u +%H:%M:%S) end $f: $(tail -1 "$f")" >> "$LOG"
}
for route in mx smarthost; do
  for d in 1 20; do
    for s in cold warm; do run outbound-$route-d$d-$s bench:outbound --route $route --domains $d --start $s --rounds 5; done
  done
done
run inbound-1 bench:inbound
run inbound-2 bench:inbound
run webhooks-1 bench:webhooks
run webhooks-2 bench:webhooks
run memory bench:memory
run purge bench:purge
run dashboard bench:dashboard
run compose bench:compose
echo "=== $(date -u +%H:%M:%S) series done" >> "$LOG"
