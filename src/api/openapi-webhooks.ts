// The `webhooks` of the OpenAPI document: the POSTs Postroom makes, to an address's target
// (json+n and multipart+n, docs/receiving.md) and to an account's events webhook (E10,
// docs/webhooks.md). Their bodies come from the schemas the code's types derive from; the
// multipart+n fields are derived from the json+n schema the way toFormData names them.
import type { TSchema } from "@sinclair/typebox";
import { WebhookBodySchema } from "../events/event-schema.ts";
import { PayloadAttachmentSchema, PayloadSchema } from "../inbound/payload/payload-schema.ts";
import { asOpenApi } from "./openapi-schemas.ts";

export const WEBHOOK_SECURITY_SCHEMES = {
  webhookToken: { type: "http", scheme: "bearer", description: "the token configured for the account's events webhook" },
  targetCredentials: { type: "http", scheme: "basic", description: "the user and password written in the target URL, when it has them" },
};

const header = (name: string, required: boolean, description: string, schema: Record<string, unknown> = { type: "string" }) => ({
  name,
  in: "header",
  required,
  description,
  schema,
});
const signatureHeaders = (idDescription: string, always: boolean) => [
  header("webhook-id", always, `Standard Webhooks: ${idDescription}`),
  header("webhook-timestamp", always, "Standard Webhooks: Unix seconds of the signature", { type: "string", pattern: "^[0-9]+$" }),
  header("webhook-signature", false, "Standard Webhooks: v1,<Base64 HMAC-SHA256 of id.timestamp.body>, when a signing secret is set"),
];

const answer = (description: string) => ({ description });

export function openApiWebhooks(): Record<string, unknown> {
  return {
    inboundMessage: {
      post: {
        operationId: "postInboundMessage",
        summary: "A received message, posted to the address's target",
        description:
          "One POST per message and address, made while the sending server waits at the end of DATA. " +
          "json+n sends the payload as JSON; multipart+n the same content as form fields, embedded attachments as file parts named attachments[]. " +
          "The other target formats (json and multipart with header names as written, raw, rfc822) are described in docs/receiving.md.",
        tags: ["Webhooks"],
        security: [{}, { targetCredentials: [] }],
        parameters: [
          header("X-Postroom-Message-Id", true, "the same for the same message to the same address, also when the sender retries", {
            type: "string",
            pattern: "^[0-9a-f]{32}$",
          }),
          // Sent only to signed addresses.
          ...signatureHeaders("the message's key, as X-Postroom-Message-Id", false),
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: asOpenApi(PayloadSchema) },
            "multipart/form-data": { schema: formFieldsSchema(PayloadSchema), encoding: { "attachments[]": { contentType: "*/*" } } },
          },
        },
        responses: {
          "2XX": answer("accepted: the sender gets 250"),
          "404": answer("the sender gets 554 5.1.1; a text/plain body's first line becomes the reply text"),
          "4XX": answer("the sender gets 550 5.7.1; a text/plain body's first line becomes the reply text"),
          "5XX": answer("the sender gets 451 4.3.0 and tries again later"),
        },
      },
    },
    messageEvents: {
      post: {
        operationId: "postMessageEvents",
        summary: "E10: events of sent messages, posted to the account's events webhook",
        description: "Up to 100 events a POST, in order. Anything but a 2xx (or no answer in time) is retried with backoff for 3 days.",
        tags: ["Webhooks"],
        security: [{ webhookToken: [] }],
        parameters: signatureHeaders("the batch's ID, the same for every retry of it", true),
        requestBody: { required: true, content: { "application/json": { schema: asOpenApi(WebhookBodySchema) } } },
        responses: { "2XX": answer("every event of the POST is acknowledged"), default: answer("the POST is retried later") },
      },
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is untyped JSON walked by shape
type Schema = Record<string, any>;
interface FormFields {
  properties: Record<string, Schema>;
  patternProperties: Record<string, Schema>;
  required: string[];
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * multipart+n's form fields (src/inbound/payload/payload.ts, toFormData): each value of the json+n
 * payload as a field named by its path (`envelope[spf][result]`, `headers[received][0]`),
 * booleans and numbers as text, nulls left out; attachments as file parts `attachments[]`,
 * or as `attachments[][file_name]`... fields when they are stored elsewhere.
 */
export function formFieldsSchema(payload: TSchema): Schema {
  const fields: FormFields = { properties: {}, patternProperties: {}, required: [] };
  for (const [key, schema] of Object.entries<Schema>(payload.properties)) {
    if (key === "attachments") continue;
    addField(fields, { literal: key, regex: escapeRegex(key) }, schema, (payload.required ?? []).includes(key));
  }
  fields.properties["attachments[]"] = {
    type: "array",
    description: "embedded attachments as files, in message order",
    items: { type: "string", contentMediaType: "application/octet-stream" },
  };
  for (const [key, schema] of Object.entries<Schema>(PayloadAttachmentSchema.properties)) {
    if (key === "content") continue;
    fields.properties[`attachments[][${key}]`] = {
      type: "array",
      description: "attachments stored elsewhere, one value each, in message order",
      items: textOf(schema),
    };
  }
  return {
    type: "object",
    title: "InboundPayloadForm",
    description: "the multipart+n body: the json+n payload as form fields",
    properties: fields.properties,
    patternProperties: fields.patternProperties,
    required: fields.required,
    additionalProperties: false,
  };
}

interface FieldName {
  /** The name itself, or null once a part of it varies (record keys, array indexes). */
  literal: string | null;
  regex: string;
}

function addField(fields: FormFields, name: FieldName, schema: Schema, required: boolean): void {
  const child = (key: string | null, keyRegex: string): FieldName => ({
    literal: name.literal !== null && key !== null ? `${name.literal}[${key}]` : null,
    regex: `${name.regex}\\[${keyRegex}\\]`,
  });
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches) {
    const nullable = branches.some((b) => b.type === "null");
    const values = branches.filter((b) => b.type !== "null");
    // A value that may be a string or an array of strings has both names (optional each).
    for (const b of values) addField(fields, name, { description: schema.description, ...b }, required && !nullable && values.length === 1);
    return;
  }
  if (schema.type === "object") {
    for (const [key, s] of Object.entries<Schema>(schema.properties ?? {}))
      addField(fields, child(key, escapeRegex(key)), s, required && (schema.required ?? []).includes(key));
    for (const s of Object.values<Schema>(schema.patternProperties ?? {})) addField(fields, child(null, "[^\\]]+"), s, false);
    return;
  }
  if (schema.type === "array") return addField(fields, child(null, "[0-9]+"), schema.items, false);
  if (name.literal !== null) {
    fields.properties[name.literal] = textOf(schema);
    if (required) fields.required.push(name.literal);
  } else {
    fields.patternProperties[`^${name.regex}$`] = textOf(schema);
  }
}

/** A scalar of the payload as a form field's text. */
function textOf(schema: Schema): Schema {
  const description = schema.description ? { description: schema.description } : {};
  if (schema.anyOf) return textOf({ ...schema.anyOf.find((b: Schema) => b.type !== "null"), ...description });
  if (schema.type === "boolean") return { type: "string", enum: ["true", "false"], ...description };
  if (schema.type === "integer" || schema.type === "number") return { type: "string", pattern: "^[0-9]+$", ...description };
  return { type: "string", ...(schema.pattern ? { pattern: schema.pattern } : {}), ...description };
}
