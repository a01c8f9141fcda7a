#!/bin/bash
# Issues 31 and 32 before and after, fixed before the first run (2026-11-27): the tree of
# the session's start (BASE: a worktree of 0327a8d) and this tree, alternating, base first.
# bench:outbound (MX, 1 domain, warm, 3 rounds) and bench:inbound (defaults) twice each,
# bench:cluster (defaults: SQLite, one and two PostgreSQL nodes) once each. Every run's whole
# output goes to OUT/NN-tree-name.txt, a line per start and end to OUT/series.log.
#   bash bench/series/2026-11-27-issues-31-32.sh BASE [OUT]   (as root: the Postfix peer needs it)
set -u
cd "$(dirname "$0")/../.."
. bench/series/series-lib.sh "$@"
for i in 1 2; do
  for t in base main; do
    dir=$THIS; [ $t = base ] && dir=$BASE
    run $t "$dir" outbound bench:outbound --route mx --domains 1 --start warm --rounds 3
    run $t "$dir" inbound bench:inbound
  done
done
run base "$BASE" cluster bench:cluster
run main "$THIS" cluster bench:cluster
echo "=== $(date -u +%H:%M:%S) series done" >> "$LOG"
