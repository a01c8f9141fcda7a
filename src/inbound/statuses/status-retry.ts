// Incoming statuses whose write failed after their targets had answered (post-message.ts,
// recordAnswered): a PostgreSQL that went away, a full disk under SQLite's journal. The
// sender already has the reply the targets' answers gave: a 451 would make it send the
// message again, and the target would get it twice. So the statuses are held here, in
// memory and bounded, and written again with growing delays; each failure and each loss is
// logged at error with the message's id and counted (postroom_inbound_status_writes_failed_total,
// postroom_inbound_statuses_lost_total). A status is the record of what a target answered,
// not mail we hold: one that cannot be written in the end is lost, and its log line is all
// that is left of it, so that line carries its fields.
import type { LogFields, Logger } from "../../lib/logger.ts";
import type { IncomingStatus } from "./incoming-status.ts";
import type { StatusRepo } from "./statuses.port.ts";

/** How long a held status waits before each new write, in turn; after the last it is lost. About 17 minutes in all. */
export const STATUS_RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000, 30_000, 60_000, 300_000, 600_000];

export interface StatusRetryDeps {
  /** Writes the statuses (StatusRepo.record); rejects when they are not stored. */
  write(rows: IncomingStatus[]): Promise<void>;
  logger: Logger;
  /** Statuses held at most (inbound.status_retry_rows); beyond, new failures are lost at once. */
  maxRows(): number;
  /** `count` statuses failed to be written (first write, "failed") or were given up ("lost"). */
  counted(outcome: "failed" | "lost", count: number): void;
  /** STATUS_RETRY_DELAYS_MS unless a test says otherwise. Real time: the timers that wait them are. */
  delaysMs?: readonly number[];
}

interface Held {
  rows: IncomingStatus[];
  /** Writes tried again so far. */
  retries: number;
  dueMs: number;
  log: Logger;
}

/** What a log line keeps of a status: enough to find the message and to know what became of it. */
const statusFields = (rows: readonly IncomingStatus[]): LogFields => ({
  status_ids: rows.map((r) => r.id).join(","),
  statuses: rows.map((r) => ({
    id: r.id,
    address_id: r.addressId,
    message_id_header: r.messageId,
    from: r.mailFrom,
    to: r.rcptTo,
    subject: r.subject,
    status: r.status,
    x_postroom_message_id: r.postroomMessageId,
    created_at_ms: r.createdAtMs,
  })),
});

export class StatusRetry {
  private held: Held[] = [];
  private heldRows = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private writing = false;
  private readonly delaysMs: readonly number[];

  constructor(private readonly deps: StatusRetryDeps) {
    this.delaysMs = deps.delaysMs ?? STATUS_RETRY_DELAYS_MS;
  }

  /** Statuses held now, waiting for a new write. */
  get pendingRows(): number {
    return this.heldRows;
  }

  /** The first write of `rows` failed with `err`; `log` carries the message's fields (message_id). */
  failed(rows: IncomingStatus[], err: unknown, log: Logger): void {
    if (rows.length === 0) return;
    this.deps.counted("failed", rows.length);
    if (this.heldRows + rows.length > this.deps.maxRows()) {
      this.lose(rows, log, err, `more than inbound.status_retry_rows (${this.deps.maxRows()}) statuses wait already`);
      return;
    }
    log.error(
      "incoming statuses could not be stored after the target answered; the sender keeps its reply, and they are written again later",
      { err, ...statusFields(rows) },
    );
    this.held.push({ rows, retries: 0, dueMs: Date.now() + this.delaysMs[0]!, log });
    this.heldRows += rows.length;
    this.schedule();
  }

  /** Tries every held status once more now (at shutdown); what still fails is lost. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const held = this.take(() => true);
    for (const h of held) {
      try {
        await this.deps.write(h.rows);
      } catch (err) {
        this.lose(h.rows, h.log, err, "the process is stopping");
      }
    }
  }

  private take(due: (h: Held) => boolean): Held[] {
    const taken = this.held.filter(due);
    this.held = this.held.filter((h) => !due(h));
    for (const h of taken) this.heldRows -= h.rows.length;
    return taken;
  }

  private schedule(): void {
    if (this.timer || this.writing || this.held.length === 0) return;
    const nextMs = Math.min(...this.held.map((h) => h.dueMs));
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.retryDue();
      },
      Math.max(0, nextMs - Date.now()),
    );
    // Held statuses never keep the process alive: close() tries them once more.
    this.timer.unref?.();
  }

  private async retryDue(): Promise<void> {
    this.writing = true;
    const nowMs = Date.now();
    try {
      for (const h of this.take((x) => x.dueMs <= nowMs)) {
        try {
          await this.deps.write(h.rows);
          h.log.info("incoming statuses stored on a later try", { status_ids: h.rows.map((r) => r.id).join(","), tries: h.retries + 2 });
        } catch (err) {
          const delayMs = this.delaysMs[h.retries + 1];
          if (delayMs === undefined) this.lose(h.rows, h.log, err, `still failing after ${h.retries + 2} tries`);
          else {
            this.held.push({ ...h, retries: h.retries + 1, dueMs: Date.now() + delayMs });
            this.heldRows += h.rows.length;
          }
        }
      }
    } finally {
      this.writing = false;
      this.schedule();
    }
  }

  private lose(rows: IncomingStatus[], log: Logger, err: unknown, why: string): void {
    this.deps.counted("lost", rows.length);
    log.error(`incoming statuses lost: ${why}; this line is their only record`, { err, ...statusFields(rows) });
  }
}

/**
 * Records the statuses of a message its targets have answered. A failure never becomes the
 * reply: a 451 would make the sender send the message again, and a target that took it
 * would get it twice. The statuses go to `statusRetry` instead, which logs them (with the
 * message's fields `log` carries), counts them and writes them again later.
 */
export async function recordAnswered(
  rows: IncomingStatus[],
  deps: { statuses: Pick<StatusRepo, "record">; statusRetry: Pick<StatusRetry, "failed"> },
  log: Logger,
): Promise<void> {
  try {
    await deps.statuses.record(rows);
  } catch (err) {
    deps.statusRetry.failed(rows, err, log);
  }
}
