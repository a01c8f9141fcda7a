// How the retention purge walks a table: in windows of `limit` rows in rowid order,
// deleting the rows of each window that are old enough and not needed any more, so that
// no statement touches more than `limit` rows and the event loop gets its turn between
// windows. Every repository's purge (its own SQL) plans its window with planWindow.
//
// Why rowid order and not an index on the time column: rows of the tables that grow with
// traffic are appended as they happen, so rowid order is time order (SQLite gives a new
// row the largest rowid plus one), and the oldest rows are at the head of the table. An
// index on created_at would cost every insert, incoming statuses on the inbound path among
// them; the walk costs nothing until the purge runs.
import type { Database, Statement } from "bun:sqlite";

/** One window's outcome: rows deleted, and the rowid to go on after (null: the walk is done). */
export interface PurgeStep {
  deleted: number;
  next: number | null;
}

/** Deletes, in one transaction, the rows of the window after `afterRowid` that are older than `beforeMs` and not needed. */
export type Purge = (beforeMs: number, afterRowid: number, limit: number) => Promise<PurgeStep>;

export interface WindowRow {
  rowid: number;
  /** The time the retention counts from (created_at, or expires_at for a cache). */
  at: number;
  /** Still needed (a message being delivered, an event not yet posted): kept whatever its age. */
  keep: number | boolean;
}

/**
 * The rows of a window to delete, and where the walk goes on. It ends at a window that is
 * not full (the end of the table) or, in a table in time order, at a window with no row
 * older than `beforeMs` (the rest is younger). A young row among old ones does not end it:
 * rows that arrive together may be stored slightly out of order. Rows kept because they
 * are needed do not end it either: the walk steps over them.
 */
export function planWindow<T extends WindowRow>(
  rows: readonly T[],
  beforeMs: number,
  limit: number,
  timeOrdered: boolean,
): { remove: T[]; next: number | null } {
  const remove = rows.filter((r) => r.at < beforeMs && !r.keep);
  const last = rows.at(-1);
  if (!last || rows.length < limit) return { remove, next: null };
  if (timeOrdered && rows.every((r) => r.at >= beforeMs)) return { remove, next: null };
  return { remove, next: last.rowid };
}

/** The rowids of `rows` as one JSON parameter, for `rowid IN (SELECT value FROM json_each(?))`. */
export const rowidsParam = (rows: readonly WindowRow[]): string => JSON.stringify(rows.map((r) => r.rowid));

/**
 * A Purge from a repository's two statements: `window` selects the rows after a rowid
 * (rowid, at, keep; parameters: after, limit) and `remove` deletes rowids given as one
 * JSON array. Each window is one transaction on `db`.
 */
export function rowidPurge(
  db: Database,
  window: Statement<WindowRow, [number, number]>,
  remove: (rowids: string) => void,
  timeOrdered = true,
): Purge {
  const purgeWindow = db.transaction((beforeMs: number, afterRowid: number, limit: number): PurgeStep => {
    const plan = planWindow(window.all(afterRowid, limit), beforeMs, limit, timeOrdered);
    if (plan.remove.length > 0) remove(rowidsParam(plan.remove));
    return { deleted: plan.remove.length, next: plan.next };
  });
  // IMMEDIATE: the window is read, then deleted from, and the appliance's own connections
  // commit from another thread meanwhile.
  return async (beforeMs, afterRowid, limit) => purgeWindow.immediate(beforeMs, afterRowid, limit);
}
