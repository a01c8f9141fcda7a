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
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    try {
      this.db.transaction(() => {
        for (const q of batch) {
          try {
            // Nested: a savepoint, released into the shared transaction or rolled back alone.
            outcomes.push({ ok: true, value: this.db.transaction(q.write)() });
          } catch (err) {
            outcomes.push({ ok: false, err });
          }
        }
      })();
    } catch (err) {
      // The commit itself failed (disk full, I/O error): nothing of the batch is stored.
      for (const q of batch) q.reject(err);
      return;
    }
    batch.forEach((q, i) => {
      const o = outcomes[i]!;
      if (o.ok) q.resolve(o.value);
      else q.reject(o.err);
    });
  }
}
