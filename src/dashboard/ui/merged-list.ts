// Several lists read page by page as one, newest first: the incoming mail of every address
// at once (the API lists one address at a time). Each source keeps its own cursor; an item
// is shown once no source that has more to read can still hold a newer one, so the merged
// order is right however the sources' pages interleave. "Load more" reads the next page of
// every source that has one.
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiFailure, list } from "./api.ts";
import type { ListState } from "./use-list.ts";
import { mergedItems, type Source } from "./merge.ts";

export function useMergedList<T extends { id: string; created_at: string }>(paths: readonly string[] | null): ListState<T> {
  const [sources, setSources] = useState<Source<T>[]>([]);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [errorStatus, setErrorStatus] = useState<number | null>(null);
  const key = paths?.join("\n") ?? null;
  const load = useCallback(async (from: (Source<T> & { path: string })[], append: boolean) => {
    setLoading(true);
    setError(null);
    setErrorStatus(null);
    try {
      const pages = await Promise.all(from.map((s) => (s.path ? list<T>(s.path) : Promise.resolve({ items: [], next: null }))));
      setSources(from.map((s, i) => ({ items: append ? [...s.items, ...pages[i]!.items] : pages[i]!.items, next: pages[i]!.next })));
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : "The server could not be reached.");
      setErrorStatus(err instanceof ApiFailure ? err.status : null);
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    setSources([]);
    if (paths)
      void load(
        paths.map((path) => ({ path, items: [], next: null })),
        false,
      );
  }, [key, load]);
  const merged = mergedItems(sources);
  return {
    items: merged,
    next: sources.some((s) => s.next !== null) ? "more" : null,
    loading,
    error,
    errorStatus,
    // Sources without more are kept as they are (an empty path reads nothing).
    more: () =>
      void load(
        sources.map((s) => ({ ...s, path: s.next ?? "" })),
        true,
      ),
    reload: () =>
      paths &&
      void load(
        paths.map((path) => ({ path, items: [], next: null })),
        false,
      ),
  };
}
