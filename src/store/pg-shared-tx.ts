// Writes on PostgreSQL that arrive together share one transaction (issue 38), as the
// outgoing queue's do on SQLite (group-commit.ts): each in a transaction of its own paid a
// BEGIN, a COMMIT and its WAL flush (synchronous_commit on). Writes of any shape, each its
// own function run in turn in the shared transaction: the batching itself (waiting, at most
// so many per transaction, a failed batch retried one write at a time so only the one at
// fault fails) is PgBatchWriter's.
import type { SQL, TransactionSQL } from "bun";
import { PgBatchWriter } from "./pg-batch-writer.ts";

/** Writes per shared transaction at most; more wait for the next one. */
export const PG_WRITES_PER_TRANSACTION = 100;

type Write = (tx: TransactionSQL) => Promise<unknown>;

export class PgSharedTransactions {
  private readonly batches: PgBatchWriter<Write, unknown>;

  constructor(sql: SQL, maxPerTransaction = PG_WRITES_PER_TRANSACTION) {
    this.batches = new PgBatchWriter<Write, unknown>(
      sql,
      async (tx, writes) => {
        const out: unknown[] = [];
        for (const write of writes) out.push(await write(tx));
        return out;
      },
      maxPerTransaction,
    );
  }

  /** Runs `write` in the next shared transaction; resolves with its result once committed. */
  run<T>(write: (tx: TransactionSQL) => Promise<T>): Promise<T> {
    return this.batches.write(write) as Promise<T>;
  }
}
