// The Db (db.ts) on SQLite through bun:sqlite: `?` placeholders, statements prepared once
// and cached by the rendered query's key (sql.ts: its call site, or its shape), transactions that take the write lock at once (BEGIN IMMEDIATE, as
// Store.tx does: the retention purge commits from a thread of its own, and a transaction
// that read before that commit could not write after it). sqliteStatements is the same
// without promises, for scripts run inside a synchronous transaction (script.ts).
//
// A transaction is open across awaits here, on the one connection everything on the event
// loop shares, so: transactions of this Db run one at a time (a second waits for the first),
// and a body must await only its own statements, which SQLite answers at once, so that the
// whole body runs before any timer or I/O callback can write on the connection. A body that
// is still open when the next turn of the event loop comes awaited something else: it is
// rolled back with an error that says so, and the transactions waiting for it fail too.
import type { Database, Statement } from "bun:sqlite";
import type { Db, RunResult } from "./db.ts";
import { render, SHAPES_KEPT, type Sql, type SqlValue } from "./sql.ts";

export class SqliteTxError extends Error {
  override name = "SqliteTxError";
}

const LEAKED =
  "a SQLite transaction stayed open past a turn of the event loop: its body awaited something other than its own statements (I/O, a timer, or a transaction on the outer Db)";

/** all/get/run on a SQLite connection, synchronous. */
export interface SyncStatements {
  all<R>(query: Sql): R[];
  get<R>(query: Sql): R | null;
  run(query: Sql): RunResult;
}

type Params = SqlValue[];
type Prepared = Statement<unknown, Params>;

const executors = new WeakMap<Database, SyncStatements>();

/** The synchronous statements of `db` (one per connection, with its statement cache). */
export function sqliteStatements(db: Database): SyncStatements {
  let found = executors.get(db);
  if (!found) {
    found = executor(db);
    executors.set(db, found);
  }
  return found;
}

function executor(db: Database): SyncStatements {
  // By the rendered query's key (sql.ts): an object for most, found by identity without
  // hashing the text.
  const byKey = new WeakMap<object, Prepared>();
  const byShape = new Map<string, Prepared>();
  const prepare = (query: Sql): { stmt: Prepared; params: Params } => {
    const { text, params, key } = render(query, "sqlite");
    let stmt = typeof key === "string" ? byShape.get(key) : byKey.get(key);
    if (!stmt) {
      stmt = db.prepare<unknown, Params>(text);
      if (typeof key !== "string") byKey.set(key, stmt);
      else {
        if (byShape.size >= SHAPES_KEPT) byShape.clear();
        byShape.set(key, stmt);
      }
    }
    return { stmt, params };
  };
  return {
    all<R>(query: Sql): R[] {
      const { stmt, params } = prepare(query);
      return stmt.all(...params) as R[];
    },
    get<R>(query: Sql): R | null {
      const { stmt, params } = prepare(query);
      return (stmt.get(...params) as R | null) ?? null;
    },
    run(query: Sql): RunResult {
      const { stmt, params } = prepare(query);
      return { changes: stmt.run(...params).changes };
    },
  };
}

interface TxState {
  /** Settles when the open transaction ends; rejects when it leaked past a turn of the loop. */
  open: Promise<void> | null;
  fail: (err: Error) => void;
  leaked: boolean;
}

// The transactions open now, checked at the next turn of the event loop by one setImmediate
// for all of them (one per transaction would cost each a timer): one still open then has
// awaited something other than its own statements.
const watched = new Set<TxState>();
let watching = false;

function watch(state: TxState): void {
  watched.add(state);
  if (watching) return;
  watching = true;
  setImmediate(() => {
    watching = false;
    for (const s of watched) {
      s.leaked = true;
      s.fail(new SqliteTxError(LEAKED));
    }
    watched.clear();
  });
}

export function sqliteDb(db: Database): Db {
  const state: TxState = { open: null, fail: () => {}, leaked: false };
  const sync = sqliteStatements(db);
  return over(sync, async (fn) => {
    while (state.open) await state.open;
    let end!: () => void;
    state.open = new Promise<void>((resolve, reject) => {
      end = resolve;
      state.fail = reject;
    });
    // Waiters see the rejection; nobody else awaits this promise, so it must not go unhandled.
    state.open.catch(() => {});
    state.leaked = false;
    watch(state);
    db.query("BEGIN IMMEDIATE").run();
    try {
      const value = await fn(over(sync, nested(db, sync, 1)));
      if (state.leaked) throw new SqliteTxError(LEAKED);
      db.query("COMMIT").run();
      return value;
    } catch (err) {
      if (db.inTransaction) db.query("ROLLBACK").run();
      throw err;
    } finally {
      watched.delete(state);
      state.open = null;
      end();
    }
  });
}

type TxRunner = <T>(fn: (tx: Db) => Promise<T>) => Promise<T>;

/** A savepoint inside the open transaction, `depth` deep. */
function nested(db: Database, sync: SyncStatements, depth: number): TxRunner {
  const name = `db_tx_${depth}`;
  return async (fn) => {
    db.query(`SAVEPOINT ${name}`).run();
    try {
      const value = await fn(over(sync, nested(db, sync, depth + 1)));
      db.query(`RELEASE ${name}`).run();
      return value;
    } catch (err) {
      db.query(`ROLLBACK TO ${name}`).run();
      db.query(`RELEASE ${name}`).run();
      throw err;
    }
  };
}

function over(sync: SyncStatements, tx: TxRunner): Db {
  return {
    engine: "sqlite",
    all: async (query) => sync.all(query),
    get: async (query) => sync.get(query),
    run: async (query) => sync.run(query),
    tx,
  };
}
