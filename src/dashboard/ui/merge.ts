// The all-addresses view's merge (merged-list.ts), pure and without the DOM so that it is
// table-tested under Bun.

export interface Source<T> {
  items: T[];
  next: string | null;
}

/** The items safe to show, newest first: none newer can still come from a source with more. */
export function mergedItems<T extends { id: string; created_at: string }>(sources: readonly Source<T>[]): T[] {
  const all = sources.flatMap((s) => s.items).sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  const open = sources.filter((s) => s.next !== null);
  if (open.length === 0) return all;
  // A source with more to read and nothing read yet could hold anything: nothing is safe.
  if (open.some((s) => s.items.length === 0)) return [];
  // ISO times sort as strings: the newest of the open sources' oldest items.
  const cutoff = open
    .map((s) => s.items.at(-1)!.created_at)
    .sort()
    .at(-1)!;
  return all.filter((i) => i.created_at > cutoff);
}
