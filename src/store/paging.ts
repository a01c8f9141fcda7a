// Newest-first paging shared by every list: by creation time, then ID, so the order is
// total and a cursor (the last record seen) stays correct while new records arrive.

export interface Cursor {
  createdAtMs: number;
  id: string;
}

export interface PageRequest {
  limit: number;
  /** Records strictly older than this one (cursor paging). */
  before?: Cursor | null;
  /** Records to skip (deprecated `page` paging). */
  offset?: number;
}

/**
 * The WHERE fragment and tail of a newest-first list over columns `created_at` and `id`.
 * Asks for one record more than the page so the caller knows whether another page exists.
 */
export function newestFirst(page: PageRequest, params: unknown[], prefix = ""): { where: string; tail: string } {
  const where = beforeCursor(page, params, prefix);
  const tail = ` ORDER BY ${prefix}created_at DESC, ${prefix}id DESC LIMIT ? OFFSET ?`;
  params.push(page.limit + 1, page.offset ?? 0);
  return { where, tail };
}

/** The WHERE fragment for records strictly older than the page's cursor ("" without one). */
export function beforeCursor(page: PageRequest, params: unknown[], prefix: string): string {
  if (!page.before) return "";
  params.push(page.before.createdAtMs, page.before.createdAtMs, page.before.createdAtMs, page.before.id);
  // The plain `created_at <= ?` bounds the index range; SQLite cannot take a bound from the OR.
  return ` AND ${prefix}created_at <= ? AND (${prefix}created_at < ? OR (${prefix}created_at = ? AND ${prefix}id < ?))`;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  /**
   * Where the next page starts (strictly before it), when that is not the last item: a
   * search that stopped at the edge of its window (SearchWindow) with fewer matches than a page.
   */
  next?: Cursor;
}

export function toPage<T>(rows: T[], limit: number): Page<T> {
  return rows.length > limit ? { items: rows.slice(0, limit), hasMore: true } : { items: rows, hasMore: false };
}

/**
 * A search reads at most `rows` records of a list per request, newest first from its
 * cursor. Matching a part of a text (LIKE '%x%') can use no index, so without a bound a
 * search that matches little reads the whole list: a second and more for a million sent
 * messages. The window is the `rows` records after the cursor; the search runs inside it;
 * when it finds fewer than a page there, the page ends at the window's edge with a link
 * to search on from there (an empty page with a Link is "nothing here yet, go on").
 */
export interface SearchWindow {
  /** The window's oldest record, or null when the window reaches the end of the list. */
  edge: Cursor | null;
}

/**
 * How many records a list request may read: `windowRows` (http.search_window) for a search,
 * whether it pages by cursor or by number (a page number once read the whole list: 19 s for
 * 40,000 sent messages); null, no window, for a list without search terms, which reads in
 * index order and stops after a page.
 */
export function searchWindowRows(termCount: number, windowRows: number): number | null {
  return termCount > 0 && Number.isFinite(windowRows) ? windowRows : null;
}

/** The page of a windowed search: as toPage, and when the window ran out first, the window's edge as the next cursor. */
export function searchedPage<T>(rows: T[], limit: number, window: Pick<SearchWindow, "edge">): Page<T> {
  const page = toPage(rows, limit);
  if (page.hasMore || !window.edge) return page;
  return { ...page, hasMore: true, next: window.edge };
}

/** A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (use ESCAPE '\'). */
export function containsPattern(text: string): string {
  return "%" + text.toLowerCase().replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}

/** A LIKE pattern matching strings that start with `text` exactly (use ESCAPE '\\'). */
export function prefixPattern(text: string): string {
  return text.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}
