// E11: POST /api/v0.1/{outboundAccountID}/messages, authorised with the sending key.
import { t } from "elysia";
import type { Logger } from "../lib/logger.ts";
import type { SendDeps } from "../outbound/sending/send.ts";
import { sendFromApi } from "../outbound/sending/send.ts";
import { MAX_IDEMPOTENCY_KEY_CHARS } from "../outbound/sending/idempotency.ts";
import type { OutboundMessage } from "../outbound/queue/message.ts";
import { InputProblem } from "../outbound/compose/message-input.ts";
import { formatProblem } from "../lib/validation.ts";
import { ApiError, errorResponses } from "../http/errors.ts";
import { sendRoutes } from "./context.ts";
import { DOCUMENTED_BODY } from "./openapi.ts";
import { asOpenApi } from "./openapi-schemas.ts";
import { ONE_LINE_RULE, oneLine } from "../http/text-checks.ts";
import { MAX_METADATA_ENTRIES, MAX_METADATA_VALUE_CHARS } from "../outbound/compose/send-options.ts";

const addressList = (description: string) =>
  t.Union([oneLine(20_000), t.Array(oneLine(1000), { maxItems: 1000 })], {
    errorMessage: `must be a string or an array of strings, ${ONE_LINE_RULE}`,
    description,
  });

/** E11's body as it is checked (field-by-field errors); a batch checks each of its messages against it. */
export const MessageBodySchema = t.Object(
  {
    from: oneLine(1000, { description: "sender; the envelope sender becomes a bounce address" }),
    to: addressList('recipients: an array, or one comma-separated string; "Name <a@b.c>" allowed'),
    cc: t.Optional(addressList("copy recipients")),
    bcc: t.Optional(addressList("(beyond) blind copy recipients: delivered, never named in any copy's headers")),
    send_at: t.Optional(
      oneLine(100, {
        description:
          "(beyond) ISO 8601 time with a zone: no recipient is attempted before it; at most outbound.max_send_ahead (30 days) ahead; a time past is now",
      }),
    ),
    metadata: t.Optional(
      t.Record(t.String(), t.String(), {
        errorMessage: `must be an object of at most ${MAX_METADATA_ENTRIES} strings (keys [A-Za-z0-9_]{1,40}, values at most ${MAX_METADATA_VALUE_CHARS} characters)`,
        description:
          "(beyond) at most 20 string values, keys [A-Za-z0-9_]{1,40}, values at most 500 characters: returned by E12/E13, in each webhook event of the message, searchable as metadata.key:value",
      }),
    ),
    test_mode: t.Optional(t.Boolean({ errorMessage: "must be true or false", description: "validate and record, never send" })),
    subject: t.Optional(oneLine(2000, { description: "replaces any Subject of headers or raw" })),
    tags: t.Optional(
      t.Union([oneLine(5000), t.Array(oneLine(1000), { maxItems: 100 })], {
        errorMessage: `must be a string or an array of strings, ${ONE_LINE_RULE}`,
      }),
    ),
    plain: t.Optional(t.String({ description: "plain text body" })),
    html: t.Optional(t.String({ description: "HTML body" })),
    markdown: t.Optional(t.String({ description: "Markdown body, turned into HTML (and plain text when plain is not given)" })),
    headers: t.Optional(
      t.Record(t.String(), t.Union([t.String({ maxLength: 10_000 }), t.Array(t.String({ maxLength: 10_000 }), { maxItems: 100 })]), {
        errorMessage: "must be an object of strings or arrays of strings",
        description: "extra headers; an array gives one header line per value",
      }),
    ),
    priority: t.Optional(
      t.Union([t.Literal("standard"), t.Literal("priority"), t.Literal("digest")], {
        errorMessage: 'must be "standard", "priority" or "digest"',
      }),
    ),
    attachments: t.Optional(
      t.Array(
        t.Object(
          {
            file_name: oneLine(255, { minLength: 1 }),
            content: t.String({ description: "Base64, without newlines" }),
            content_type: t.Optional(
              oneLine(255, {
                description:
                  "MIME type, parameters allowed; empty or absent: inferred from file_name (application/octet-stream when it says nothing)",
              }),
            ),
            content_id: t.Optional(
              t.Union([oneLine(255), t.Null()], { description: "makes the attachment inline (cid:), with or without <>" }),
            ),
          },
          { additionalProperties: false, title: "MessageAttachment" },
        ),
        { maxItems: 100 },
      ),
    ),
    raw: t.Optional(t.String({ description: "a complete RFC 5322 message; its From/To/Cc must match from/to/cc" })),
  },
  { additionalProperties: false, title: "Message" },
);

// The body is checked as one object (field-by-field errors; message-input.ts refuses raw with
// the composed fields); clients see its two variants, made of the same fields, as oneOf.
const { raw, plain, html, markdown, headers, attachments, ...commonFields } = MessageBodySchema.properties;
/** E11's body for clients: composed from parts, or a raw RFC 5322 message. */
export const MessageToSendSchema = {
  title: "MessageToSend",
  oneOf: [
    t.Object(
      { ...commonFields, plain, html, markdown, headers, attachments },
      {
        additionalProperties: false,
        title: "ComposedMessage",
        description: "give at least one of plain, html and markdown",
        examples: [
          {
            from: "Shop <billing@shop.example.com>",
            to: ["ann@example.org"],
            subject: "Invoice 118",
            html: "<p>Your invoice.</p>",
            tags: ["invoice"],
            attachments: [{ file_name: "invoice.txt", content: "SW52b2ljZSAxMTg=", content_type: "text/plain" }],
          },
        ],
      },
    ),
    t.Object(
      { ...commonFields, raw: t.Optional(raw, false) },
      {
        additionalProperties: false,
        title: "RawMessage",
        examples: [
          {
            from: "billing@shop.example.com",
            to: "ann@example.org",
            raw: "From: billing@shop.example.com\r\nTo: ann@example.org\r\nSubject: Hi\r\n\r\nHello\r\n",
          },
        ],
      },
    ),
  ].map(asOpenApi),
};

export const MessageCommonSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    from: t.String(),
    to: t.Array(t.String()),
    cc: t.Array(t.String()),
    test_mode: t.Boolean(),
    subject: t.Union([t.String(), t.Null()]),
    tags: t.Array(t.String()),
    send_at: t.Optional(t.String({ format: "date-time", description: "(beyond) when the message was scheduled for; only when it was" })),
  },
  { additionalProperties: false, title: "MessageCommon" },
);

/** The 202 body (MessageCommon); send_at only for a scheduled message (the hosted service has none). */
export const messageCommon = (m: OutboundMessage) => ({
  id: m.id,
  from: m.from,
  to: m.to,
  cc: m.cc,
  test_mode: m.testMode,
  subject: m.subject,
  tags: m.tags,
  ...(m.sendAtMs ? { send_at: new Date(m.sendAtMs).toISOString() } : {}),
});

export function messageRoutes(deps: SendDeps, logger: Logger) {
  return sendRoutes("messages").post(
    "/messages",
    async ({ principal, idempotent, requestId, logFields, body, set }) => {
      // The group authenticates E11 with a sending key: the caller is an outbound account.
      if (principal.kind !== "outbound") throw new ApiError(403);
      // With an Idempotency-Key, the answer is stored with the message: a replay gets these bytes.
      const remember = idempotent?.remember((m) => JSON.stringify(messageCommon(m)));
      const log = requestId ? logger.child({ request_id: requestId }) : logger;
      let m: OutboundMessage;
      try {
        m = await sendFromApi({ account: principal.account, outbound: principal.outbound }, body, deps, log, remember);
      } catch (err) {
        if (err instanceof InputProblem) throw new ApiError(422, formatProblem(err.problem));
        throw err;
      }
      // The 202's line names the message it queued.
      logFields.message_id = m.id;
      set.status = 202;
      return messageCommon(m);
    },
    {
      body: MessageBodySchema,
      // Checked by the group's middleware (send-body.ts) before the body is read; here for the document.
      headers: t.Object({
        "idempotency-key": t.Optional(
          t.String({
            minLength: 1,
            maxLength: MAX_IDEMPOTENCY_KEY_CHARS,
            description:
              "(beyond) alias X-Idempotency-Key; remembered 24 hours per outbound account (retention.idempotency_keys): the same key and body get the first 202 again with Idempotent-Replayed: true; another body, or a request with the key still in flight, gets 409",
          }),
        ),
      }),
      response: { 202: MessageCommonSchema, ...errorResponses(401, 403, 409, 413, 422, 429, 503) },
      detail: {
        operationId: "sendMessage",
        summary: "E11: send a message (the account ID in the path is the outbound account ID)",
        tags: ["Sending"],
        security: [{ smtpAuth: [] }],
        [DOCUMENTED_BODY]: MessageToSendSchema,
      },
    },
  );
}
