// Writes of one kind on PostgreSQL that arrive together, written together (issue 38): one
// transaction and one set of multi-row statements for all of them (`writeAll`), where each
// in a transaction of its own paid a BEGIN, its statements, a COMMIT and its WAL flush
// (synchronous_commit on). Sends (pg-insert-batch.ts), outcomes (outcome-batch.pg.repo.ts),
// statuses and writes of any shape (pg-shared-tx.ts) all batch through it: a write that
// arrives while a batch commits waits for it and goes in the next one; a lone write on an idle server starts at once, so nothing waits for a timer; each
// resolves only after the commit that holds it. A batch that fails is rolled back whole and
// each write runs again alone, so only the one at fault fails.
import type { SQL, TransactionSQL } from "bun";

/** Writes per batch at most; more wait for the next one. */
export const PG_BATCH_WRITES = 100;

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/** Items of type T, each answered with an R (the writer's result at its index). */
export class PgBatchWriter<T, R = void> {
  private waiting: Waiting<T, R>[] = [];
  private committing = false;

  constructor(
    private readonly sql: SQL,
    /** Writes every item given, in `tx` (multi-row statements: one round trip for all); the result of each, in order (none for R = void). */
    private readonly writeAll: (tx: TransactionSQL, items: readonly T[]) => Promise<R[]>,
    private readonly maxPerBatch = PG_BATCH_WRITES,
  ) {}

  /** Writes `item` with whichever others are waiting; resolves with its result once committed. */
  write(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.committing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.committing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxPerBatch);
        try {
          const results = await this.sql.begin((tx) =>
            this.writeAll(
              tx,
              batch.map((w) => w.item),
            ),
          );
          for (const [i, w] of batch.entries()) w.resolve(results[i] as R);
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          // Rolled back whole: each write again on its own, so only the one at fault fails.
          else
            for (const w of batch)
              await this.sql.begin((tx) => this.writeAll(tx, [w.item])).then((results) => w.resolve(results[0] as R), w.reject);
        }
      }
    } finally {
      this.committing = false;
    }
  }
}
