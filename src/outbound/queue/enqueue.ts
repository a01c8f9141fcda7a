// Accepting a message for delivery: the message row with its raw bytes, one queue row per
// recipient and their registration events in one transaction (shared with the other
// messages accepted in the same moment). Only after that commit do we answer 202 or 250
// (durability rule).
import type { NewEvent } from "../../events/message-event.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId16, newUuid } from "../../lib/ids.ts";
import { domainOf, formatAddress, type MailAddress } from "../compose/addresses.ts";
import type { OutboundRepo, QueuedMessage } from "./queue.port.ts";
import { firstAttemptAt, LANES } from "./schedule.ts";
import type { IdempotencyScope, KeyAnswer } from "../sending/idempotency.ts";
import { NO_TRACKING, type OutboundMessage, type OutboundRecipient, type Priority, type RecipientType } from "./message.ts";
import type { Tracking } from "../tracking/personalize.ts";

export interface EnqueueRequest {
  /** Chosen by the caller when the Message-ID must contain it; a new UUID v4 otherwise. */
  id?: string;
  accountId: string;
  outboundAccountId: string;
  from: MailAddress;
  to: MailAddress[];
  cc: MailAddress[];
  /** Envelope-only recipients (SMTP submission). */
  bcc: MailAddress[];
  subject: string | null;
  messageId: string;
  tags: string[];
  priority: Priority;
  testMode: boolean;
  tracking?: Tracking;
  raw: Buffer;
  /** The idempotency key claimed for this request: its answer is stored with the message. */
  remember?: RememberedAnswer;
  /** E11's send_at: no recipient is attempted before it; null or absent: at once. */
  sendAtMs?: number | null;
  /** E11's metadata. */
  metadata?: Record<string, string>;
}

/** A claimed key, and how to write the answer the request gets, from the message queued. */
export interface RememberedAnswer {
  scope: IdempotencyScope;
  key: string;
  requestSha256: string | null;
  answerOf(message: OutboundMessage): string;
}

export interface EnqueueDeps {
  repo: OutboundRepo;
  clock: Clock;
  digestIntervalMs: number;
  /** Whether the outbound account's events go to a webhook (else they get no outbox rows). */
  webhookConfigured(outboundAccountId: string): boolean;
  /** Addresses among these that the outbound account must not send to. */
  suppressed(outboundAccountId: string, emails: readonly string[]): Promise<Set<string>>;
  /** Called after the commit, so delivery can start at once. */
  notify(): void;
}

export async function enqueueMessage(req: EnqueueRequest, deps: EnqueueDeps): Promise<OutboundMessage> {
  const q = await queuedMessageOf(req, deps);
  const r = req.remember;
  const answer = r
    ? {
        outboundAccountId: req.outboundAccountId,
        scope: r.scope,
        key: r.key,
        requestSha256: r.requestSha256,
        answer: r.answerOf(q.message),
      }
    : undefined;
  await deps.repo.insert(q.message, q.recipients, q.events, { raw: q.raw, webhook: deps.webhookConfigured(req.outboundAccountId), answer });
  if (!req.testMode) deps.notify();
  return q.message;
}

/**
 * Several messages of one outbound account stored in one transaction (POST /messages/batch),
 * with the answer of the batch's idempotency key, if any: all of them or none, on disk
 * when this resolves.
 */
export async function enqueueMessages(
  queued: readonly QueuedMessage[],
  outboundAccountId: string,
  deps: EnqueueDeps,
  answer?: KeyAnswer,
): Promise<void> {
  if (queued.length === 0 && !answer) return;
  await deps.repo.insertMany(queued, { webhook: deps.webhookConfigured(outboundAccountId), answer });
  if (queued.some((q) => !q.message.testMode)) deps.notify();
}

/** The rows a request becomes (the suppression list is read for its recipients); nothing is stored yet. */
export async function queuedMessageOf(req: EnqueueRequest, deps: EnqueueDeps): Promise<QueuedMessage> {
  const id = req.id ?? newUuid();
  const now = deps.clock.nowMs();
  // Stored unsigned: signing happens per recipient at delivery, after any tracking.
  const raw = req.raw;
  const message: OutboundMessage = {
    id,
    accountId: req.accountId,
    outboundAccountId: req.outboundAccountId,
    from: formatAddress(req.from),
    subject: req.subject,
    messageId: req.messageId,
    to: req.to.map(formatAddress),
    cc: req.cc.map(formatAddress),
    tags: req.tags,
    testMode: req.testMode,
    priority: req.priority,
    sizeBytes: raw.length,
    tracking: req.tracking ?? NO_TRACKING,
    createdAtMs: now,
    sendAtMs: req.sendAtMs ?? null,
    metadata: req.metadata ?? {},
  };
  // Scheduled: the first attempt waits for send_at (the worker sleeps until the next due time).
  const firstAt = Math.max(firstAttemptAt(req.priority, now, deps.digestIntervalMs), req.sendAtMs ?? now);
  const suppressed = await deps.suppressed(
    req.outboundAccountId,
    [...req.to, ...req.cc, ...req.bcc].map((a) => a.address),
  );
  const seen = new Set<string>();
  const recipients: OutboundRecipient[] = [];
  const typed: (readonly [MailAddress, RecipientType])[] = [
    ...req.to.map((a) => [a, "to"] as const),
    ...req.cc.map((a) => [a, "cc"] as const),
    ...req.bcc.map((a) => [a, "bcc"] as const),
  ];
  for (const [a, type] of typed) {
    const key = a.address.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    recipients.push({
      id: newId16(),
      messageId: id,
      position: recipients.length,
      email: a.address,
      domain: domainOf(a.address),
      type,
      status: suppressed.has(key) ? "suppressed" : "registration",
      // Test mode: validated and recorded, never sent. A suppressed address: never sent either.
      state: req.testMode || suppressed.has(key) ? "done" : "queued",
      lane: LANES[req.priority],
      attempts: 0,
      firstAttemptAtMs: null,
      nextAttemptAtMs: firstAt,
    });
  }
  const events: NewEvent[] = recipients.flatMap((r): NewEvent[] => [
    { messageId: id, recipientId: r.id, kind: "registration", details: req.testMode ? { test_mode: true } : {}, createdAtMs: now },
    ...(r.status === "suppressed"
      ? [
          {
            messageId: id,
            recipientId: r.id,
            kind: "suppressed" as const,
            details: { reason: "on the suppression list" },
            createdAtMs: now,
          },
        ]
      : []),
  ]);
  return { message, recipients, events, raw };
}
