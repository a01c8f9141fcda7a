// The port of the webhook outbox, whatever the engine: the dispatcher (dispatcher.ts) is
// given either engine's repository (createOutboxRepo in outbox.repo.ts on SQLite,
// createPgOutboxRepo in outbox.pg.repo.ts on PostgreSQL). A batch is taken under a lease
// and only the lease's holder finishes it, so several nodes on one database post each
// batch once in the ordinary case, and a node that dies mid-POST leaves its batch to
// another once the lease ran out. test/events/outbox-repo.contract.test.ts runs the same
// cases on both engines.
import type { Batch } from "./outbox-event.ts";

/**
 * A receiver's lane in the outbox (column `target`): an outbound account's id for the
 * config's webhook, or "endpoint:<id>" for a webhook endpoint made through the API
 * (webhook-endpoints.repo.ts). Each target has its own batches, order and retries, so one
 * receiver that is down never holds another's events.
 */
export const endpointTarget = (endpointId: string): string => `endpoint:${endpointId}`;

/** The endpoint a target names, or null for an outbound account's config webhook. */
export const endpointOfTarget = (target: string): string | null =>
  target.startsWith("endpoint:") ? target.slice("endpoint:".length) : null;

export interface OutboxRepo extends OutboxLeases {
  /** Targets with pending events, and when their next batch is due (a leased batch: when its lease ends). */
  pendingTargets(): Promise<{ target: string; dueMs: number }[]>;
  /** Gives up on events older than `maxAgeMs`; returns how many. */
  expire(nowMs: number, maxAgeMs: number): Promise<number>;
  /** Drops the pending events of a target that has no receiver (no webhook configured, an endpoint deleted). */
  drop(target: string): Promise<number>;
  /** Events waiting to be acknowledged (the webhook backlog on /metrics). */
  countPending(): Promise<number>;
  /** When the oldest pending event was created; null when none is pending. */
  oldestPendingMs(): Promise<number | null>;
  /**
   * Makes a target's pending events due at `nowMs` (retry now); returns how many
   * are pending. A leased batch's rows too: the lease ends there, its holder's finish is
   * refused and the batch is claimed again (the receiver may get it twice).
   */
  dueNow(target: string, nowMs: number): Promise<number>;
  /** A target's pending events: how many, the oldest's time, and when the next POST is due. */
  pendingOf(target: string): Promise<{ events: number; oldestMs: number | null; dueMs: number | null }>;
}

/**
 * A claim on a batch. The lease is held while the batch's pending rows are due at
 * `untilMs` exactly: a later claim (after it ran out) sets a later time, a retry or an
 * acknowledgement ends it, so (batch, untilMs) tells the holder from a node whose lease
 * ran out, without a column of its own.
 */
export interface OutboxLease {
  batchId: string;
  untilMs: number;
}

export interface LeasedBatch extends Batch {
  lease: OutboxLease;
}

export interface OutboxLeases {
  /**
   * The batch to post now for this target, leased until `nowMs + leaseMs`: the
   * one being retried (same id and events) when it is due and no lease on it is running,
   * else a new one of up to `maxEvents` due events in event order; null when there is
   * none, or while a batch of the target is leased or waiting for its retry time. One
   * batch per target at a time, so events of a message never overtake each other there.
   */
  claimBatch(target: string, nowMs: number, maxEvents: number, leaseMs: number): Promise<LeasedBatch | null>;
  /**
   * The holder's heartbeat: extends to `untilMs` the leases among `leases` still held at
   * `nowMs` (their rows still due at exactly the lease's end, and that end not passed), in
   * one statement, and returns the IDs of the batches renewed; the caller then holds them
   * until `untilMs` (it sets each renewed lease's untilMs). One missing from the answer is
   * no longer the caller's (its lease ran out, another node took it, or "retry now" ended it).
   */
  renewLeases(leases: readonly OutboxLease[], nowMs: number, untilMs: number): Promise<string[]>;
  /** The receiver acknowledged: the batch's events are sent. False, changing nothing, when the lease is no longer the caller's. */
  finishSent(lease: OutboxLease): Promise<boolean>;
  /** The POST failed: the same batch is due again at `atMs`. False, changing nothing, when the lease is no longer the caller's. */
  finishRetry(lease: OutboxLease, atMs: number): Promise<boolean>;
}
