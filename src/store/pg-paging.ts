// paging.ts's newest-first lists and their text search, as fragments of Bun SQL tagged
// templates for the PostgreSQL repositories: every value (limit, offset, cursor, pattern) is
// a bound parameter, and the result orders and matches as the SQLite statements do.
import type { SQL } from "bun";
import type { PageRequest } from "./paging.ts";

/**
 * The WHERE fragment (records strictly older than the cursor) and the ORDER BY / LIMIT tail
 * of a newest-first list over `created_at` and `id`, one record more than the page (toPage).
 * IDs are lowercase hex, which every collation orders as SQLite's binary comparison does.
 */
export function pgNewestFirst(sql: SQL, page: PageRequest): { where: SQL.Query<unknown>; tail: SQL.Query<unknown> } {
  const b = page.before;
  // As on SQLite, the plain `created_at <= x` bounds the index range.
  const where = b ? sql` AND created_at <= ${b.createdAtMs} AND (created_at < ${b.createdAtMs} OR (created_at = ${b.createdAtMs} AND id < ${b.id}))` : sql``;
  const tail = sql` ORDER BY created_at DESC, id DESC LIMIT ${page.limit + 1} OFFSET ${page.offset ?? 0}`;
  return { where, tail };
}

const ASCII_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz";

/**
 * `column LIKE pattern ESCAPE '\'` (a containsPattern or prefixPattern) matching as SQLite's
 * LIKE does: ASCII letters without case, every other character exactly. PostgreSQL's LIKE
 * would tell case apart, and ILIKE or lower() would also fold É to é under a database whose
 * locale knows it, so both sides are folded with translate() over A-Z only. `column` is a
 * fragment naming the column (sql`email`), never text from a request.
 */
export const pgLikeAsciiNoCase = (sql: SQL, column: SQL.Query<unknown>, pattern: string): SQL.Query<unknown> =>
  sql`translate(${column}, ${ASCII_UPPER}, ${ASCII_LOWER}) LIKE translate(${pattern}, ${ASCII_UPPER}, ${ASCII_LOWER}) ESCAPE '\\'`;
