// The one interface every engine-neutral repository is written against: a Db runs queries
// built with the `sql` tag (sql.ts) on SQLite (sqlite-db.ts) or PostgreSQL (pg-db.ts). A
// repository takes a Db, writes its SQL once, and reads integers through toInt
// (dialect.ts); what differs by engine goes into dialect.ts, never into a repository.
// docs/architecture.md, "Repositories: one SQL per noun", shows how one is written.
import type { Sql } from "./sql.ts";

export type Engine = "sqlite" | "postgres";

export interface RunResult {
  /** Rows the statement inserted, changed or deleted. */
  changes: number;
}

/** Promise-returning on both engines: PostgreSQL answers over a socket, SQLite at once. */
export interface Db {
  readonly engine: Engine;
  /** Every row the query returns. */
  all<R>(query: Sql): Promise<R[]>;
  /** The first row, or null when there is none. */
  get<R>(query: Sql): Promise<R | null>;
  /** A statement for its effect; with RETURNING, use all() or get(). */
  run(query: Sql): Promise<RunResult>;
  /**
   * Runs fn in one transaction on `tx`: every statement fn runs through `tx` commits
   * together, or none does when fn throws. Inside one, tx() is a savepoint. On SQLite the
   * transaction holds the write lock (BEGIN IMMEDIATE) and fn must await only its own
   * statements (no I/O, no timer): it then runs to its end before anything else of the
   * process writes, and a body that awaits anything else is rolled back with an error.
   */
  tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
}
