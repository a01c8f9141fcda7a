// Writes of one kind on PostgreSQL that arrive together, written together (issue 38): one
// transaction and one set of multi-row statements for all of them (`writeAll`), where each
// in a transaction of its own paid a BEGIN, its statements, a COMMIT and its WAL flush
// (synchronous_commit on). The pattern of pg-insert-batch.ts (sends) and pg-shared-tx.ts
// (outcomes): a write that arrives while a batch commits waits for it and goes in the next
// one; a lone write on an idle server starts at once, so nothing waits for a timer; each
// resolves only after the commit that holds it. A batch that fails is rolled back whole and
// each write runs again alone, so only the one at fault fails.
import type { SQL, TransactionSQL } from "bun";

/** Writes per batch at most; more wait for the next one. */
export const PG_BATCH_WRITES = 100;

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class PgBatchWriter<T> {
  private waiting: Waiting<T>[] = [];
  private committing = false;

  constructor(
    private readonly sql: SQL,
    /** Writes every item given, in `tx` (multi-row statements: one round trip for all). */
    private readonly writeAll: (tx: TransactionSQL, items: readonly T[]) => Promise<void>,
    private readonly maxPerBatch = PG_BATCH_WRITES,
  ) {}

  /** Writes `item` with whichever others are waiting; resolves once committed. */
  write(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
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
          await this.sql.begin((tx) =>
            this.writeAll(
              tx,
              batch.map((w) => w.item),
            ),
          );
          for (const w of batch) w.resolve();
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          // Rolled back whole: each write again on its own, so only the one at fault fails.
          else for (const w of batch) await this.sql.begin((tx) => this.writeAll(tx, [w.item])).then(w.resolve, w.reject);
        }
      }
    } finally {
      this.committing = false;
    }
  }
}
