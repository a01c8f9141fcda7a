// Writes of one kind on PostgreSQL that arrive together, written together (issue 38): one
// transaction and one set of multi-row statements for all of them (`writeAll`), where each
// in a transaction of its own paid a BEGIN, its statements, a COMMIT and its WAL flush
// (synchronous_commit on). Sends (pg-insert-batch.ts), outcomes (outcome-batch.pg.repo.ts),
// statuses and writes of any shape (pg-shared-tx.ts) all batch through it: a write that
// arrives while a batch commits waits for it and goes in the next one; a lone write on an idle server starts at once, so nothing waits for a timer; each
// resolves only after the commit that holds it. A batch that fails is rolled back whole and
// each write runs again alone, so only the one at fault fails.
import type { SQL, TransactionSQL } from "bun";
import { Coalescer } from "../lib/coalescer.ts";

/** Writes per batch at most; more wait for the next one. */
export const PG_BATCH_WRITES = 100;

/** Items of type T, each answered with an R (the writer's result at its index). */
export class PgBatchWriter<T, R = void> {
  private readonly coalescer: Coalescer<T, R>;

  constructor(
    sql: SQL,
    /** Writes every item given, in `tx` (multi-row statements: one round trip for all); the result of each, in order (none for R = void). */
    writeAll: (tx: TransactionSQL, items: readonly T[]) => Promise<R[]>,
    maxPerBatch = PG_BATCH_WRITES,
  ) {
    this.coalescer = new Coalescer((items) => sql.begin((tx) => writeAll(tx, items)), {
      maxPerRun: maxPerBatch,
      // Rolled back whole: each write again on its own, so only the one at fault fails.
      alone: async (item) => (await sql.begin((tx) => writeAll(tx, [item])))[0] as R,
    });
  }

  /** Writes `item` with whichever others are waiting; resolves with its result once committed. */
  write(item: T): Promise<R> {
    return this.coalescer.submit(item);
  }
}
