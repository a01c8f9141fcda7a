// The operator's bulk actions on the outgoing queue, shared by the operator API
// (src/api/queue.ts), the admin dashboard's Queue page and, through the API, the
// `postroom queue` command: the filter read from the wire (at least one of destination,
// outbound_account_id, message_id; older_than a duration), the action run, and the delivery
// worker kicked when recipients became due (release, retry, redeliver deliver at once).
import type { AccountConfig } from "../../config/config.ts";
import { parseDurationMs } from "../../config/units.ts";
import { FAILURE_CLASSES, type FailureClass, isFailureClass } from "../bounces/failure-class.ts";
import type { QueueControlRepo, QueueFilter, RedeliverRequest } from "./queue-control.port.ts";
import { webhookConfigured } from "./webhook-configured.ts";

export const QUEUE_ACTIONS = ["hold", "release", "retry", "cancel"] as const;
export type QueueAction = (typeof QUEUE_ACTIONS)[number];

/** A filter as the API takes it (snake case, as API.md section 10 names it). */
export interface WireFilter {
  destination?: string;
  outbound_account_id?: string;
  message_id?: string;
  older_than?: string;
}

export interface WireRedeliver {
  bounce_class: string;
  since: string;
  destination?: string;
  outbound_account_id?: string;
}

/** What is wrong with a request: the field and the rule it breaks (the API answers 422 with both). */
export interface FieldProblem {
  field: string;
  rule: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: FieldProblem };

const problem = (field: string, rule: string): Parsed<never> => ({ ok: false, problem: { field, rule } });

/** Longest older_than accepted: a year (no message waits longer; a bigger number is a typo). */
const MAX_OLDER_THAN_MS = 366 * 24 * 3600 * 1000;

export function parseFilter(body: WireFilter): Parsed<QueueFilter> {
  const { destination, outbound_account_id: outboundAccountId, message_id: messageId } = body;
  if (destination === undefined && outboundAccountId === undefined && messageId === undefined)
    return problem("destination", "a filter needs at least one of destination, outbound_account_id and message_id");
  const filter: QueueFilter = { destination, outboundAccountId, messageId };
  if (body.older_than !== undefined) {
    const ms = parseDurationMs(body.older_than);
    if (ms === null || ms > MAX_OLDER_THAN_MS)
      return problem("older_than", 'must be a duration such as "30m", "2h" or "3d", at most a year');
    filter.olderThanMs = ms;
  }
  return { ok: true, value: filter };
}

export function parseRedeliver(body: WireRedeliver): Parsed<RedeliverRequest> {
  const bounceClass = body.bounce_class.toLowerCase();
  if (!isFailureClass(bounceClass)) return problem("bounce_class", `must be one of ${FAILURE_CLASSES.join(", ")}`);
  const sinceMs = Date.parse(body.since);
  if (!/^\d{4}-\d\d-\d\d/.test(body.since) || Number.isNaN(sinceMs))
    return problem("since", "must be an ISO 8601 date or date-time, such as 2026-11-27T09:00:00Z");
  return {
    ok: true,
    value: {
      bounceClass: bounceClass as FailureClass,
      sinceMs,
      destination: body.destination,
      outboundAccountId: body.outbound_account_id,
    },
  };
}

export interface QueueActionDeps {
  repo: QueueControlRepo;
  nowMs(): number;
  /** The delivery worker looks for due work now. */
  kick(): void;
  /** Whether an outbound account's events go to a webhook (cancel's `error` events). */
  webhook(outboundAccountId: string): boolean;
}

/** The deps the actions run with in the server: webhooks as the config says now, the worker kicked through `kick`. */
export function queueActionDepsOf(d: {
  repo: QueueControlRepo;
  nowMs(): number;
  kick(): void;
  accounts(): readonly AccountConfig[];
}): QueueActionDeps {
  return {
    repo: d.repo,
    nowMs: d.nowMs,
    kick: d.kick,
    webhook: (outboundAccountId) => webhookConfigured(d.accounts(), outboundAccountId),
  };
}

/** How an action is logged: its name, who asked (the operator token's label, or the dashboard), the filter, the count. */
export const actionLogFields = (by: string, filter: unknown, affected: number) => ({ operator: by, filter, affected });

/** The text of the `error` event a cancelled recipient gets. */
export const CANCELLED_BY_OPERATOR = "cancelled by the operator";

/** Runs one action on the recipients the filter picks; returns how many it changed. */
export async function runQueueAction(deps: QueueActionDeps, action: QueueAction, filter: QueueFilter): Promise<number> {
  const now = deps.nowMs();
  let affected: number;
  switch (action) {
    case "hold":
      return deps.repo.hold(filter, now);
    case "cancel":
      return deps.repo.cancel(filter, now, CANCELLED_BY_OPERATOR, deps.webhook);
    case "release":
      affected = await deps.repo.release(filter, now);
      break;
    case "retry":
      affected = await deps.repo.retry(filter, now);
      break;
  }
  if (affected > 0) deps.kick();
  return affected;
}

export async function redeliver(deps: QueueActionDeps, req: RedeliverRequest): Promise<number> {
  const affected = await deps.repo.redeliver(req, deps.nowMs());
  if (affected > 0) deps.kick();
  return affected;
}
