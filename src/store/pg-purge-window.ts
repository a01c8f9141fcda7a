// The retention purge's windows on PostgreSQL (purge-window.ts says how a walk goes: rowid
// order, windows of `limit` rows, planWindow decides). PostgreSQL has no rowid of its own:
// the tables the purge walks have an identity column named rowid (migrations/postgres).
//
// No window is a transaction holding locks while the next statement is planned: the window
// is read without locking, and the delete is one statement that checks again, on the rows
// it deletes, that each is old enough and not needed. Other nodes keep writing meanwhile
// (a recipient finishing, an MTA-STS policy refreshed in place), so what the read saw may
// no longer hold when the delete runs; such a row is left for the next run.
import type { SQL } from "bun";
import type { Fragment } from "./pg-paging.ts";
import { pgInteger } from "./pg-values.ts";
import { planWindow, type Purge } from "./purge-window.ts";

/** A window's row as PostgreSQL returns it: BIGINTs as strings, `keep` a boolean or 0/1. */
export interface PgWindowRow {
  rowid: unknown;
  at: unknown;
  keep: unknown;
}

export interface PgPurgeSql {
  /** The rows after `afterRowid` in rowid order, at most `limit`: rowid, at, keep. */
  window(afterRowid: number, limit: number): Promise<PgWindowRow[]>;
  /** Deletes those of `rowids` older than `beforeMs` and still not needed; resolves with how many went. */
  remove(rowids: number[], beforeMs: number): Promise<number>;
}

/** The window's rows with numbers for rowid and at, as planWindow takes them. */
export const pgWindowRows = (rows: readonly PgWindowRow[], table: string) =>
  rows.map((r) => ({
    rowid: pgInteger(r.rowid, `${table}.rowid`),
    at: pgInteger(r.at, `${table}.at`),
    keep: r.keep === true || r.keep === 1 || r.keep === "1",
  }));

/** A Purge from a repository's two statements (PgPurgeSql); `timeOrdered` as in planWindow. */
export function pgRowidPurge(table: string, statements: PgPurgeSql, timeOrdered = true): Purge {
  return async (beforeMs, afterRowid, limit) => {
    const plan = planWindow(pgWindowRows(await statements.window(afterRowid, limit), table), beforeMs, limit, timeOrdered);
    const deleted =
      plan.remove.length > 0
        ? await statements.remove(
            plan.remove.map((r) => r.rowid),
            beforeMs,
          )
        : 0;
    return { deleted, next: plan.next };
  };
}

/**
 * The purge of a table whose rows need nothing else: a row goes once its `at` column is
 * older than the cutoff, unless `keep` (a boolean over the row's own columns) holds.
 */
export function pgTablePurge(sql: SQL, table: string, at: string, keep: Fragment = sql`false`, timeOrdered = true): Purge {
  const t = sql(table);
  const atColumn = sql(at);
  const keepExpr = keep;
  return pgRowidPurge(
    table,
    {
      window: (afterRowid, limit) =>
        sql`SELECT rowid, ${atColumn} AS at, (${keepExpr}) AS keep FROM ${t} WHERE rowid > ${afterRowid} ORDER BY rowid LIMIT ${limit}`,
      remove: async (rowids, beforeMs) =>
        (await sql`DELETE FROM ${t} WHERE rowid = ANY(${rowids}) AND ${atColumn} < ${beforeMs} AND NOT (${keepExpr})`).count,
    },
    timeOrdered,
  );
}
