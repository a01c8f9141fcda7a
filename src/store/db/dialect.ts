// What differs between SQLite and PostgreSQL in the SQL the repositories share, as pieces
// of text a query interpolates (sql`... ${forUpdate}`), rendered for the engine that runs
// it, and the conversion of what the drivers return. What is the same on both needs
// nothing here: ON CONFLICT ... DO UPDATE SET x = excluded.x, RETURNING (SQLite 3.35+),
// INTEGER 0/1 flags and TEXT JSON (the schema keeps both engines alike,
// schema-parity.test.ts). Placeholders are render()'s (sql.ts).
import { pgFlag, pgInteger } from "../pg-values.ts";
import type { Db } from "./db.ts";
import { EnginePiece, type Sql, sql } from "./sql.ts";

/**
 * Byte-wise comparison and order of text, as SQLite's default BINARY collation: PostgreSQL
 * databases made with a language's locale (en_US.UTF-8, ICU) would sort "addr_B" after
 * "addr_a" and so page differently. Put it after a column that is compared or ordered.
 */
export const collateC = new EnginePiece({ sqlite: "", postgres: ' COLLATE "C"' });

/**
 * Locks the rows a SELECT read until the transaction ends (PostgreSQL, where other nodes
 * write at once); nothing on SQLite, whose BEGIN IMMEDIATE already holds the one write lock.
 */
export const forUpdate = new EnginePiece({ sqlite: "", postgres: "FOR UPDATE" });

/**
 * Locks the rows a claim's subquery picks and passes over those another node is claiming
 * at that moment (PostgreSQL): without it, nodes claiming together pick the same rows, all
 * but one find them taken when their lock is granted, and go away with nothing while other
 * rows wait. Nothing on SQLite, where one writer claims at a time.
 */
export const forUpdateSkipLocked = new EnginePiece({ sqlite: "", postgres: "FOR UPDATE SKIP LOCKED" });

/**
 * `column` LIKE a containsPattern (paging.ts), case folded as SQLite's LOWER() does, ASCII
 * letters only: lower() in the "C" collation folds the same on PostgreSQL, whatever the
 * database's locale, and LIKE then compares bytes, so a search finds the same rows on both.
 */
export const containsText = (column: Sql, pattern: string): Sql => sql`lower(${column}${collateC}) LIKE ${pattern} ESCAPE '\\'`;

/**
 * An INTEGER or BIGINT column as a number: SQLite gives numbers, Bun's PostgreSQL client a
 * string for a BIGINT. Every repository's row mapping reads integers through this, so
 * callers cannot tell the engines apart; it refuses what a number cannot hold exactly.
 */
export const toInt = (value: unknown, column: string): number =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : pgInteger(value, column);

/** A nullable INTEGER column as a number or null. */
export const toIntOrNull = (value: unknown, column: string): number | null => (value === null ? null : toInt(value, column));

/** A 0/1 flag column (INTEGER on both engines) as a boolean. */
export const toFlag = (value: unknown, column: string): boolean => (value === 1 ? true : value === 0 ? false : pgFlag(value, column));

/**
 * A join whose order the query fixes (the left table is read first): SQLite's CROSS JOIN,
 * which its planner never reorders; a plain JOIN on PostgreSQL, whose CROSS JOIN takes no ON
 * and whose planner picks the order from its statistics.
 */
export const orderedJoin = new EnginePiece({ sqlite: "CROSS JOIN", postgres: "JOIN" });

/**
 * Whether `err` is a write refused by the unique index `index` (not by the primary key,
 * which callers tell apart: a taken ID is a bug, a taken name an answer). PostgreSQL names
 * the index (23505, `constraint`); SQLite does not (its message names the columns), but
 * gives a primary key its own code: on SQLite any other unique index matches, so a
 * repository asks this only of a table with one such index.
 */
export function isUniqueViolation(err: unknown, index: string): boolean {
  const e = err as { code?: string; errno?: string; constraint?: string } | null;
  if (!e) return false;
  return e.code === "SQLITE_CONSTRAINT_UNIQUE" || (e.errno === "23505" && e.constraint === index);
}

/**
 * Announces `payload` on `channel` to the other nodes, inside the transaction `tx` that
 * makes the change (PostgreSQL's pg_notify goes out on commit, is dropped on rollback;
 * Engine.listen hears it). On SQLite one process writes and clears its own caches: nothing.
 */
export async function announce(tx: Db, channel: string, payload: string): Promise<void> {
  if (tx.engine === "postgres") await tx.run(sql`SELECT pg_notify(${channel}, ${payload})`);
}

/**
 * Serializes the transactions `tx` that name the same `key` until they end (a count then
 * an insert under a limit): PostgreSQL's transaction-scoped advisory lock on (`lockClass`,
 * the key's hash). On SQLite the transaction already holds the one write lock: nothing.
 */
export async function lockKey(tx: Db, lockClass: number, key: string): Promise<void> {
  if (tx.engine === "postgres") await tx.get(sql`SELECT pg_advisory_xact_lock(${lockClass}::int4, hashtext(${key}))`);
}
