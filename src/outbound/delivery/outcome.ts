// What an attempt (or a decision made without one: no route, no connection) does to a
// recipient: its new queue state and the events that record it. Pure, with table tests.
import type { NewEvent } from "../../events/message-event.ts";
import type { AttemptDetails } from "../../events/kinds.ts";
import { isoTime } from "../../lib/clock.ts";
import type { ClaimedRecipient, RecipientUpdate } from "../queue/message.ts";
import { nextRetryAt, retriesExhausted, verdictForReply, type AttemptVerdict } from "../queue/schedule.ts";
import { classifyFailure } from "../bounces/failure-class.ts";
import { suppressionFor } from "../suppressions/suppression.ts";
import type { TransactionResult } from "./smtp-client.ts";

export interface AttemptOutcome {
  verdict: AttemptVerdict;
  update: RecipientUpdate;
  events: NewEvent[];
}

export interface OutcomeInput {
  item: ClaimedRecipient;
  result: TransactionResult;
  /** The host the attempt went to, or null when none was reached. */
  mx: string | null;
  /** A failure without a reply that is final all the same (null MX, no such domain). */
  permanentWithoutReply: boolean;
  /** The pool address it left from; null/unset: the system's default (not named in the events). */
  sourceIp?: string | null;
  nowMs: number;
  retryDelaysMs: readonly number[];
  maxQueueTimeMs: number;
  /** outbound.suppression_ttl: how long a hard bounce suppresses the address. */
  suppressionTtlMs: number;
}

/** The events of one recipient's attempt, stamped with the attempt's time. */
const eventOf =
  (item: ClaimedRecipient, nowMs: number) =>
  (kind: NewEvent["kind"], details: Record<string, unknown>): NewEvent => ({
    messageId: item.message.id,
    recipientId: item.recipient.id,
    kind,
    details,
    createdAtMs: nowMs,
  });

export function attemptOutcome(i: OutcomeInput): AttemptOutcome {
  const { item, result, nowMs } = i;
  const r = item.recipient;
  const attempts = r.attempts + 1;
  const firstAttemptAtMs = r.firstAttemptAtMs ?? nowMs;
  const details: AttemptDetails = { mx: i.mx, smtp_code: result.code, smtp_response: result.response, attempt: attempts };
  if (i.sourceIp) details.source_ip = i.sourceIp;
  const event = eventOf(item, nowMs);
  const verdict = i.permanentWithoutReply ? "bounce" : verdictForReply(result.code);
  const base = { attempts, firstAttemptAtMs, nextAttemptAtMs: nowMs };
  if (verdict === "delivered")
    return { verdict, update: { ...base, status: "delivery", state: "done" }, events: [event("delivery", { ...details })] };
  const failed = {
    ...details,
    bounce_class: classifyFailure({ code: result.code, text: result.response, noSuchDomain: i.permanentWithoutReply }),
  };
  if (verdict === "bounce") {
    const bounce = event("bounce", failed);
    const suppress = suppressionFor(bounce, i.suppressionTtlMs);
    return { verdict, update: { ...base, status: "bounce", state: "done", suppress }, events: [bounce] };
  }
  const next = nextRetryAt(attempts, nowMs, i.retryDelaysMs);
  if (retriesExhausted(item.message.createdAtMs, next, i.maxQueueTimeMs)) {
    return {
      verdict,
      update: { ...base, status: "retries_exhausted", state: "done" },
      events: [event("soft_bounce", failed), event("retries_exhausted", { attempts, first_attempt_at: isoTime(firstAttemptAtMs) })],
    };
  }
  return {
    verdict,
    update: { ...base, status: "soft_bounce", state: "queued", nextAttemptAtMs: next },
    events: [event("soft_bounce", failed)],
  };
}

export interface UnpreparedInput {
  item: ClaimedRecipient;
  /** Why no copy could be made for the recipient (our own failure), as E13 and the webhook show it. */
  reason: string;
  /** The message itself can never be sent (no From to sign, its bytes gone): no retry can help. */
  permanent: boolean;
  nowMs: number;
  retryDelaysMs: readonly number[];
  maxQueueTimeMs: number;
}

/**
 * A delivery that could not even be attempted: the recipient's copy could not be made
 * (composed, personalised or DKIM-signed). Recorded as an `error` event; tried again on the
 * retry schedule unless the failure is the message's own, then given up.
 */
export function unpreparedOutcome(i: UnpreparedInput): AttemptOutcome {
  const { item, nowMs } = i;
  const r = item.recipient;
  const attempts = r.attempts + 1;
  const firstAttemptAtMs = r.firstAttemptAtMs ?? nowMs;
  const event = eventOf(item, nowMs);
  const error = event("error", { message: i.reason, attempt: attempts, retried: !i.permanent });
  const base = { attempts, firstAttemptAtMs, nextAttemptAtMs: nowMs };
  if (i.permanent) return { verdict: "bounce", update: { ...base, status: "error", state: "done" }, events: [error] };
  const next = nextRetryAt(attempts, nowMs, i.retryDelaysMs);
  if (retriesExhausted(item.message.createdAtMs, next, i.maxQueueTimeMs)) {
    const exhausted = event("retries_exhausted", { attempts, first_attempt_at: isoTime(firstAttemptAtMs) });
    return {
      verdict: "retry",
      update: { ...base, status: "retries_exhausted", state: "done" },
      events: [{ ...error, details: { ...error.details, retried: false } }, exhausted],
    };
  }
  return { verdict: "retry", update: { ...base, status: "error", state: "queued", nextAttemptAtMs: next }, events: [error] };
}

/** Thrown while making a copy when the message itself can never go out (retrying cannot help). */
export class UnsendableMessage extends Error {
  override name = "UnsendableMessage";
}

/**
 * An attempt its destination answered with one of its throttle replies (issue 29): the
 * destination is paused, and the recipient keeps its place: no attempt counted, no later
 * retry step, due again as it was, so it goes out when the pause ends. The deferral's event
 * says `"bounce_class": "throttled"`. Only a message older than `maxQueueTimeMs` is given
 * up, as after any deferral: a destination that throttles for days does not keep it forever.
 */
export function throttledOutcome(i: Pick<OutcomeInput, "item" | "result" | "mx" | "nowMs" | "maxQueueTimeMs">): AttemptOutcome {
  const r = i.item.recipient;
  const details: AttemptDetails = { mx: i.mx, smtp_code: i.result.code, smtp_response: i.result.response, attempt: r.attempts + 1 };
  const event = eventOf(i.item, i.nowMs);
  const deferral = event("soft_bounce", { ...details, bounce_class: "throttled" });
  const kept = { attempts: r.attempts, firstAttemptAtMs: r.firstAttemptAtMs, nextAttemptAtMs: r.nextAttemptAtMs };
  if (retriesExhausted(i.item.message.createdAtMs, i.nowMs, i.maxQueueTimeMs)) {
    const firstAttemptAtMs = r.firstAttemptAtMs ?? i.nowMs;
    return {
      verdict: "retry",
      update: { ...kept, status: "retries_exhausted", state: "done", firstAttemptAtMs },
      events: [deferral, event("retries_exhausted", { attempts: r.attempts, first_attempt_at: isoTime(firstAttemptAtMs) })],
    };
  }
  return { verdict: "retry", update: { ...kept, status: "soft_bounce", state: "queued" }, events: [deferral] };
}
