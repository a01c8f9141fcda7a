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
        "by kind: dispatch, delivery, soft_bounce, bounce {mx, smtp_code, smtp_response, attempt}; click {url, ip, user_agent}; open {ip, user_agent}; retries_exhausted {attempts, first_attempt_at}",
    }),
  },
  { additionalProperties: false, title: "MessageEvent" },
);

export const WebhookBodySchema = Type.Object(
  { events: Type.Array(MessageEventSchema, { minItems: 1, maxItems: 100, description: "in the order they happened; a 2xx acknowledges them all" }) },
  { additionalProperties: false, title: "MessageEventsPost", description: "the body of a message events webhook POST (E10)" },
);

export type WebhookEvent = Static<typeof MessageEventSchema>;
export type WebhookBody = Static<typeof WebhookBodySchema>;
