// The retention purge: one job that walks every table that grows with traffic and deletes
// what is older than its retention, in windows of retention.batch_size rows, one
// transaction each, handing the event loop back between windows (after
// retention.batch_pause) so that SMTP and the API keep being served while a large backlog
// goes. Which rows a table may lose, and its SQL, are its repository's (a Purge each);
// on SQLite the appliance runs the windows on a thread of their own (purge-thread.ts), on
// PostgreSQL on the event loop (retention-tables.pg.ts).
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { Purge } from "../store/purge-window.ts";
import { purgeCutoffs, RETENTION_TABLES, type RetentionSettings, type RetentionTable } from "./retention.ts";

export type PurgeCounts = Record<RetentionTable, number>;

export interface RetentionPurgeDeps {
  purges: Record<RetentionTable, Purge>;
  clock: Clock;
  logger: Logger;
  /** Read at each run, so a reload (SIGHUP) changes retentions from the next run on. */
  settings(): RetentionSettings;
  /** Called by stop() once no window runs any more (the purge thread's close). */
  close?(): Promise<void>;
}

/** Hands the event loop back: after `ms`, or at least after the pending I/O (0). */
const yieldFor = (ms: number) => new Promise<void>((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

export class RetentionPurge {
  private running: Promise<PurgeCounts> | null = null;
  private stopping = false;

  constructor(private readonly deps: RetentionPurgeDeps) {}

  /** One run over every table (a run already under way is joined, not doubled); resolves with the rows deleted per table. */
  run(): Promise<PurgeCounts> {
    this.running ??= this.walkAll().finally(() => (this.running = null));
    return this.running;
  }

  /** Ends a run under way after its current window (before the store closes). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running?.catch(() => undefined);
    await this.deps.close?.();
  }

  private async walkAll(): Promise<PurgeCounts> {
    const settings = this.deps.settings();
    const startedMs = performance.now();
    const cutoffs = purgeCutoffs(this.deps.clock.nowMs(), settings.keepMs);
    const deleted = Object.fromEntries(RETENTION_TABLES.map((t) => [t, 0])) as PurgeCounts;
    let windows = 0;
    for (const table of RETENTION_TABLES) {
      const beforeMs = cutoffs[table];
      if (beforeMs === null) continue;
      let after: number | null = 0;
      while (after !== null && !this.stopping) {
        if (windows++ > 0) await yieldFor(settings.batchPauseMs);
        if (this.stopping) break;
        const step = await this.deps.purges[table](beforeMs, after, settings.batchSize);
        deleted[table] += step.deleted;
        after = step.next;
      }
    }
    this.deps.logger.info("retention purge", {
      deleted,
      windows,
      duration_ms: Math.round(performance.now() - startedMs),
      stopped: this.stopping || undefined,
    });
    return deleted;
  }
}
