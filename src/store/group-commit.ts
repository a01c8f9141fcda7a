// Writes that arrive close together share one transaction, and so one commit (one fsync
// of the WAL under synchronous=FULL), instead of paying one each: the outgoing queue
// (accepting a message, recording an attempt's outcome) and the incoming statuses. A write
// that fails is rolled back alone and rejects alone (each write runs in a savepoint of its
// own, or, for rerunnable writes, the batch runs again that way once one has failed).
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

export interface GroupCommitOptions {
  /**
   * The writes touch nothing but the database, so one can run twice. A batch of them then
   * runs without a savepoint for each write; only when one fails is the batch undone and
   * run again with a savepoint each, so the failing write still fails alone. A savepoint
   * and its release cost two statements per write, more than the insert they guard.
   */
  rerunnable?: boolean;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

export class GroupCommit {
  private queued: Queued[] = [];
  private scheduled = false;
  private readonly rerunnable: boolean;

  constructor(
    private readonly db: Database,
    private readonly windowMs = COMMIT_WINDOW_MS,
    options: GroupCommitOptions = {},
  ) {
    this.rerunnable = options.rerunnable ?? false;
  }

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
    // A write alone needs no savepoint of its own: the transaction is one, and its failure
    // is the batch's. Rerunnable writes try first without them too.
    const together = batch.length === 1 || this.rerunnable;
    if (together && this.runBatch(batch, false)) return;
    this.runBatch(batch, true);
  }

  /**
   * Runs the batch in one transaction (a savepoint inside an open one) and settles every
   * write; each write in a savepoint of its own if `isolate`. Without, a failing write
   * undoes the batch: alone, it is rejected; among others, nothing is settled and the
   * answer is false, for the caller to run the batch again isolated.
   */
  private runBatch(batch: Queued[], isolate: boolean): boolean {
    // Plain statements rather than db.transaction(), which builds a new wrapper (and
    // defines its properties) on every call: twice per write here, on the inbound path.
    const { db } = this;
    let nested = false;
    try {
      nested = db.inTransaction;
      db.query(nested ? "SAVEPOINT group_commit" : "BEGIN").run();
    } catch (err) {
      for (const q of batch) q.reject(err);
      return true;
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
      if (!isolate && batch.length > 1 && outcomes.length < batch.length) return false;
      for (const q of batch) q.reject(err);
      return true;
    }
    batch.forEach((q, i) => {
      const o = outcomes[i]!;
      if (o.ok) q.resolve(o.value);
      else q.reject(o.err);
    });
    return true;
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
