// The label values of /metrics, as pure functions with table tests. Every label takes its
// values from a small fixed set, whatever a client sends: a label per raw path, address or
// method would make a new series per request and grow the scraper's memory without bound.
import type { RecipientUpdate } from "../outbound/queue/message.ts";

/** "2xx" for 200-299 and so on; "unknown" outside 100-599. */
export function statusClass(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? `${Math.floor(status / 100)}xx` : "unknown";
}

/** A POST's result: the class of the status answered, else `timeout` or `unreachable` (refused, no connection). */
export function postResult(status: number | null, timedOut: boolean): string {
  return status !== null ? statusClass(status) : timedOut ? "timeout" : "unreachable";
}

/** The result of a POST to a target (an outcome of postToTarget). */
/**
 * A POST to a target's outcome as the metrics read it: the status when one was answered.
 * Declared here, narrower than inbound's TargetOutcome (which it accepts), so metrics import
 * nothing of the features they count.
 */
export type PostOutcome = { kind: "answered"; status: number } | { kind: "timeout" | "unreachable" | "local_failure" };

export function targetPostResult(outcome: PostOutcome): string {
  return postResult(outcome.kind === "answered" ? outcome.status : null, outcome.kind === "timeout");
}

/** Inbound messages by the reply their sender got at the end of DATA. */
export type InboundOutcome = "accepted" | "deferred" | "rejected";
export const INBOUND_OUTCOMES: readonly InboundOutcome[] = ["accepted", "deferred", "rejected"];

export function inboundOutcome(replyCode: number): InboundOutcome {
  return replyCode >= 500 ? "rejected" : replyCode >= 400 ? "deferred" : "accepted";
}

/**
 * Why the inbound listener refused a recipient, a message or a session: recipient routing
 * (route.ts), the size and memory limits, and the session limits of smtp/limits.ts.
 */
export const SMTP_REFUSAL_REASONS = [
  "relay_denied",
  "unknown_recipient",
  "regexp_mismatch",
  "invalid_address",
  "bounce_recipient",
  "account_suspended",
  "too_many_refused_recipients",
  "message_too_large",
  "memory_budget",
  "max_connections_per_ip",
  "max_session_time",
  "max_junk_commands",
  "min_data_rate",
  "temporary_failure",
] as const;
export type SmtpRefusalReason = (typeof SMTP_REFUSAL_REASONS)[number];

/** A session limit's name as smtp/guard.ts logs it, as a refusal reason (the same words). */
export function limitRefusalReason(limit: string): SmtpRefusalReason | null {
  return (SMTP_REFUSAL_REASONS as readonly string[]).includes(limit) ? (limit as SmtpRefusalReason) : null;
}

/** What one delivery attempt (or a decision without one) did to a recipient. */
export type DeliveryResult = "delivered" | "bounced" | "deferred" | "expired" | "failed";
export const DELIVERY_RESULTS: readonly DeliveryResult[] = ["delivered", "bounced", "deferred", "expired", "failed"];

/**
 * From the recipient's new queue status: delivered (250), bounced (5xx or no route), deferred
 * (4xx, retried), expired (given up after outbound.max_queue_time), failed (our side could
 * not make its copy; retried unless the message itself is at fault).
 */
export function deliveryResult(update: Pick<RecipientUpdate, "status">): DeliveryResult {
  switch (update.status) {
    case "delivery":
      return "delivered";
    case "bounce":
      return "bounced";
    case "retries_exhausted":
      return "expired";
    case "error":
      return "failed";
    default:
      return "deferred";
  }
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The request's method, or `other` for any name outside the standard ones. */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : "other";
}

/** The route label of a path no route takes (a 404, or a 401 before routing). */
export const UNMATCHED_ROUTE = "unmatched";

interface CompiledRoute {
  method: string;
  pattern: string;
  segments: string[];
}

/**
 * The route table's pattern that a request's path matches (`/api/v0.1/:accountId/messages`,
 * never the path itself), or UNMATCHED_ROUTE. Segments starting with `:` match any one
 * segment, a `*` the rest of the path. Where several patterns match, the one whose fixed
 * segments come first wins, as in the router.
 */
export function routeMatcher(routes: readonly { method: string; path: string }[]): (method: string, path: string) => string {
  const compiled: CompiledRoute[] = routes.map((r) => ({ method: r.method, pattern: r.path, segments: r.path.split("/").slice(1) }));
  return (method, path) => {
    const parts = path.split("/").slice(1);
    if (parts.length > 1 && parts.at(-1) === "") parts.pop();
    let best: { pattern: string; rank: string } | null = null;
    for (const route of compiled) {
      if (route.method !== method && route.method !== "ALL" && !(method === "HEAD" && route.method === "GET")) continue;
      const rank = matchRank(route.segments, parts);
      if (rank !== null && (best === null || rank > best.rank)) best = { pattern: route.pattern, rank };
    }
    return best?.pattern ?? UNMATCHED_ROUTE;
  };
}

/** "2" per fixed segment, "1" per parameter, "0" for a wildcard: compared as strings, earlier segments weigh more. */
function matchRank(segments: readonly string[], parts: readonly string[]): string | null {
  let rank = "";
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (seg === "*") return rank + "0";
    const part = parts[i];
    if (part === undefined) return null;
    if (seg.startsWith(":")) {
      if (part === "") return null;
      rank += "1";
    } else if (seg === part) rank += "2";
    else return null;
  }
  return parts.length === segments.length ? rank : null;
}
