// Newest-first paging (paging.ts's newestFirst) for PostgreSQL repositories, as sql``
// fragments, so every value stays a bound parameter. The id is compared and ordered
// COLLATE "C", byte by byte as SQLite does, whatever the database's own collation: a
// cursor means the same page on both engines.
import type { SQL } from "bun";
import type { PageRequest } from "./paging.ts";

/**
 * The condition (after the list's own WHERE, starting with AND) and the ORDER BY / LIMIT
 * tail of a newest-first list over `created_at` and `id`; one record more than the page,
 * so toPage can tell whether another page exists.
 */
export function pgNewestFirst(sql: SQL, page: PageRequest): { where: SQL.Query<unknown>; tail: SQL.Query<unknown> } {
  const c = page.before;
  // The plain `created_at <= c` bounds the index range, as on SQLite.
  const where = c ? sql`AND created_at <= ${c.createdAtMs} AND (created_at < ${c.createdAtMs} OR (created_at = ${c.createdAtMs} AND id COLLATE "C" < ${c.id}))` : sql``;
  const tail = sql`ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${page.limit + 1} OFFSET ${page.offset ?? 0}`;
  return { where, tail };
}
