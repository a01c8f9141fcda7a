#!/bin/bash
# Issues 29-36 before and after, fixed before the first run (2026-11-27, second session): the tree of
# the session's start (BASE: a worktree of e7f4929) and this tree, alternating, base first.
# bench:outbound (MX, 1 domain, warm, 3 rounds) twice each: issue 29 asks that the
# destination logic (MX sets, lanes, pauses, pacing) costs nothing beyond noise. Every run's whole
# output goes to OUT/NN-tree-name.txt, a line per start and end to OUT/series.log.
#   bash bench/series/2026-11-27-issues-29-36.sh BASE [OUT]   (as root: the Postfix peer needs it)
set -u
cd "$(dirname "$0")/../.."
. bench/series/series-lib.sh "$@"
for i in 1 2; do # outbound only: the destination logic is what changed on its path
  for t in base main; do
    dir=$THIS; [ $t = base ] && dir=$BASE
    run $t "$dir" outbound bench:outbound --route mx --domains 1 --start warm --rounds 3
  done
done
echo "=== $(date -u +%H:%M:%S) series done" >> "$LOG"
