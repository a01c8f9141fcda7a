// "Did you mean": the known key an unknown one was most likely meant to be, for
// check-config's "unknown key" problems. A misspelling is a letter or two wrong, missing,
// extra or swapped (target_timout, taget_timeout, traget_timeout); anything further off
// is a different word, and suggesting one would mislead more than it helps.

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known key closest to `unknown`, or null when none is close enough: at most 2 edits,
 * and fewer than a third of the key's letters (so "tls" never becomes "log"). Case and
 * "-" for "_" count as no edit: TOML keys here are snake_case. On a tie the first known
 * key (in the schema's order) wins.
 */
export function suggestKey(unknown: string, known: readonly string[]): string | null {
  const norm = (s: string) => s.toLowerCase().replace(/-/g, "_");
  const target = norm(unknown);
  let best: { key: string; distance: number } | null = null;
  for (const key of known) {
    const distance = editDistance(target, norm(key));
    if (best === null || distance < best.distance) best = { key, distance };
  }
  if (best === null) return null;
  const limit = Math.min(2, Math.floor(Math.max(unknown.length, best.key.length) / 3));
  return best.distance <= limit && best.key !== unknown ? best.key : null;
}
