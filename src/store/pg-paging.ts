// Newest-first paging (paging.ts) on PostgreSQL, as fragments of Bun's SQL tagged
// templates, so the cursor, limit and offset are bound parameters. The ID compares and
// sorts in the "C" collation: SQLite compares TEXT byte by byte, while a PostgreSQL
// database's default collation (en_US.UTF-8, say) would order "addr_B" after "addr_a" and
// so page differently from SQLite.
import type { SQL } from "bun";
import type { Cursor, PageRequest } from "./paging.ts";
import { pgInteger } from "./pg-values.ts";
import { SearchTimeoutError } from "./sliced-search.ts";

/** A piece of a query (sql`...`), composed into another by interpolation. */
export type Fragment = SQL.Query<unknown>;

/** The WHERE fragment (records strictly older than the cursor) and ORDER/LIMIT tail; asks for one record more than the page. */
export function pgNewestFirst(sql: SQL, page: PageRequest): { where: Fragment; tail: Fragment } {
  const c = page.before;
  const where = c
    ? sql`AND created_at <= ${c.createdAtMs} AND (created_at < ${c.createdAtMs} OR (created_at = ${c.createdAtMs} AND id COLLATE "C" < ${c.id}))`
    : sql``;
  const tail = sql`ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${page.limit + 1} OFFSET ${page.offset ?? 0}`;
  return { where, tail };
}

/**
 * `column` LIKE a containsPattern (paging.ts) as SQLite's LOWER(column) LIKE it: lower() in
 * the "C" collation folds ASCII letters only, as SQLite's does, whatever the database's
 * locale, and LIKE then compares bytes, so a search finds the same rows on both engines.
 */
/** Comparisons as fragments: a search term's operator picks one of these, never text of the query. */
export const pgCompare = {
  "=": (sql: SQL) => sql`=`,
  ">=": (sql: SQL) => sql`>=`,
  "<=": (sql: SQL) => sql`<=`,
  ">": (sql: SQL) => sql`>`,
  "<": (sql: SQL) => sql`<`,
} as const;

export const pgContains = (sql: SQL, column: Fragment, pattern: string): Fragment =>
  sql`lower(${column} COLLATE "C") LIKE ${pattern} ESCAPE '\\'`;

/**
 * The search window (paging.ts, SearchWindow) on PostgreSQL: the window of `rows` records after `page`'s
 * cursor in the list `from` (a table and the WHERE over the list's scope, as a fragment),
 * as a fragment that keeps a record inside it, and the window's edge.
 */
export async function pgSearchWindow(
  sql: SQL,
  from: Fragment,
  page: PageRequest,
  rows: number,
): Promise<{ where: Fragment; edge: Cursor | null }> {
  const { where } = pgNewestFirst(sql, page);
  const [edge]: { created_at: string | number; id: string }[] = await sql`SELECT created_at, id FROM ${from} ${where}
    ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT 1 OFFSET ${rows - 1}`;
  if (!edge) return { where: sql``, edge: null };
  const at = pgInteger(edge.created_at, "created_at");
  return {
    where: sql`AND created_at >= ${at} AND (created_at > ${at} OR (created_at = ${at} AND id COLLATE "C" >= ${edge.id}))`,
    edge: { createdAtMs: at, id: edge.id },
  };
}

/** The largest statement_timeout PostgreSQL takes (a 32-bit count of ms): a longer limit waits that long. */
const MAX_STATEMENT_TIMEOUT_MS = 2 ** 31 - 1;

/** PostgreSQL's SQLSTATE for a statement cancelled by statement_timeout. */
const QUERY_CANCELED = "57014";

/**
 * Runs a search's statements in a transaction whose statements PostgreSQL cancels after
 * `timeoutMs` (statement_timeout, set for this transaction only: the connection goes back
 * to the pool with the server's own), so a search holds neither a connection nor the
 * database for longer; a cancelled search rejects with SearchTimeoutError.
 */
export async function pgTimedSearch<T>(sql: SQL, timeoutMs: number, search: (tx: SQL) => Promise<T>): Promise<T> {
  if (!Number.isFinite(timeoutMs)) return search(sql);
  try {
    return await sql.begin(async (tx) => {
      await tx`SELECT set_config('statement_timeout', ${String(Math.min(MAX_STATEMENT_TIMEOUT_MS, Math.max(1, Math.ceil(timeoutMs))))}, true)`;
      return search(tx);
    });
  } catch (err) {
    if ((err as { errno?: string }).errno === QUERY_CANCELED) throw new SearchTimeoutError("the search ran past its deadline");
    throw err;
  }
}
