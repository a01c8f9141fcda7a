// A search's window (paging.ts, SearchWindow) read a slice at a time, with a deadline
// (http.search_timeout) looked at between slices. SQLite cannot be interrupted once a
// statement runs (bun:sqlite has no sqlite3_interrupt, and terminating its worker thread
// waits for the statement to end): a search of the whole window in one statement would
// run to its end, however long. A slice of SEARCH_SLICE_ROWS records takes at most some
// tens of milliseconds even with every term, so the search stops soon after its deadline.
import type { Cursor, PageRequest } from "./paging.ts";

/** Records one slice reads. Small enough that the deadline is looked at often, large enough that a slice's own queries cost little beside it. */
export const SEARCH_SLICE_ROWS = 1_000;

/** A search that ran past its deadline (http.search_timeout). */
export class SearchTimeoutError extends Error {
  override name = "SearchTimeoutError";
}

/** One list's search, as the slices ask for it. */
export interface SliceReader<Row> {
  /** The record `rows` records after `before` (newest first; from the top when null), or null when the list ends sooner. */
  edge(before: Cursor | null | undefined, rows: number): Cursor | null;
  /** At most `limit` matches after `before` down to `edge` (inclusive; to the list's end when null), newest first. */
  matches(before: Cursor | null | undefined, edge: Cursor | null, limit: number): Row[];
}

export interface SlicedAnswer<Row> {
  /** The page's matches: after the page's offset, at most its limit and one more (so the caller knows another page exists). */
  rows: Row[];
  /** The window's edge when the window ran out before the page filled (null: it reached the list's end). */
  edge: Cursor | null;
}

/**
 * The matches of `page` within its window of `windowRows` records, read a slice of
 * `sliceRows` at a time; throws SearchTimeoutError when `nowMs()` passes `deadlineMs`
 * before a slice. `page.offset` (page numbers) skips matches inside the window.
 */
export function slicedSearch<Row>(
  reader: SliceReader<Row>,
  page: PageRequest,
  windowRows: number,
  sliceRows: number,
  deadlineMs: number,
  nowMs: () => number,
): SlicedAnswer<Row> {
  const offset = page.offset ?? 0;
  const wanted = offset + page.limit + 1;
  const rows: Row[] = [];
  let before = page.before ?? null;
  let left = windowRows;
  for (;;) {
    if (nowMs() > deadlineMs) throw new SearchTimeoutError("the search ran past its deadline");
    const slice = Math.min(sliceRows, left);
    const edge = reader.edge(before, slice);
    rows.push(...reader.matches(before, edge, wanted - rows.length));
    left -= slice;
    if (rows.length >= wanted || !edge) return { rows: rows.slice(offset), edge: null };
    if (left <= 0) return { rows: rows.slice(offset), edge };
    before = edge;
  }
}
