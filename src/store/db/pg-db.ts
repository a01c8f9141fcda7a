// The Db (db.ts) on PostgreSQL through Bun's SQL client: `$1, $2, ...` placeholders
// (sql.unsafe with the rendered text and its parameters: every value is still bound, the
// text comes only from the code), transactions with sql.begin, savepoints inside them.
// Every parameter is checked for NUL first (pg-nul-guard.ts), whichever client it is given.
import type { SQL, TransactionSQL } from "bun";
import { refuseNul } from "../pg-nul-guard.ts";
import type { Db, RunResult } from "./db.ts";
import { render, type Sql } from "./sql.ts";

/** A client, a transaction or a savepoint: each runs unsafe(text, params). */
type Runner = Pick<SQL, "unsafe">;

export function pgDb(sql: SQL): Db {
  return over(sql, (fn) => sql.begin((tx) => fn(over(tx, savepoints(tx)))));
}

/**
 * The Db of a transaction another repository opened (sql.begin's `tx`): its statements run
 * in that transaction, and its tx() is a savepoint inside it.
 */
export function pgTxDb(tx: TransactionSQL): Db {
  return over(tx, savepoints(tx as unknown as SQL));
}

type TxRunner = <T>(fn: (tx: Db) => Promise<T>) => Promise<T>;

function savepoints(tx: SQL): TxRunner {
  return (fn) => (tx as unknown as { savepoint: SQL["begin"] }).savepoint((sp: SQL) => fn(over(sp, savepoints(sp)))) as never;
}

function over(client: Runner, tx: TxRunner): Db {
  const send = (query: Sql) => {
    const { text, params } = render(query, "postgres");
    refuseNul(params, "parameter");
    return client.unsafe(text, params);
  };
  return {
    engine: "postgres",
    all: async <R>(query: Sql): Promise<R[]> => (await send(query)) as R[],
    async get<R>(query: Sql): Promise<R | null> {
      const rows = (await send(query)) as R[];
      return rows[0] ?? null;
    },
    async run(query: Sql): Promise<RunResult> {
      const result = (await send(query)) as { count: number | null };
      return { changes: result.count ?? 0 };
    },
    tx,
  };
}
