// Writes that arrive close together share one transaction, and so one commit (one fsync
// of the WAL under synchronous=FULL), instead of paying one each: the outgoing queue
// (accepting a message, recording an attempt's outcome). A write that fails is rolled
// back alone and rejects alone (each write runs in a savepoint of its own).
// Every caller's promise settles only after the shared commit, so a 202 or 250 still
// means the rows are on disk.
import type { Database } from "bun:sqlite";

/**
 * How long a write waits for others to share its commit; the 202 or 250 waits this long
 * too. 0: the writes of one turn of the event loop share a commit made right after its
 * I/O callbacks (setImmediate), and an idle server commits at once.
 */
export const COMMIT_WINDOW_MS = 1;

interface Queued {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

export class GroupCommit {
  private queued: Queued[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Database,
    private readonly windowMs = COMMIT_WINDOW_MS,
  ) {}

  /** Runs `write` in the next shared transaction; resolves with its result once committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ write, resolve: resolve as (v: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      if (this.windowMs > 0) setTimeout(() => this.commit(), this.windowMs);
      else setImmediate(() => this.commit());
    });
  }

  /** Commits whatever is queued now (at shutdown). */
  flush(): void {
    this.commit();
  }

  private commit(): void {
    this.scheduled = false;
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    this.runBatch(batch);
  }

  /**
   * Runs the batch in one transaction (a savepoint inside an open one) and settles every
   * write. Each write runs in a savepoint of its own, so that a failing one is rolled back
   * alone; a write alone needs none (the transaction is one, and its failure the batch's).
   */
  private runBatch(batch: Queued[]): void {
    const isolate = batch.length > 1;
    // Plain statements rather than db.transaction(), which builds a new wrapper (and
    // defines its properties) on every call: twice per write here, on the inbound path.
    const { db } = this;
    let nested = false;
    try {
      nested = db.inTransaction;
      db.query(nested ? "SAVEPOINT group_commit" : "BEGIN").run();
    } catch (err) {
      for (const q of batch) q.reject(err);
      return;
    }
    const outcomes: Outcome[] = [];
    try {
      for (const q of batch) {
        if (!isolate) {
          outcomes.push({ ok: true, value: q.write() });
          continue;
        }
        // Released into the shared transaction, or rolled back alone.
        db.query("SAVEPOINT group_commit_write").run();
        try {
          outcomes.push({ ok: true, value: q.write() });
        } catch (err) {
          db.query("ROLLBACK TO group_commit_write").run();
          outcomes.push({ ok: false, err });
        }
        db.query("RELEASE group_commit_write").run();
      }
      db.query(nested ? "RELEASE group_commit" : "COMMIT").run();
    } catch (err) {
      // A write failed outside a savepoint, or the commit itself did (disk full, I/O
      // error): nothing of the batch is stored.
      this.undo(nested);
      for (const q of batch) q.reject(err);
      return;
    }
    batch.forEach((q, i) => {
      const o = outcomes[i]!;
      if (o.ok) q.resolve(o.value);
      else q.reject(o.err);
    });
  }

  /** Drops what the open batch wrote: its savepoint inside an outer transaction, else the transaction. */
  private undo(nested: boolean): void {
    try {
      if (nested) {
        this.db.query("ROLLBACK TO group_commit").run();
        this.db.query("RELEASE group_commit").run();
      } else if (this.db.inTransaction) {
        this.db.query("ROLLBACK").run();
      }
    } catch {
      // The connection is gone; nothing is left to undo.
    }
  }
}
