// The operator's view of the outgoing queue and the bulk actions on it (API.md section 10:
// GET /queue, /queue/summary, POST /queue/hold|release|retry|cancel|redeliver), in the
// queue's nouns. queue-control.repo.ts implements it once for both engines.
import type { MessageEvent, NewEvent } from "../../events/message-event.ts";
import type { Db } from "../../store/db/db.ts";
import type { FailureClass } from "../bounces/failure-class.ts";

/** Which waiting recipients an action touches; at least one of the first three is set (the API refuses an empty filter). */
export interface QueueFilter {
  destination?: string;
  outboundAccountId?: string;
  messageId?: string;
  /** Only recipients of messages accepted at least this long ago. */
  olderThanMs?: number;
}

export type QueueEntryState = "queued" | "held" | "scheduled";

/** A recipient waiting in the queue, as GET /queue shows it. */
export interface QueueEntry {
  id: string;
  messageId: string;
  outboundAccountId: string;
  recipient: string;
  destination: string;
  state: QueueEntryState;
  attempts: number;
  nextAttemptAtMs: number;
  /** The reply (or our own error) of its latest failed attempt, or null before any. */
  lastResponse: string | null;
}

/** One destination's waiting recipients, as GET /queue/summary shows it. */
export interface DestinationSummary {
  destination: string;
  queued: number;
  held: number;
  paused: boolean;
  /** When the oldest message waiting for this destination was accepted. */
  oldestAtMs: number;
  lastResponse: string | null;
}

export interface RedeliverRequest {
  bounceClass: FailureClass;
  sinceMs: number;
  destination?: string;
  outboundAccountId?: string;
}

/** What cancel records elsewhere: the `error` events, in the action's transaction (the events feature's, wiring.ts). */
export interface ControlEvents {
  record(tx: Db, events: readonly NewEvent[], opts: { webhook: boolean }): Promise<MessageEvent[]>;
}

export interface QueueControlRepo {
  /** Waiting recipients (queued or held), soonest due first, at most `limit`. */
  list(filter: { destination?: string; outboundAccountId?: string; state?: QueueEntryState }, limit: number): Promise<QueueEntry[]>;
  /** The destinations with waiting recipients, most waiting first, at most `limit`. */
  summary(limit: number, nowMs: number): Promise<DestinationSummary[]>;
  /** Queued recipients no worker holds now become held: never attempted until released. Returns how many. */
  hold(filter: QueueFilter, nowMs: number): Promise<number>;
  /** Held recipients are queued again, due at `nowMs`. */
  release(filter: QueueFilter, nowMs: number): Promise<number>;
  /** Queued (not held) recipients due later become due at `nowMs`. */
  retry(filter: QueueFilter, nowMs: number): Promise<number>;
  /**
   * Queued or held recipients no worker holds now end with an `error` event saying `reason`;
   * `webhook(outboundAccountId)` says whether their events go to a webhook.
   */
  cancel(filter: QueueFilter, nowMs: number, reason: string, webhook: (outboundAccountId: string) => boolean): Promise<number>;
  /** Recipients that got a `bounce` of the class since `sinceMs` (and are still bounced) are queued again, due at `nowMs`. */
  redeliver(req: RedeliverRequest, nowMs: number): Promise<number>;
}
