// (beyond) Pure decisions of the inbound queue (docs/receiving.md, When the target is down),
// with table tests (test/inbound/queue/queue-decisions.test.ts): which target outcomes an
// address with on_target_failure = "queue" keeps instead of deferring, when a kept message
// is posted next or expires, and what the spam threshold does to a scored message.
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import { formatReply, type SmtpReply } from "../../smtp/reply.ts";
import type { SpamdResult } from "../parse/spamd.ts";
import type { TargetOutcome } from "../targets/target-reply.ts";

/**
 * A 5xx, no answer in time, or no connection: the target failed, not the message. A 4xx
 * refuses the message (kept out of the queue: the sender must hear it during the
 * transaction); a 1xx or an unfollowed 3xx is a target misconfigured, deferred as before;
 * our own storage failing is ours to report (451), never a reason to keep more.
 */
export function targetFailed(outcome: TargetOutcome): boolean {
  if (outcome.kind === "timeout" || outcome.kind === "unreachable") return true;
  return outcome.kind === "answered" && outcome.status >= 500 && outcome.status < 600;
}

/** What a POST of a kept message came to. */
export type RetryResult = "delivered" | "rejected" | "retry";

export function retryResult(outcome: TargetOutcome): RetryResult {
  if (outcome.kind === "answered" && outcome.status >= 200 && outcome.status < 300) return "delivered";
  if (outcome.kind === "answered" && outcome.status >= 400 && outcome.status < 500) return "rejected";
  // A 5xx, a timeout, no connection, a 1xx or 3xx, our own store failing: posted again later.
  return "retry";
}

/**
 * When a kept message that has had `attempts` POSTs is posted next: the attempts-th of
 * `delaysMs` after `nowMs` (the last one repeating), or null when that is past
 * createdAtMs + maxQueueTimeMs (it expires).
 */
export function nextAttemptAt(
  attempts: number,
  createdAtMs: number,
  nowMs: number,
  delaysMs: readonly number[],
  maxQueueTimeMs: number,
): number | null {
  const delayMs = delaysMs[Math.min(Math.max(attempts, 1), delaysMs.length) - 1]!;
  const at = nowMs + delayMs;
  return at > createdAtMs + maxQueueTimeMs ? null : at;
}

/** The spam check of one address: refuse, deliver with a note on the status, or nothing to say. */
export type SpamDecision = { refuse: SmtpReply } | { note: string } | null;

export function spamDecision(threshold: number | null, spamd: SpamdResult | null, spamdOn: boolean): SpamDecision {
  if (threshold === null) return null;
  if (!spamdOn) return { note: "not scored for spam_threshold: inbound.spamd is off" };
  if (!spamd?.success) return { note: `not scored for spam_threshold, delivered: ${spamd?.description ?? "no answer from spamd"}` };
  const score = Number(spamd.score);
  if (!Number.isFinite(score) || score <= threshold) return null;
  return { refuse: SMTP_REPLIES.spamRefused(spamd.score, threshold) };
}

/** The note or refusal as the status's response keeps it. */
export const spamResponse = (d: SpamDecision): string | null => (d === null ? null : "refuse" in d ? formatReply(d.refuse) : d.note);
