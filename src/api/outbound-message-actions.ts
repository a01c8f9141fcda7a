// (beyond) What the dashboard does with one sent message: its source (as stored, for the
// .eml download), its content parsed (headers, text, HTML, attachment names), retry now for
// recipients waiting in the queue, and cancel for those not being delivered this moment.
import { t } from "elysia";
import { simpleParser } from "mailparser";
import { webhookConfigured } from "../outbound/queue/webhook-configured.ts";
import type { AccountConfig } from "../config/config.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { ApiError, errorResponses, notFound } from "../http/errors.ts";
import { noMessage } from "../http/refusals.ts";

const security = [{ bearerAPIToken: [] }];
const params = t.Object({ accountId: t.String(), outboundMessageId: t.String() });

const ContentSchema = t.Object(
  {
    headers: t.Array(t.Object({ name: t.String(), value: t.String() }), { description: "in the order of the message" }),
    text: t.Union([t.String(), t.Null()]),
    html: t.Union([t.String(), t.Null()], { description: "as sent: show it only in a sandboxed frame that loads nothing remote" }),
    attachments: t.Array(t.Object({ filename: t.Union([t.String(), t.Null()]), content_type: t.String(), size: t.Integer() })),
  },
  { additionalProperties: false, title: "SentMessageContent" },
);

/** What the routes take of the API's dependencies. */
export type OutboundActionDeps = Pick<ApiDeps, "config" | "clock" | "outbound" | "send">;

export function outboundMessageActionRoutes(deps: OutboundActionDeps) {
  /** The caller's message and its stored source, or 404 (another account's, or a body past retention.bodies). */
  const source = async (account: AccountConfig, id: string) => {
    const m = await deps.outbound.getMessage(account.id, id);
    if (!m) throw notFound(noMessage(account.id, id));
    const raw = await deps.outbound.rawMessage(m.id);
    if (!raw)
      throw new ApiError(
        404,
        "Not Found: the source of this message is no longer kept (retention.bodies; raise it to keep sources longer)",
      );
    return { message: m, raw };
  };
  return accountRoutes("outbound-message-actions")
    .get(
      "/outbound_messages/:outboundMessageId/raw",
      async ({ account, params }) => {
        const { message, raw } = await source(account, params.outboundMessageId);
        return new Response(raw, {
          headers: { "content-type": "message/rfc822", "content-disposition": `attachment; filename="${message.id}.eml"` },
        });
      },
      {
        params,
        detail: {
          operationId: "getOutboundMessageSource",
          summary: "(beyond) the message as stored (before per-recipient changes and DKIM), for download as .eml",
          tags: ["Sent messages"],
          security,
          responses: {
            200: { description: "the message", content: { "message/rfc822": { schema: { type: "string", format: "binary" } } } },
            ...Object.fromEntries(
              [401, 403, 404, 429].map((c) => [
                c,
                { description: "error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
              ]),
            ),
          },
        },
      },
    )
    .get(
      "/outbound_messages/:outboundMessageId/content",
      async ({ account, params }) => {
        const parsed = await simpleParser((await source(account, params.outboundMessageId)).raw, {
          skipImageLinks: true,
          skipTextToHtml: true,
        });
        return {
          headers: parsed.headerLines.map((h) => ({
            name: h.line.slice(0, h.line.indexOf(":")),
            value: h.line.slice(h.line.indexOf(":") + 1).trim(),
          })),
          text: parsed.text ?? null,
          html: typeof parsed.html === "string" ? parsed.html : null,
          attachments: parsed.attachments.map((a) => ({ filename: a.filename ?? null, content_type: a.contentType, size: a.size })),
        };
      },
      {
        params,
        response: { 200: ContentSchema, ...errorResponses(401, 403, 404, 429) },
        detail: {
          operationId: "getOutboundMessageContent",
          summary: "(beyond) a sent message's headers, text, HTML and attachment names",
          tags: ["Sent messages"],
          security,
        },
      },
    )
    .post(
      "/outbound_messages/:outboundMessageId/retry",
      async ({ account, params }) => {
        const m = await deps.outbound.getMessage(account.id, params.outboundMessageId);
        if (!m) throw notFound(noMessage(account.id, params.outboundMessageId));
        const due = await deps.outbound.dueNow(m.id, deps.clock.nowMs());
        deps.send.notify();
        return { due };
      },
      {
        params,
        response: {
          200: t.Object({ due: t.Integer({ description: "recipients made due now" }) }, { title: "RetryResult" }),
          ...errorResponses(401, 403, 404, 429),
        },
        detail: {
          operationId: "retryOutboundMessage",
          summary: "(beyond) try the queued recipients of a message now instead of at their next retry",
          tags: ["Sent messages"],
          security,
        },
      },
    )
    .post(
      "/outbound_messages/:outboundMessageId/cancel",
      async ({ account, params }) => {
        const m = await deps.outbound.getMessage(account.id, params.outboundMessageId);
        if (!m) throw notFound(noMessage(account.id, params.outboundMessageId));
        const r = await deps.outbound.cancelQueued(m.id, deps.clock.nowMs(), {
          webhook: webhookConfigured(deps.config().accounts, m.outboundAccountId),
        });
        return { cancelled: r.cancelled, in_delivery: r.inDelivery };
      },
      {
        params,
        response: {
          200: t.Object(
            {
              cancelled: t.Integer({ description: "queued recipients taken off the queue (each with an error event)" }),
              in_delivery: t.Integer({ description: "recipients being delivered this moment: their attempt goes on" }),
            },
            { title: "CancelResult" },
          ),
          ...errorResponses(401, 403, 404, 429),
        },
        detail: {
          operationId: "cancelOutboundMessage",
          summary: "(beyond) stop delivering a message to its queued recipients",
          tags: ["Sent messages"],
          security,
        },
      },
    );
}
