// Writes that arrive close together share one transaction, and so one commit (one fsync
// of the WAL under synchronous=FULL), instead of paying one each: the outgoing queue
// (accepting a message, recording an attempt's outcome) and the incoming statuses. Each
// write runs in a savepoint of its own: one that fails is rolled back alone and rejects
// alone. Every caller's promise settles only after the shared commit, so a 202 or 250
// still means the rows are on disk.
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
    // Plain statements rather than db.transaction(), which builds a new wrapper (and
    // defines its properties) on every call: twice per write here, on the inbound path.
    const { db } = this;
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    let nested = false;
    try {
      nested = db.inTransaction;
      db.query(nested ? "SAVEPOINT group_commit" : "BEGIN").run();
    } catch (err) {
      for (const q of batch) q.reject(err);
      return;
    }
    // A write alone needs no savepoint of its own: the transaction is one.
    const alone = batch.length === 1;
    try {
      for (const q of batch) {
        // Each write in a savepoint of its own: released into the shared transaction, or
        // rolled back alone.
        if (!alone) db.query("SAVEPOINT group_commit_write").run();
        try {
          outcomes.push({ ok: true, value: q.write() });
        } catch (err) {
          // Alone, its failure is the batch's: undone and rejected below.
          if (alone) throw err;
          db.query("ROLLBACK TO group_commit_write").run();
          outcomes.push({ ok: false, err });
        }
        if (!alone) db.query("RELEASE group_commit_write").run();
      }
      db.query(nested ? "RELEASE group_commit" : "COMMIT").run();
    } catch (err) {
      // The commit itself failed (disk full, I/O error), or the only write did: nothing
      // of the batch is stored.
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
