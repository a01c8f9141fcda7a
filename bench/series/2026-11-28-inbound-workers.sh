#!/bin/bash
# Issue 38's targets again after the inbound sender checks moved to a worker thread
# (2026-11-28, second session), on a quiet machine: bench:inbound with the previous session's
# end (BASE, a worktree of 2fdad51) in turn; bench:cluster on both trees (inbound changed);
# bench:outbound cold twice (its ratio moved by ±0.05 between runs) and warm once.
#   bash bench/series/2026-11-28-inbound-workers.sh BASE [OUT]   (as root: the Postfix peer needs it)
set -u
cd "$(dirname "$0")/../.."
. bench/series/series-lib.sh "$@"
run main "$THIS" inbound bench:inbound --rounds 5 --base "$BASE"
run main "$THIS" cluster bench:cluster --setups sqlite,pg1 --rounds 5
run base "$BASE" cluster bench:cluster --setups sqlite,pg1 --rounds 3
run main "$THIS" outbound-cold bench:outbound --route mx --start cold --rounds 5
run main "$THIS" outbound-warm bench:outbound --route mx --start warm --rounds 5
run main "$THIS" outbound-cold bench:outbound --route mx --start cold --rounds 5
echo "=== $(date -u +%H:%M:%S) series done" >> "$LOG"
