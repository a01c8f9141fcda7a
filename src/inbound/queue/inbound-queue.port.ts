// (beyond) The port through which received mail waits for a target that failed, whatever
// the engine (addresses with on_target_failure = "queue", docs/receiving.md): one row per
// message and address, with the bytes, kept in the store (SQLite's file, committed with
// fsync; PostgreSQL's table) before the sender hears 250. inbound-queue.repo.ts writes it
// once for both engines; test/inbound/queue/inbound-queue.contract.test.ts runs the same
// cases on both. Several nodes may post from one PostgreSQL: a node claims a due message
// with a lease (leased_by, lease_until) in one statement, so exactly one of them posts it.
import type { PayloadEnvelope } from "../payload/payload.ts";

/** What posting the message again needs of the transaction that brought it. */
export interface QueuedFacts {
  mailFrom: string;
  helo: string;
  ehlo: boolean;
  remoteIp: string;
  tls: { protocol: string; cipher: string } | null;
  /** The recipients of the address, in RCPT order. */
  rcpts: string[];
  /** Our Return-Path and Received lines, put in front of the message again at each POST (trace-headers.ts). */
  trace: string;
  /** The custom domain the recipients came by, or null (re-read at each POST: its target may have changed). */
  customDomain: string | null;
  /** The payload's envelope as first posted (SPF, DKIM and spamd as checked when the sender was connected). */
  envelope: PayloadEnvelope;
  messageId: string | null;
  subject: string | null;
  /** X-Postroom-Message-Id: the same at every POST, so a target can drop a message it already took. */
  postroomMessageId: string;
}

/** A waiting message without its bytes (lists, claims). */
export interface QueuedEntry {
  id: string;
  accountId: string;
  addressId: string;
  statusIds: string[];
  facts: QueuedFacts;
  /** Bytes of our trace lines (facts.trace), posted in front of the message. */
  traceBytes: number;
  sizeBytes: number;
  /** POSTs made so far (the first, during the SMTP transaction, included). */
  attempts: number;
  createdAtMs: number;
  nextAttemptAtMs: number;
  /** The target's last answer (or why it could not be reached). */
  lastResponse: string | null;
}

export interface QueuedMessage extends QueuedEntry {
  /** The message as the sender sent it. */
  message: Uint8Array;
}

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface InboundQueueRepo {
  /** Resolves once the message survives a crash (committed durably); rejects when it could not be kept. */
  insert(m: QueuedMessage): Promise<void>;
  /** Bytes of the messages the account has waiting. */
  queuedBytes(accountId: string): Promise<number>;
  /**
   * Claims up to `limit` messages due at `nowMs` whose lease is free or expired, for
   * `holder` until nowMs + leaseMs, in one statement: of several nodes asking at once,
   * each message goes to one. Oldest due first.
   */
  claimDue(holder: string, nowMs: number, leaseMs: number, limit: number): Promise<QueuedEntry[]>;
  /** The bytes of a waiting message, or null when it is gone. */
  message(id: string): Promise<Uint8Array | null>;
  /** Removes a message `holder` still holds (delivered, refused or expired); false when its lease was lost. */
  finish(id: string, holder: string): Promise<boolean>;
  /** After a failed POST: the attempts made, when to try next, the answer; the lease is let go. False when it was lost. */
  reschedule(id: string, holder: string, attempts: number, nextAttemptAtMs: number, lastResponse: string | null): Promise<boolean>;
  /**
   * Lets go of every lease `holder` has (a node starting again after a crash: the process
   * that held them is gone, so its messages need not wait for their leases to run out).
   */
  releaseHeld(holder: string): Promise<number>;
  /** "Try now": makes a waiting message of the account due at `nowMs`; false when there is none. */
  tryNow(accountId: string, id: string, nowMs: number): Promise<boolean>;
  /** The account's waiting messages, oldest first, at most `limit`. */
  list(accountId: string, limit: number): Promise<QueuedEntry[]>;
  /** For /metrics: messages waiting on every account, and when the oldest came (null: none). */
  depth(): Promise<{ count: number; oldestCreatedAtMs: number | null }>;
}
