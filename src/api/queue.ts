// The operator's queue (API.md section 10): GET /queue and /queue/summary, POST
// /queue/hold|release|retry|cancel with a filter, POST /queue/redeliver. Operator tokens
// only (the operator group's middleware); each action is logged with the token's name,
// what it asked for and how many recipients it touched.
import { type Static, t } from "elysia";
import { isoTime } from "../lib/clock.ts";
import { invalid, errorResponses } from "../http/errors.ts";
import { oneLine } from "../http/text-checks.ts";
import type { DestinationSummary, QueueEntry } from "../outbound/queue/queue-control.port.ts";
import {
  type Parsed,
  parseFilter,
  parseRedeliver,
  type QueueAction,
  type QueueActionDeps,
  actionLogFields,
  queueActionDepsOf,
  redeliver,
  runQueueAction,
} from "../outbound/queue/queue-actions.ts";
import { operatorRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";

const security = [{ operatorToken: [] }];
const tags = ["Operator"];

/** Most entries GET /queue and /queue/summary answer. */
export const QUEUE_LIST_MAX = 1000;

const QueueEntrySchema = t.Object(
  {
    id: t.String({ description: "the recipient's ID" }),
    message_id: t.String(),
    outbound_account_id: t.String(),
    recipient: t.String(),
    destination: t.String({ description: "where it is delivered: the recipient's domain" }),
    state: t.Union([t.Literal("queued"), t.Literal("held"), t.Literal("scheduled")]),
    attempts: t.Integer({ minimum: 0 }),
    next_attempt_at: t.String({ format: "date-time" }),
    last_response: t.Union([t.String(), t.Null()], { description: "the reply of its latest failed attempt" }),
  },
  { additionalProperties: false, title: "QueueEntry" },
);

const DestinationSummarySchema = t.Object(
  {
    destination: t.String(),
    queued: t.Integer({ minimum: 0 }),
    held: t.Integer({ minimum: 0 }),
    paused: t.Boolean(),
    oldest_at: t.String({ format: "date-time", description: "when the oldest message waiting for it was accepted" }),
    last_response: t.Union([t.String(), t.Null()], { description: "the latest failed attempt's reply" }),
  },
  { additionalProperties: false, title: "DestinationSummary" },
);

const FilterSchema = t.Object(
  {
    destination: t.Optional(oneLine(255)),
    outbound_account_id: t.Optional(oneLine(64)),
    message_id: t.Optional(oneLine(64)),
    older_than: t.Optional(oneLine(32, { description: 'only messages accepted at least this long ago ("2h", "3d")' })),
  },
  { additionalProperties: false, title: "QueueFilter" },
);

const RedeliverSchema = t.Object(
  {
    bounce_class: oneLine(32, { description: "hard, mailbox_full, block, dmarc, throttled, message, transient or other" }),
    since: oneLine(40, { description: "ISO 8601: bounces at or after this time" }),
    destination: t.Optional(oneLine(255)),
    outbound_account_id: t.Optional(oneLine(64)),
  },
  { additionalProperties: false, title: "QueueRedeliver" },
);

const AffectedSchema = t.Object({ affected: t.Integer({ minimum: 0 }) }, { additionalProperties: false, title: "QueueAffected" });

const entryRecord = (e: QueueEntry) => ({
  id: e.id,
  message_id: e.messageId,
  outbound_account_id: e.outboundAccountId,
  recipient: e.recipient,
  destination: e.destination,
  state: e.state,
  attempts: e.attempts,
  next_attempt_at: isoTime(e.nextAttemptAtMs),
  last_response: e.lastResponse,
});

const summaryRecord = (s: DestinationSummary) => ({
  destination: s.destination,
  queued: s.queued,
  held: s.held,
  paused: s.paused,
  oldest_at: isoTime(s.oldestAtMs),
  last_response: s.lastResponse,
});

const parsedOrThrow = <T>(parsed: Parsed<T>): T => {
  if (!parsed.ok) throw invalid(parsed.problem.field, parsed.problem.rule);
  return parsed.value;
};

export type QueueRouteDeps = Pick<ApiDeps, "queueControl" | "clock" | "config" | "logger" | "send">;

/** What the actions run with: the worker kicked through the send side, webhooks as configured now. */
export const queueActionDeps = (deps: QueueRouteDeps): QueueActionDeps =>
  queueActionDepsOf({
    repo: deps.queueControl,
    nowMs: () => deps.clock.nowMs(),
    kick: () => deps.send.notify(),
    accounts: () => deps.config().accounts,
  });

export function queueRoutes(deps: QueueRouteDeps) {
  const actions = queueActionDeps(deps);
  const logger = deps.logger.child({ component: "queue" });
  const filtered = (action: QueueAction) =>
    [
      async ({ body, operator }: { body: Static<typeof FilterSchema>; operator: { tokenLabel: string } }) => {
        const filter = parsedOrThrow(parseFilter(body));
        const affected = await runQueueAction(actions, action, filter);
        logger.info(`queue ${action}`, actionLogFields(operator.tokenLabel, body, affected));
        return { affected };
      },
      {
        body: FilterSchema,
        response: { 200: AffectedSchema, ...errorResponses(401, 403, 413, 422) },
        detail: {
          operationId: `queue${action[0]!.toUpperCase()}${action.slice(1)}`,
          summary: `(beyond) ${ACTION_SUMMARY[action]}`,
          tags,
          security,
        },
      },
    ] as const;
  return operatorRoutes("queue")
    .get(
      "/queue",
      async ({ query }) => {
        const limit = Number(query.limit ?? "100");
        if (limit > QUEUE_LIST_MAX) throw invalid("query limit", `must be a whole number from 1 to ${QUEUE_LIST_MAX}`);
        const filter = { destination: query.destination, outboundAccountId: query.outbound_account_id, state: query.state };
        return (await deps.queueControl.list(filter, limit)).map(entryRecord);
      },
      {
        query: t.Object({
          destination: t.Optional(t.String({ description: "only this destination's recipients" })),
          outbound_account_id: t.Optional(t.String()),
          state: t.Optional(
            t.Union([t.Literal("queued"), t.Literal("held"), t.Literal("scheduled")], {
              errorMessage: 'must be "queued", "held" or "scheduled"',
            }),
          ),
          limit: t.Optional(
            t.String({
              pattern: "^[1-9][0-9]{0,3}$",
              description: `most entries, 1 to ${QUEUE_LIST_MAX} (default 100)`,
              errorMessage: `must be a whole number from 1 to ${QUEUE_LIST_MAX}`,
            }),
          ),
        }),
        response: { 200: t.Array(QueueEntrySchema), ...errorResponses(401, 403, 422) },
        detail: { operationId: "listQueue", summary: "(beyond) recipients waiting in the queue, soonest due first", tags, security },
      },
    )
    .get("/queue/summary", async () => (await deps.queueControl.summary(QUEUE_LIST_MAX, deps.clock.nowMs())).map(summaryRecord), {
      response: { 200: t.Array(DestinationSummarySchema), ...errorResponses(401, 403) },
      detail: { operationId: "queueSummary", summary: "(beyond) the queue by destination, most waiting first", tags, security },
    })
    .post("/queue/hold", ...filtered("hold"))
    .post("/queue/release", ...filtered("release"))
    .post("/queue/retry", ...filtered("retry"))
    .post("/queue/cancel", ...filtered("cancel"))
    .post(
      "/queue/redeliver",
      async ({ body, operator }) => {
        const affected = await redeliver(actions, parsedOrThrow(parseRedeliver(body)));
        logger.info("queue redeliver", actionLogFields(operator.tokenLabel, body, affected));
        return { affected };
      },
      {
        body: RedeliverSchema,
        response: { 200: AffectedSchema, ...errorResponses(401, 403, 413, 422) },
        detail: {
          operationId: "queueRedeliver",
          summary: "(beyond) queue again the recipients that bounced with a class since a time",
          tags,
          security,
        },
      },
    );
}

const ACTION_SUMMARY: Record<QueueAction, string> = {
  hold: "hold waiting recipients: never attempted, not even by retry, until released",
  release: "release held recipients: delivered at once",
  retry: "make waiting recipients due now (held ones stay held)",
  cancel: "end waiting recipients, each with an error event",
};
