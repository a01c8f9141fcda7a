// (beyond, issue 34) PATCH /outbound_messages/{id} with a new send_at: a scheduled message
// goes out at another time, while none of its recipients was attempted; cancel is the
// existing POST .../cancel. The rules of send_at are E11's (outbound/compose/send-options.ts).
import { t } from "elysia";
import { isoTime } from "../lib/clock.ts";
import { isProblem, sendAtOf } from "../outbound/compose/send-options.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { conflict, errorResponses, invalid, notFound } from "../http/errors.ts";
import { noMessage } from "../http/refusals.ts";
import { oneLine } from "../http/text-checks.ts";

const REFUSALS = {
  attempted:
    "a recipient of this message has been attempted (or is being delivered now), so it can no longer be rescheduled; cancel what still waits, or send a new message",
  nothing_waits: "no recipient of this message waits for delivery (delivered, cancelled or suppressed); send a new message",
} as const;

/** What the route takes of the API's dependencies. */
export type ScheduleDeps = Pick<ApiDeps, "config" | "clock" | "outbound" | "send">;

export function outboundMessageScheduleRoutes(deps: ScheduleDeps) {
  return accountRoutes("outbound-message-schedule").patch(
    "/outbound_messages/:outboundMessageId",
    async ({ account, params, body }) => {
      const m = await deps.outbound.getMessage(account.id, params.outboundMessageId);
      if (!m) throw notFound(noMessage(account.id, params.outboundMessageId));
      const nowMs = deps.clock.nowMs();
      const sendAt = sendAtOf(body.send_at, nowMs, deps.config().outbound.maxSendAheadMs);
      if (isProblem(sendAt)) throw invalid(sendAt.path, sendAt.message);
      const atMs = sendAt.ms ?? nowMs;
      const result = await deps.outbound.reschedule(m.id, atMs, nowMs);
      if ("refused" in result) throw conflict(REFUSALS[result.refused]);
      // Sooner than the worker's next wake-up, perhaps: it looks again.
      deps.send.notify();
      return { id: m.id, send_at: isoTime(atMs), rescheduled: result.rescheduled };
    },
    {
      params: t.Object({ accountId: t.String(), outboundMessageId: t.String() }),
      body: t.Object(
        {
          send_at: oneLine(100, {
            description: "ISO 8601 time with a zone, at most outbound.max_send_ahead (30 days) ahead; a time past is now",
          }),
        },
        { additionalProperties: false, title: "Reschedule" },
      ),
      response: {
        200: t.Object(
          {
            id: t.String({ format: "uuid" }),
            send_at: t.String({ format: "date-time" }),
            rescheduled: t.Integer({ description: "recipients that now wait for send_at" }),
          },
          { title: "RescheduleResult" },
        ),
        ...errorResponses(401, 403, 404, 409, 422, 429),
      },
      detail: {
        operationId: "rescheduleOutboundMessage",
        summary: "(beyond) move a scheduled message to another send_at, while none of its recipients was attempted",
        tags: ["Sent messages"],
        security: [{ bearerAPIToken: [] }],
      },
    },
  );
}
