// When a recipient is next tried, and what an SMTP reply means for it: pure decisions
// with table tests.
import type { Priority } from "./message.ts";

export const LANES: Record<Priority, number> = { priority: 0, standard: 1, digest: 2 };

/** The first attempt: now, or for digest mail the next digest window, so they go out together. */
export function firstAttemptAt(priority: Priority, nowMs: number, digestIntervalMs: number): number {
  if (priority !== "digest") return nowMs;
  return Math.ceil(nowMs / digestIntervalMs) * digestIntervalMs;
}

/** After `attempts` failed attempts: the next try, using the last delay again once the list runs out. */
export function nextRetryAt(attempts: number, nowMs: number, delaysMs: readonly number[]): number {
  const delay = delaysMs[Math.min(Math.max(attempts - 1, 0), delaysMs.length - 1)]!;
  return nowMs + delay;
}

export type AttemptVerdict = "delivered" | "retry" | "bounce";

/** 2xx delivered; 5xx permanent; 4xx and no reply at all (refused, timed out) retry. */
export function verdictForReply(code: number | null): AttemptVerdict {
  if (code !== null && code >= 200 && code < 300) return "delivered";
  if (code !== null && code >= 500 && code < 600) return "bounce";
  return "retry";
}

/** Whether a retry would fall past max_queue_time: then the message gives up instead. */
export function retriesExhausted(createdAtMs: number, nextAttemptAtMs: number, maxQueueTimeMs: number): boolean {
  return nextAttemptAtMs - createdAtMs > maxQueueTimeMs;
}
