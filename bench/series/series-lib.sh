# What every before/after series shares (sourced by bench/series/*.sh, run from the repository
# root): BASE and OUT from the arguments, and run(), which runs one benchmark in one tree,
# its whole output to OUT/NN-label-name.txt and a line per start and end to OUT/series.log.
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
