// (beyond) Received mail waiting for its target (addresses with on_target_failure = "queue",
// docs/receiving.md): what waits, since when, the target's last answer and when it is
// posted next, and "try now", which makes one due at once (a node posts it within a second).
// Under the account's bearer token; another account's message is 404.
import { Type } from "@sinclair/typebox";
import { type Static, t } from "elysia";
import type { QueuedEntry } from "../inbound/queue/inbound-queue.port.ts";
import { isoTime } from "../lib/clock.ts";
import { errorResponses, notFound } from "../http/errors.ts";
import { noRecord } from "../http/refusals.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";

const security = [{ bearerAPIToken: [] }];

/** The most waiting messages one list shows, oldest first. */
export const WAITING_LIST_MAX = 500;

const WaitingSchema = t.Object(
  {
    id: t.String(),
    address_id: t.String(),
    from: t.String({ description: "envelope sender (MAIL FROM)" }),
    to: t.Array(t.String(), { description: "the address's recipients of the message" }),
    subject: t.Union([t.String(), t.Null()]),
    size: Type.Integer({ minimum: 0, description: "bytes kept on disk for it" }),
    attempts: Type.Integer({ minimum: 1, description: "POSTs made so far" }),
    created_at: t.String({ format: "date-time", description: "when it was received (and has waited since)" }),
    next_attempt_at: t.String({ format: "date-time" }),
    last_response: t.Union([t.String(), t.Null()], { description: "the target's last answer, or why it could not be reached" }),
    status_ids: t.Array(t.String(), { description: "its incoming statuses (E6)" }),
  },
  { additionalProperties: false, title: "WaitingMessage" },
);

const record = (e: QueuedEntry): Static<typeof WaitingSchema> => ({
  id: e.id,
  address_id: e.addressId,
  from: e.facts.mailFrom,
  to: e.facts.rcpts,
  subject: e.facts.subject,
  size: e.sizeBytes,
  attempts: e.attempts,
  created_at: isoTime(e.createdAtMs),
  next_attempt_at: isoTime(e.nextAttemptAtMs),
  last_response: e.lastResponse,
  status_ids: e.statusIds,
});

/** What the routes take of the API's dependencies. */
export type InboundQueueDeps = Pick<ApiDeps, "clock" | "inboundQueue">;

export function inboundQueueRoutes(deps: InboundQueueDeps) {
  return accountRoutes("inbound-queue")
    .get("/inbound_queue", async ({ account }) => (await deps.inboundQueue.list(account.id, WAITING_LIST_MAX)).map(record), {
      response: { 200: t.Array(WaitingSchema), ...errorResponses(401, 403, 429) },
      detail: {
        operationId: "listWaitingInbound",
        summary: `(beyond) received mail waiting for its target (on_target_failure = "queue"), oldest first, at most ${WAITING_LIST_MAX}`,
        tags: ["Incoming statuses"],
        security,
      },
    })
    .post(
      "/inbound_queue/:queueId/try_now",
      async ({ account, params }) => {
        if (!(await deps.inboundQueue.tryNow(account.id, params.queueId, deps.clock.nowMs())))
          throw notFound(noRecord("waiting message", params.queueId, `GET /api/v0.1/${account.id}/inbound_queue`));
        return { id: params.queueId, next_attempt_at: isoTime(deps.clock.nowMs()) };
      },
      {
        params: t.Object({ accountId: t.String(), queueId: t.String() }),
        response: {
          200: t.Object({ id: t.String(), next_attempt_at: t.String({ format: "date-time" }) }, { title: "TryNow" }),
          ...errorResponses(401, 403, 404, 429),
        },
        detail: {
          operationId: "tryWaitingInboundNow",
          summary: "(beyond) post a waiting message to its target now (within a second, by one node)",
          tags: ["Incoming statuses"],
          security,
        },
      },
    );
}
