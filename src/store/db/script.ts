// A few statements written once that must run inside another repository's transaction on
// either engine: the outgoing queue's and the status journal's transactions are synchronous
// on SQLite (group commit, journal flush) and awaited on PostgreSQL. A Script is a
// generator that yields each statement and gets its result back, so the same function runs
// synchronously on a SQLite connection (runSync) and awaited on a Db (runOn):
//
//   function* countInto(items): Script<void> { for (...) yield* run(sql`INSERT ...`); }
//   runSync(store.db, countInto(items));      // inside SQLite's synchronous transaction
//   await runOn(tx, countInto(items));        // inside db.tx / a PostgreSQL transaction
import type { Database } from "bun:sqlite";
import type { Db, RunResult } from "./db.ts";
import type { Sql } from "./sql.ts";
import { sqliteStatements } from "./sqlite-db.ts";

export interface Step {
  op: "all" | "get" | "run";
  query: Sql;
}

export type Script<T> = Generator<Step, T, unknown>;

export function* all<R>(query: Sql): Script<R[]> {
  return (yield { op: "all", query }) as R[];
}

export function* get<R>(query: Sql): Script<R | null> {
  return (yield { op: "get", query }) as R | null;
}

export function* run(query: Sql): Script<RunResult> {
  return (yield { op: "run", query }) as RunResult;
}

/** Runs `script` on a SQLite connection at once, in the caller's (synchronous) transaction if one is open. */
export function runSync<T>(db: Database, script: Script<T>): T {
  const s = sqliteStatements(db);
  let step = script.next();
  while (!step.done) {
    const { op, query } = step.value;
    step = script.next(op === "all" ? s.all(query) : op === "get" ? s.get(query) : s.run(query));
  }
  return step.value;
}

/** Runs `script` on `db`, statement after statement (pass a transaction's Db to run it in that transaction). */
export async function runOn<T>(db: Db, script: Script<T>): Promise<T> {
  let step = script.next();
  while (!step.done) {
    const { op, query } = step.value;
    step = script.next(op === "all" ? await db.all(query) : op === "get" ? await db.get(query) : await db.run(query));
  }
  return step.value;
}
