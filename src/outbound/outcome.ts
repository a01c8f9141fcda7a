// What an attempt (or a decision made without one: no route, no connection) does to a
// recipient: its new queue state and the events that record it. Pure, with table tests.
import type { NewEvent } from "../events/events.repo.ts";
import type { AttemptDetails } from "../events/kinds.ts";
import { isoTime } from "../lib/clock.ts";
import type { ClaimedRecipient, RecipientUpdate } from "./outbound.repo.ts";
import { nextRetryAt, retriesExhausted, verdictForReply, type AttemptVerdict } from "./schedule.ts";
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
  nowMs: number;
  retryDelaysMs: readonly number[];
  maxQueueTimeMs: number;
}

export function attemptOutcome(i: OutcomeInput): AttemptOutcome {
  const { item, result, nowMs } = i;
  const r = item.recipient;
  const attempts = r.attempts + 1;
  const firstAttemptAtMs = r.firstAttemptAtMs ?? nowMs;
  const details: AttemptDetails = { mx: i.mx, smtp_code: result.code, smtp_response: result.response, attempt: attempts };
  const event = (kind: NewEvent["kind"], d: Record<string, unknown>): NewEvent => ({ messageId: item.message.id, recipientId: r.id, kind, details: d, createdAtMs: nowMs });
  const verdict = i.permanentWithoutReply ? "bounce" : verdictForReply(result.code);
  const base = { attempts, firstAttemptAtMs, nextAttemptAtMs: nowMs };
  if (verdict === "delivered") return { verdict, update: { ...base, status: "delivery", state: "done" }, events: [event("delivery", { ...details })] };
  if (verdict === "bounce") return { verdict, update: { ...base, status: "bounce", state: "done" }, events: [event("bounce", { ...details })] };
  const next = nextRetryAt(attempts, nowMs, i.retryDelaysMs);
  if (retriesExhausted(item.message.createdAtMs, next, i.maxQueueTimeMs)) {
    return {
      verdict,
      update: { ...base, status: "retries_exhausted", state: "done" },
      events: [event("soft_bounce", { ...details }), event("retries_exhausted", { attempts, first_attempt_at: isoTime(firstAttemptAtMs) })],
    };
  }
  return { verdict, update: { ...base, status: "soft_bounce", state: "queued", nextAttemptAtMs: next }, events: [event("soft_bounce", { ...details })] };
}
