// (beyond) An address with on_target_failure = "queue" whose target failed: the message is
// kept in the store (inbound-queue.port.ts) before the sender hears 250, so a crash after
// the answer loses nothing. Kept only within the account's share of disk
// (inbound.max_queued_per_account): beyond it, or when the store cannot keep it, the mail
// is deferred (451) as with "defer", and the sender keeps it.
import { newId16 } from "../../lib/ids.ts";
import type { Logger } from "../../lib/logger.ts";
import type { InboundQueueRepo, QueuedFacts } from "./inbound-queue.port.ts";
import { nextAttemptAt } from "./queue-decisions.ts";

export interface QueueSettings {
  repo: InboundQueueRepo;
  /** inbound.retry_delays. */
  retryDelaysMs: readonly number[];
  /** inbound.max_queue_time. */
  maxQueueTimeMs: number;
  /** inbound.max_queued_per_account. */
  maxQueuedBytesPerAccount: number;
}

export interface ToKeep {
  accountId: string;
  addressId: string;
  statusIds: string[];
  facts: QueuedFacts;
  raw: Buffer;
  /** The target's answer to the first POST. */
  lastResponse: string | null;
  nowMs: number;
}

/** Keeps the message; the time of its next POST, or null when it was not kept (the caller defers). */
export async function keepForLater(m: ToKeep, q: QueueSettings, log: Logger): Promise<number | null> {
  const nextMs = nextAttemptAt(1, m.nowMs, m.nowMs, q.retryDelaysMs, q.maxQueueTimeMs);
  if (nextMs === null) return null;
  try {
    const waiting = await q.repo.queuedBytes(m.accountId);
    if (waiting + m.raw.length > q.maxQueuedBytesPerAccount) {
      log.warn("target failed and the account's kept mail is at inbound.max_queued_per_account: deferred (451) instead", {
        address_id: m.addressId,
        queued_bytes: waiting,
        size: m.raw.length,
        max_queued_per_account: q.maxQueuedBytesPerAccount,
      });
      return null;
    }
    await q.repo.insert({
      id: newId16(),
      accountId: m.accountId,
      addressId: m.addressId,
      statusIds: m.statusIds,
      facts: m.facts,
      message: m.raw,
      traceBytes: Buffer.byteLength(m.facts.trace),
      sizeBytes: m.raw.length,
      attempts: 1,
      createdAtMs: m.nowMs,
      nextAttemptAtMs: nextMs,
      lastResponse: m.lastResponse,
    });
    return nextMs;
  } catch (err) {
    // The sender still has the message: it hears 451 and tries again.
    log.error("target failed and the message could not be kept: deferred (451) instead", { err, address_id: m.addressId });
    return null;
  }
}
