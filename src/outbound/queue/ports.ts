// What the outgoing queue records in tables other features own: each change of a recipient
// commits with its events, a bounce or complaint with its suppression, a queued message with
// its idempotency key's answer. The queue calls these inside its own transaction; the owning
// feature implements them on the same connection (wiring.ts builds them), so the queue's SQL
// touches only the queue's tables.
import type { TransactionSQL } from "bun";
import type { MessageEvent, NewEvent } from "../../events/message-event.ts";
import type { KeyAnswer } from "../sending/idempotency.ts";
import type { Suppression } from "../suppressions/suppression.ts";

export interface QueueEventLog {
  /** Records events (and their webhook outbox rows unless `webhook` is false) in the caller's transaction. */
  record(events: readonly NewEvent[], opts?: { webhook?: boolean }): MessageEvent[];
  /** Every event of these recipients, oldest first. */
  ofRecipients(recipientIds: readonly string[]): MessageEvent[];
}

export interface QueueSuppressions {
  /** Adds the address to the outbound account's suppression list, in the caller's transaction; a second time changes nothing. */
  suppress(entry: Omit<Suppression, "id">): void;
}

export interface QueueAnswers {
  /** Stores a claimed idempotency key's answer, in the transaction that queues its message. */
  record(answer: KeyAnswer, nowMs: number): void;
}

export interface QueuePorts {
  events: QueueEventLog;
  suppressions: QueueSuppressions;
  answers: QueueAnswers;
}

/** What the retention purge of sent messages needs from the events feature, on the purge's connection. */
export interface PurgeEvents {
  /** The messages among `messageIds` (a JSON array) with an event still waiting for its webhook POST. */
  pendingAmong(messageIds: string): Set<string>;
  /** Deletes every event of the messages (a JSON array of IDs) with its webhook bookkeeping, in the caller's transaction. */
  deleteOfMessages(messageIds: string): void;
}

/**
 * The same ports on PostgreSQL (queue.pg.repo.ts): each takes the queue's transaction and
 * writes in it (wiring.ts, pgQueuePorts, builds them from the owning features' repositories).
 */
export interface PgQueuePorts {
  events: {
    /** Records events (and their webhook outbox rows unless `webhook` is false) in `tx`. */
    record(tx: TransactionSQL, events: readonly NewEvent[], opts?: { webhook?: boolean }): Promise<MessageEvent[]>;
  };
  suppressions: {
    /** Adds the address to the outbound account's suppression list in `tx`; a second time changes nothing. */
    suppress(tx: TransactionSQL, entry: Omit<Suppression, "id">): Promise<void>;
  };
  answers: {
    /** Stores a claimed idempotency key's answer in `tx`, the transaction that queues its message. */
    record(tx: TransactionSQL, answer: KeyAnswer, nowMs: number): Promise<void>;
  };
}
