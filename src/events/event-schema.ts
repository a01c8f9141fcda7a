// The body of a message events webhook POST (docs/webhooks.md), as a TypeBox schema: the
// dispatcher's body is typed from it and the OpenAPI document's `webhooks` publishes it.
import { Type, type Static } from "@sinclair/typebox";
import { LIFECYCLE_KINDS } from "./kinds.ts";

export const MessageEventSchema = Type.Object(
  {
    id: Type.String({ description: "the event's ID; the same event posted again keeps it" }),
    kind: Type.Union(
      LIFECYCLE_KINDS.map((k) => Type.Literal(k)),
      { description: "what happened to the recipient" },
    ),
    recipient: Type.String({ description: "the recipient's address" }),
    message_id: Type.String({ format: "uuid", description: "the sent message's ID (E11's id)" }),
    outbound_account_id: Type.String(),
    created_at: Type.String({ format: "date-time" }),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "by kind: dispatch, delivery, soft_bounce, bounce {mx, smtp_code, smtp_response, attempt}, soft_bounce and bounce also bounce_class (hard, mailbox_full, block, dmarc, throttled, message, transient, other); click {url, ip, user_agent}; open {ip, user_agent}; retries_exhausted {attempts, first_attempt_at}",
    }),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "(beyond) the message's metadata as E11 was given it; only when it had some",
      }),
    ),
  },
  {
    additionalProperties: false,
    title: "MessageEvent",
    examples: [
      {
        id: "5c1e0f3a9b2d4e61",
        kind: "delivery",
        recipient: "ann@example.org",
        message_id: "37d94576-e788-476b-b0ff-59189bd65240",
        outbound_account_id: "a0000000000000f1",
        created_at: "2026-11-24T15:45:37.080Z",
        details: { mx: "mx.example.org", smtp_code: 250, smtp_response: "250 2.0.0 OK", attempt: 1 },
      },
    ],
  },
);

export const WebhookBodySchema = Type.Object(
  {
    events: Type.Array(MessageEventSchema, {
      minItems: 1,
      maxItems: 100,
      description: "in the order they happened; a 2xx acknowledges them all",
    }),
  },
  { additionalProperties: false, title: "MessageEventsPost", description: "the body of a message events webhook POST (E10)" },
);

export type WebhookEvent = Static<typeof MessageEventSchema>;
export type WebhookBody = Static<typeof WebhookBodySchema>;
