#!/bin/bash
# Issues 29-36 before and after, fixed before the first run (2026-11-27, second session): the tree of
# the session's start (BASE: a worktree of e7f4929) and this tree, alternating, base first.
# bench:outbound (MX, 1 domain, warm, 3 rounds) twice each: issue 29 asks that the
# destination logic (MX sets, lanes, pauses, pacing) costs nothing beyond noise. Every run's whole
# output goes to OUT/NN-tree-name.txt, a line per start and end to OUT/series.log.
#   bash bench/series/2026-11-27-issues-29-36.sh BASE [OUT]   (as root: the Postfix peer needs it)
set -u
cd "$(dirname "$0")/../.."
THIS=$(pwd)
BASE=${1:?the base tree (a worktree of the commit to compare with)}
OUT=$(realpath -m "${2:-bench-series-out}")
mkdir -p "$OUT"
LOG=$OUT/series.log
n=0
run() { # tree-label dir name args...
  n=$((n+1)); local label=$1 dir=$2 name=$3; shift 3
  local f=$OUT/$(printf %02d $n)-$label-$name.txt
  echo "=== $(date -u +%H:%M:%S) start $f: bun run $* ; load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG"
  { echo "\$ (cd $label && bun run $*)"; echo "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$dir" && timeout 1800 bun run "$@" 2>&1); echo "exit $? at $(date -u +%H:%M:%S) UTC"; } > "$f"
  echo "=== $(date -u +%H:%M:%S) end $f: $(tail -1 "$f")" >> "$LOG"
}
for i in 1 2; do # outbound only: the destination logic is what changed on its path
  for t in base main; do
    dir=$THIS; [ $t = base ] && dir=$BASE
    run $t "$dir" outbound bench:outbound --route mx --domains 1 --start warm --rounds 3
  done
done
echo "=== $(date -u +%H:%M:%S) series done" >> "$LOG"
