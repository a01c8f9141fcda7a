#!/bin/bash
# Issue 38's targets measured on a quiet machine (2026-11-28), fixed before the first run:
# each benchmark compares Postroom with its peer within itself (alternating rounds), and
# bench:inbound also runs the session's starting tree (BASE, a worktree of 77f5da2) in turn
# (--base); bench:cluster runs on both trees, base after main.
#   bash bench/series/2026-11-28-issue-38.sh BASE [OUT]   (as root: the Postfix peer needs it)
set -u
cd "$(dirname "$0")/../.."
. bench/series/series-lib.sh "$@"
run main "$THIS" inbound bench:inbound --rounds 5 --base "$BASE"
run main "$THIS" cluster bench:cluster --setups sqlite,pg1 --rounds 5
run base "$BASE" cluster bench:cluster --setups sqlite,pg1 --rounds 3
run main "$THIS" outbound-warm bench:outbound --route mx --start warm --rounds 5
run main "$THIS" outbound-cold bench:outbound --route mx --start cold --rounds 5
echo "=== $(date -u +%H:%M:%S) series done" >> "$LOG"
