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
  let where = "";
  if (page.before) {
    where = ` AND (${prefix}created_at < ? OR (${prefix}created_at = ? AND ${prefix}id < ?))`;
    params.push(page.before.createdAtMs, page.before.createdAtMs, page.before.id);
  }
  const tail = ` ORDER BY ${prefix}created_at DESC, ${prefix}id DESC LIMIT ? OFFSET ?`;
  params.push(page.limit + 1, page.offset ?? 0);
  return { where, tail };
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

export function toPage<T>(rows: T[], limit: number): Page<T> {
  return rows.length > limit ? { items: rows.slice(0, limit), hasMore: true } : { items: rows, hasMore: false };
}

/** A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (use ESCAPE '\'). */
export function containsPattern(text: string): string {
  return "%" + text.toLowerCase().replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}

/** A LIKE pattern matching strings that start with `text` exactly (use ESCAPE '\\'). */
export function prefixPattern(text: string): string {
  return text.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}
