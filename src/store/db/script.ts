// A few statements written once that must run inside another repository's transaction on
// either engine: the outgoing queue's and the status journal's transactions are synchronous
// on SQLite (group commit, journal flush) and awaited on PostgreSQL. A Script is a
// generator that yields each statement and gets its result back, so the same function runs
// synchronously on a SQLite connection (runSync) and awaited on a Db (runOn):
//
//   function* countInto(items): Script<void> { for (...) yield* run(sql`INSERT ...`); }
//   runSync(store.db, countInto(items));      // inside SQLite's synchronous transaction
//   await runOn(tx, countInto(items));        // inside db.tx / a PostgreSQL transaction
//
// Statements that do not need each other's results go in one step (runEach): PostgreSQL
// gets them together and answers them together, one round trip for all (issue 38: a round
// trip costs the client and the server about 50 µs of CPU between them, whatever it runs).
import type { Database } from "bun:sqlite";
import type { Db, RunResult } from "./db.ts";
import type { Sql } from "./sql.ts";
import { sqliteStatements } from "./sqlite-db.ts";

export type Step = { op: "all" | "get" | "run"; query: Sql } | { op: "runEach"; queries: readonly Sql[] };

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

/** Statements run in order for their effects, sent together where the engine can take them so (PostgreSQL). */
export function* runEach(queries: readonly Sql[]): Script<RunResult[]> {
  if (queries.length === 0) return [];
  return (yield { op: "runEach", queries }) as RunResult[];
}

/** Runs `script` on a SQLite connection at once, in the caller's (synchronous) transaction if one is open. */
export function runSync<T>(db: Database, script: Script<T>): T {
  const s = sqliteStatements(db);
  let step = script.next();
  while (!step.done) {
    const at = step.value;
    if (at.op === "runEach") step = script.next(at.queries.map((q) => s.run(q)));
    else step = script.next(at.op === "all" ? s.all(at.query) : at.op === "get" ? s.get(at.query) : s.run(at.query));
  }
  return step.value;
}

/** Runs `script` on `db`, statement after statement (pass a transaction's Db to run it in that transaction). */
export async function runOn<T>(db: Db, script: Script<T>): Promise<T> {
  let step = script.next();
  while (!step.done) {
    const at = step.value;
    // runEach: every db.run sends its statement when called (pg-db.ts), so they go in this
    // order, pipelined on PostgreSQL, one after the other on SQLite. One that fails rejects
    // the whole step; the transaction it ran in is then rolled back by its owner.
    if (at.op === "runEach") step = script.next(await Promise.all(at.queries.map((q) => db.run(q))));
    else step = script.next(at.op === "all" ? await db.all(at.query) : at.op === "get" ? await db.get(at.query) : await db.run(at.query));
  }
  return step.value;
}
