// Newest-first paging (paging.ts says why: by creation time, then ID, so a cursor stays
// correct while records arrive) as pieces of a query for both engines: the cursor, limit
// and offset are bound; the ID compares and sorts byte-wise on both (collateC).
import type { PageRequest } from "../paging.ts";
import { collateC } from "./dialect.ts";
import { empty, id, type Sql, sql } from "./sql.ts";

/**
 * The WHERE piece (records strictly older than the cursor, `AND ...` or nothing) and the
 * ORDER/LIMIT tail of a newest-first list over `created_at` and `id` (of `table` when
 * given, an alias from the code); asks for one record more than the page, so the caller
 * knows whether another page exists.
 */
export function newestFirst(page: PageRequest, table?: string): { where: Sql; tail: Sql } {
  const at = id(table ? `${table}.created_at` : "created_at");
  const key = id(table ? `${table}.id` : "id");
  const c = page.before;
  // The plain `created_at <= ?` bounds the index range; SQLite cannot take a bound from the OR.
  const where = c
    ? sql`AND ${at} <= ${c.createdAtMs} AND (${at} < ${c.createdAtMs} OR (${at} = ${c.createdAtMs} AND ${key}${collateC} < ${c.id}))`
    : empty;
  const tail = sql`ORDER BY ${at} DESC, ${key}${collateC} DESC LIMIT ${page.limit + 1} OFFSET ${page.offset ?? 0}`;
  return { where, tail };
}
