// Writes on PostgreSQL that arrive together share one transaction (issue 38), as the
// outgoing queue's do on SQLite (group-commit.ts): each in a transaction of its own paid a
// BEGIN, a COMMIT and its WAL flush (synchronous_commit on). A write that arrives while a
// shared transaction commits waits for it and goes in the next one with the others; a lone
// write on an idle server starts at once, so nothing waits for a timer. Each resolves only
// after the commit that holds it. A shared transaction that fails (a write's error, a
// deadlock between two nodes' batches that PostgreSQL broke) is rolled back whole and each
// write runs again in a transaction of its own, so only the one at fault fails.
import type { SQL, TransactionSQL } from "bun";

/** Writes per shared transaction at most; more wait for the next one. */
export const PG_WRITES_PER_TRANSACTION = 100;

interface Waiting {
  write: (tx: TransactionSQL) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class PgSharedTransactions {
  private waiting: Waiting[] = [];
  private committing = false;

  constructor(
    private readonly sql: SQL,
    private readonly maxPerTransaction = PG_WRITES_PER_TRANSACTION,
  ) {}

  /** Runs `write` in the next shared transaction; resolves with its result once committed. */
  run<T>(write: (tx: TransactionSQL) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (!this.committing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.committing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxPerTransaction);
        let results: unknown[];
        try {
          results = await this.sql.begin(async (tx) => {
            const out: unknown[] = [];
            for (const w of batch) out.push(await w.write(tx));
            return out;
          });
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else for (const w of batch) await this.sql.begin((tx) => w.write(tx)).then(w.resolve, w.reject);
          continue;
        }
        for (const [i, w] of batch.entries()) w.resolve(results[i]);
      }
    } finally {
      this.committing = false;
    }
  }
}
