// The retention purge's windows run on a worker thread with a database connection of its
// own. On the event loop, a window's delete took 2-4 ms, but its commit now and then ran
// a WAL checkpoint (SQLite's autocheckpoint runs in the connection whose commit fills the
// WAL, and a purge fills it faster than anything else) that copied ~1,000 pages and
// synced the database file: 10-50 ms in which no SMTP session was served. bench:purge saw
// inbound p99 latency rise 1.9 to 5.5 times that way. On its own thread the purge's
// commits, and a checkpoint after each window, wait for the disk there (without that
// checkpoint the next commit on the event loop often found the WAL past its 1,000 pages
// and copied them itself: a status commit took up to 16-18 ms while 300,000 rows were
// purged on an idle machine, 66-96 ms on a busy one; with it, 4-10 ms).
// The event loop only waits for SQLite's write lock when a status commit meets a window
// (the pause between windows leaves it free most of the time). The loop over windows,
// with its pauses, stays on the main thread (retention-purge.ts).
import type { Logger } from "../lib/logger.ts";
import type { Purge, PurgeStep } from "../store/purge-window.ts";
import { PURGE_WORKER_URL } from "../workers.ts";
import { RETENTION_TABLES, type RetentionTable } from "./retention.ts";

export type PurgeRequest =
  | { id: number; kind: "window"; dataDir: string; table: RetentionTable; beforeMs: number; afterRowid: number; limit: number }
  | { id: number; kind: "close" };
export type PurgeReply = { id: number; ok: true; step: PurgeStep | null } | { id: number; ok: false; message: string };

type Request = PurgeRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

export class PurgeThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (step: PurgeStep | null) => void; reject: (err: Error) => void }>();
  private nextId = 1;

  constructor(
    private readonly dataDir: string,
    private readonly logger: Logger,
  ) {}

  /** A Purge per table, each run on the thread (started at the first window). */
  purges(): Record<RetentionTable, Purge> {
    const purgeOf =
      (table: RetentionTable): Purge =>
      async (beforeMs, afterRowid, limit) =>
        (await this.request({ kind: "window", dataDir: this.dataDir, table, beforeMs, afterRowid, limit }))!;
    return Object.fromEntries(RETENTION_TABLES.map((t) => [t, purgeOf(t)])) as Record<RetentionTable, Purge>;
  }

  /** Closes the thread's connection and ends the thread (at shutdown, after the last window). */
  async close(): Promise<void> {
    if (!this.worker) return;
    await this.request({ kind: "close" }).catch(() => undefined);
    this.worker?.terminate();
    this.worker = null;
  }

  private request(request: Request): Promise<PurgeStep | null> {
    const worker = (this.worker ??= this.spawn());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id });
    });
  }

  private spawn(): Worker {
    const worker = new Worker(PURGE_WORKER_URL);
    // The purge never keeps the process alive; App.stop() closes it.
    worker.unref();
    worker.onmessage = (event: MessageEvent<PurgeReply>) => {
      const reply = event.data;
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (reply.ok) p.resolve(reply.step);
      else p.reject(new Error(reply.message));
    };
    worker.onerror = (event) => {
      // The run fails (the scheduler logs it); the next run starts another thread.
      this.logger.error("purge thread failed", { err: String((event as ErrorEvent).message ?? event) });
      if (this.worker === worker) this.worker = null;
      worker.terminate();
      for (const p of this.pending.values()) p.reject(new Error("the purge thread failed"));
      this.pending.clear();
    };
    return worker;
  }
}
