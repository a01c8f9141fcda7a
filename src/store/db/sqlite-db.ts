// The Db (db.ts) on SQLite through bun:sqlite: `?` placeholders, statements prepared once
// and cached by their text (Database.query), transactions that take the write lock at once
// (BEGIN IMMEDIATE, as Store.tx does: the retention purge commits from a thread of its own,
// and a transaction that read before that commit could not write after it).
//
// A transaction is open across awaits here, on the one connection everything on the event
// loop shares, so: transactions of this Db run one at a time (a second waits for the first),
// and a body must await only its own statements, which SQLite answers at once, so that the
// whole body runs before any timer or I/O callback can write on the connection. A body that
// is still open when the next turn of the event loop comes awaited something else: it is
// rolled back with an error that says so, and the transactions waiting for it fail too.
import type { Database } from "bun:sqlite";
import type { Db, RunResult } from "./db.ts";
import { render, type Sql, type SqlValue } from "./sql.ts";

export class SqliteTxError extends Error {
  override name = "SqliteTxError";
}

const LEAKED =
  "a SQLite transaction stayed open past a turn of the event loop: its body awaited something other than its own statements (I/O, a timer, or a transaction on the outer Db)";

interface TxState {
  /** Settles when the open transaction ends; rejects when it leaked past a turn of the loop. */
  open: Promise<void> | null;
  leaked: boolean;
}

type Params = SqlValue[];

export function sqliteDb(db: Database): Db {
  const state: TxState = { open: null, leaked: false };
  const root = statements(db, async (fn) => {
    while (state.open) await state.open;
    let end!: () => void;
    let fail!: (err: Error) => void;
    state.open = new Promise<void>((resolve, reject) => {
      end = resolve;
      fail = reject;
    });
    // Waiters see the rejection; nobody else awaits this promise, so it must not go unhandled.
    state.open.catch(() => {});
    state.leaked = false;
    const guard = setImmediate(() => {
      state.leaked = true;
      fail(new SqliteTxError(LEAKED));
    });
    db.query("BEGIN IMMEDIATE").run();
    try {
      const value = await fn(statements(db, nested(db, 1)));
      if (state.leaked) throw new SqliteTxError(LEAKED);
      db.query("COMMIT").run();
      return value;
    } catch (err) {
      if (db.inTransaction) db.query("ROLLBACK").run();
      throw err;
    } finally {
      clearImmediate(guard);
      state.open = null;
      end();
    }
  });
  return root;
}

type TxRunner = <T>(fn: (tx: Db) => Promise<T>) => Promise<T>;

/** A savepoint inside the open transaction, `depth` deep. */
function nested(db: Database, depth: number): TxRunner {
  const name = `db_tx_${depth}`;
  return async (fn) => {
    db.query(`SAVEPOINT ${name}`).run();
    try {
      const value = await fn(statements(db, nested(db, depth + 1)));
      db.query(`RELEASE ${name}`).run();
      return value;
    } catch (err) {
      db.query(`ROLLBACK TO ${name}`).run();
      db.query(`RELEASE ${name}`).run();
      throw err;
    }
  };
}

function statements(db: Database, tx: TxRunner): Db {
  const prepare = (query: Sql) => {
    const { text, params } = render(query, "sqlite");
    return { stmt: db.query<unknown, Params>(text), params };
  };
  return {
    engine: "sqlite",
    async all<R>(query: Sql): Promise<R[]> {
      const { stmt, params } = prepare(query);
      return stmt.all(...params) as R[];
    },
    async get<R>(query: Sql): Promise<R | null> {
      const { stmt, params } = prepare(query);
      return (stmt.get(...params) as R | null) ?? null;
    },
    async run(query: Sql): Promise<RunResult> {
      const { stmt, params } = prepare(query);
      return { changes: stmt.run(...params).changes };
    },
    tx,
  };
}
