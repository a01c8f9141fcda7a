// A list read page by page through the API's cursors: the first page, then "Load more"
// follows the Link header. Reloads when its path changes.
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiFailure, list } from "./api.ts";

export interface ListState<T> {
  items: T[];
  next: string | null;
  loading: boolean;
  error: string | null;
  /** The HTTP status of the failure (404: no such resource in this account). */
  errorStatus: number | null;
  more(): void;
  reload(): void;
}

export function useList<T>(path: string | null): ListState<T> {
  const [items, setItems] = useState<T[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [errorStatus, setErrorStatus] = useState<number | null>(null);
  const load = useCallback((from: string, append: boolean) => {
    setLoading(true);
    setError(null);
    setErrorStatus(null);
    list<T>(from).then(
      (page) => {
        setItems((old) => (append ? [...old, ...page.items] : page.items));
        setNext(page.next);
        setLoading(false);
      },
      (err) => {
        setError(err instanceof ApiFailure ? err.message : "The server could not be reached.");
        setErrorStatus(err instanceof ApiFailure ? err.status : null);
        setLoading(false);
      },
    );
  }, []);
  useEffect(() => {
    setItems([]);
    setNext(null);
    if (path) load(path, false);
  }, [path, load]);
  return { items, next, loading, error, errorStatus, more: () => next && load(next, true), reload: () => path && load(path, false) };
}
