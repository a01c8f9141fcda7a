// The outgoing queue's repository port: what the API, the delivery worker and the other
// features ask of the queue, in the queue's own nouns (message.ts), nothing of either
// engine. queue.repo.ts implements all of it on SQLite; queue.pg.repo.ts implements the part
// the delivery worker needs to share a queue between nodes (QueueLeases) on PostgreSQL.
import type { MessageEvent, NewEvent } from "../../events/message-event.ts";
import type { LifecycleKind } from "../../events/kinds.ts";
import type { SearchTerm } from "../../lib/search-query.ts";
import type { KeyAnswer } from "../sending/idempotency.ts";
import type { SuppressionOrder } from "../suppressions/suppression.ts";
import type { Page, PageRequest } from "../../store/paging.ts";
import type { ClaimedRecipient, OutboundMessage, OutboundRecipient, RecipientUpdate } from "./message.ts";

export interface EventOptions {
  /** False when the outbound account has no webhook: the events get no webhook outbox rows. */
  webhook?: boolean;
}

/** What a reschedule did: the recipients it moved, or why it could not. */
export type RescheduleResult = { rescheduled: number } | { refused: "attempted" | "nothing_waits" };

/** Whether a message's recipients allow it to be rescheduled, from their queue state (both engines). */
export function rescheduleRefusal(
  rows: readonly { state: string; attempts: number; lockedUntilMs: number | null }[],
  nowMs: number,
): "attempted" | "nothing_waits" | null {
  if (rows.some((r) => r.attempts > 0 || (r.state === "queued" && r.lockedUntilMs !== null && r.lockedUntilMs >= nowMs)))
    return "attempted";
  return rows.some((r) => r.state === "queued") ? null : "nothing_waits";
}

/** A message ready to be stored: its row, its recipients', their first events and its bytes. */
export interface QueuedMessage {
  message: OutboundMessage;
  recipients: OutboundRecipient[];
  events: NewEvent[];
  raw: Buffer;
}

/**
 * Accepting messages and leasing their recipients to delivery workers, on both engines.
 * A recipient is leased to one worker until `leaseUntilMs`; at that time and before, no
 * other worker claims it; after it, any worker may (its holder is taken to be gone).
 */
export interface QueueLeases {
  /**
   * Message, its raw bytes (when given),
   * recipients and their first events, and the answer of the idempotency key it was sent
   * with (a replay then returns exactly that answer), all or nothing; resolves once on disk.
   */
  insert(
    message: OutboundMessage,
    recipients: OutboundRecipient[],
    events: NewEvent[],
    opts?: { raw?: Buffer; answer?: KeyAnswer } & EventOptions,
  ): Promise<void>;
  /**
   * As insert, for several messages in one transaction (POST /messages/batch), with one
   * idempotency answer for all of them: all or nothing; resolves once on disk.
   */
  insertMany(queued: readonly QueuedMessage[], opts?: { answer?: KeyAnswer } & EventOptions): Promise<void>;
  /** The raw message stored with it, or null once retention.bodies has deleted it. */
  rawMessage(messageId: string): Promise<Buffer | null>;
  /**
   * Leases up to `limit` due recipients to `workerId` until `leaseUntilMs`: lower lanes
   * first, then the longest waiting; none of the domains in `busyDomains`. Recipients
   * due at the same time come in no set order.
   */
  claimDue(
    workerId: string,
    nowMs: number,
    leaseUntilMs: number,
    limit: number,
    busyDomains: readonly string[],
  ): Promise<ClaimedRecipient[]>;
  /**
   * The holder's heartbeat: extends to `leaseUntilMs` the leases `workerId` still holds at
   * `nowMs` among `recipientIds` (queued, its own, not ended), in one statement, and returns
   * the IDs renewed. One missing from the answer is no longer this worker's (its lease ran
   * out, another worker took it, or its outcome was recorded): the worker stops counting on it.
   */
  renewLeases(workerId: string, recipientIds: readonly string[], nowMs: number, leaseUntilMs: number): Promise<string[]>;
  /** Releases every lease held by workers whose ID starts with `prefix` (this host's, at start-up). */
  releaseHeldBy(prefix: string): Promise<number>;
  /**
   * Gives leased recipients back unattempted. With `workerId`, only those this worker still
   * holds: a worker whose lease was taken over cannot free the new holder's recipients.
   * With `dueAtMs`, they are not due before then (a warm-up cap: no attempt is counted).
   */
  release(recipientIds: readonly string[], workerId?: string, dueAtMs?: number): Promise<void>;
  /**
   * Records an attempt's outcome and its events and releases the lease, only while
   * `workerId` still holds the recipient's lease at `nowMs`; resolves once on disk. Null,
   * with nothing written, when the lease ended or another worker holds it now.
   */
  finishAttempt(
    workerId: string,
    recipientId: string,
    update: RecipientUpdate,
    events: NewEvent[],
    nowMs: number,
    opts?: EventOptions,
  ): Promise<MessageEvent[] | null>;
  /** The next time a queued recipient is due, or null when none waits. */
  nextDueMs(): Promise<number | null>;
}

export interface OutboundRepo extends QueueLeases {
  /** Records an attempt's outcome and its events, and releases the lease, whoever holds it; resolves once on disk. */
  update(recipientId: string, update: RecipientUpdate, events: NewEvent[], opts?: EventOptions): Promise<MessageEvent[]>;
  /**
   * Adds events that do not change the queue state (open, click, a late DSN), and with
   * `suppress` puts the address on the suppression list in the same commit (a hard bounce,
   * a complaint: suppressionFor).
   */
  addEvents(
    recipientId: string,
    status: LifecycleKind | null,
    events: NewEvent[],
    suppress?: SuppressionOrder | null,
  ): Promise<MessageEvent[]>;
  /** Recipients waiting for a delivery attempt, due at `nowMs` or later (the queue depth on /metrics). */
  queueDepth(nowMs: number): Promise<{ due: number; scheduled: number; held: number }>;
  getMessage(accountId: string, id: string): Promise<OutboundMessage | null>;
  getMessageById(id: string): Promise<OutboundMessage | null>;
  getRecipient(messageId: string, recipientId: string): Promise<OutboundRecipient | null>;
  /** As StatusRepo.list: a search reads at most `windowRows` messages and rejects with SearchTimeoutError after `timeoutMs`. */
  listMessages(
    outboundAccountId: string,
    terms: readonly SearchTerm[],
    page: PageRequest,
    windowRows?: number,
    timeoutMs?: number,
  ): Promise<Page<OutboundMessage>>;
  recipientsOf(messageIds: readonly string[]): Promise<OutboundRecipient[]>;
  /** Every event of these recipients, oldest first. */
  eventsOf(recipientIds: readonly string[]): Promise<MessageEvent[]>;
  /** Commits the grouped writes waiting for their window now (at shutdown). */
  flush(): Promise<void>;
  /** Makes a message's queued recipients due at `nowMs` (the dashboard's "retry now"); returns how many. */
  dueNow(messageId: string, nowMs: number): Promise<number>;
  /**
   * Moves a scheduled message's first attempt to `sendAtMs` (PATCH send_at): only while none
   * of its recipients was attempted or is being delivered at `nowMs`, and some still wait.
   */
  reschedule(messageId: string, sendAtMs: number, nowMs: number): Promise<RescheduleResult>;
  /**
   * Cancels a message's queued recipients that no worker holds now: each gets an `error`
   * event and leaves the queue. Returns how many were cancelled and how many are being
   * delivered at this moment (those finish their attempt).
   */
  cancelQueued(messageId: string, nowMs: number, opts?: EventOptions): Promise<{ cancelled: number; inDelivery: number }>;
}
