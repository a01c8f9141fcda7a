// The json+n payload posted to a target (docs/receiving.md, json+n), as a TypeBox schema:
// the code's types derive from it (payload.ts) and the OpenAPI document's `webhooks`
// publishes it, so what a target is told it gets cannot drift from what is built.
import { Type, type Static, type TSchema } from "@sinclair/typebox";

const nullable = <T extends TSchema>(s: T, description: string) => Type.Union([s, Type.Null()], { description });

export const AuthResultSchema = Type.Object({
  result: Type.String({ description: "none, neutral, pass, fail, softfail, temperror or permerror" }),
  domain: nullable(Type.String(), "the domain checked: that of MAIL FROM, or the HELO name for the null sender"),
});

export const DkimSignatureSchema = Type.Object(
  {
    domain: Type.String({ description: "its d= domain" }),
    selector: Type.String({ description: "its s= selector" }),
    result: Type.String({ description: "pass, fail, neutral, policy, temperror or permerror" }),
  },
  { additionalProperties: false },
);

export const PayloadEnvelopeSchema = Type.Object(
  {
    to: Type.String({ description: "the recipient (RCPT TO) that reached this address, sub-address included" }),
    recipients: Type.Array(Type.String(), { description: "every recipient of the transaction that reached this account, in RCPT order" }),
    from: Type.String({ description: 'the envelope sender (MAIL FROM); "" for the null sender' }),
    helo_domain: Type.String({ description: "the name the client gave in HELO/EHLO" }),
    remote_ip: Type.String({ description: "the client's IP address" }),
    spf: Type.Object(AuthResultSchema.properties, { additionalProperties: false, description: "the SPF check of the sender" }),
    tls: Type.Boolean({ description: "whether the SMTP session was encrypted" }),
    tls_cipher: nullable(
      Type.String(),
      "the TLS protocol of the session (TLSv1.3), as the hosted service fills this field; null without TLS",
    ),
    md5: Type.String({ pattern: "^[0-9a-f]{32}$", description: "hex MD5 of the message as the sender sent it" }),
    dkim: Type.Object(
      {
        result: Type.String({ description: "pass when any signature passes, else the first signature's result; none when there is none" }),
        signatures: Type.Array(DkimSignatureSchema, { description: "one per signature, in message order" }),
      },
      { additionalProperties: false, description: "the DKIM signatures of the message" },
    ),
    dmarc: Type.Object(
      {
        ...AuthResultSchema.properties,
        policy: nullable(Type.String(), "the policy the DMARC record asks for (none, quarantine, reject), null when there is none"),
      },
      { additionalProperties: false, description: "the DMARC evaluation of the From domain" },
    ),
    store_url: Type.Optional(
      Type.String({
        description:
          "(beyond) only when the address keeps messages (store_messages): a signed URL of the message as the sender sent it, valid inbound.attachment_url_ttl",
      }),
    ),
    spamd: Type.Optional(
      Type.Object(
        {
          score: Type.String({
            pattern: "^-?[0-9]+(\\.[0-9]+)?$",
            description: 'SpamAssassin\'s score as a decimal string (as the hosted service sends it); "0.0" when there was none',
          }),
          symbols: Type.Array(Type.String(), { description: "the rules that hit" }),
          success: Type.Boolean({ description: "false when spamd gave no score (down, too slow, message too large)" }),
          description: Type.String({ description: '"SpamAssassin score", or why there is none' }),
        },
        { additionalProperties: false, description: "(beyond) only with inbound.spamd configured: the message's SpamAssassin score" },
      ),
    ),
  },
  { additionalProperties: false, title: "InboundEnvelope", description: "the SMTP transaction" },
);

export const PayloadHeadersSchema = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), {
  title: "InboundHeaders",
  description: "every header field: names in lower case with - as _; a field that occurs more than once is an array, top first",
});

export const PayloadAttachmentSchema = Type.Object(
  {
    file_name: Type.String(),
    content_type: Type.String({ description: "the part's MIME type, without parameters" }),
    size: Type.String({
      pattern: "^(0|[1-9][0-9]*)$",
      description: "the decoded size in bytes, as a decimal string (as the hosted service sends it)",
    }),
    disposition: Type.String({ description: "inline or attachment" }),
    content_id: nullable(Type.String(), "the part's Content-ID with its angle brackets (<logo@example.org>), null when it has none"),
    content: Type.Optional(Type.String({ contentEncoding: "base64", description: "the content in Base64 (default store only)" })),
    url: Type.Optional(Type.String({ format: "uri", description: "a link to the stored copy (local or S3 store)" })),
  },
  { additionalProperties: false, title: "InboundAttachment" },
);

export const PayloadSchema = Type.Object(
  {
    envelope: PayloadEnvelopeSchema,
    headers: PayloadHeadersSchema,
    plain: Type.Optional(Type.String({ description: "the text part; absent when there is none" })),
    html: Type.Optional(Type.String({ description: "the HTML part; absent when there is none" })),
    reply_plain: Type.Optional(Type.String({ description: "the new text of a reply, quoted history and signature removed" })),
    attachments: Type.Array(PayloadAttachmentSchema, { description: "every attachment and inline part, in message order" }),
  },
  { additionalProperties: false, title: "InboundPayload", description: "the json+n body posted to an address's target" },
);

export type AuthResult = Static<typeof AuthResultSchema>;
export type PayloadEnvelope = Static<typeof PayloadEnvelopeSchema>;
export type PayloadHeaders = Static<typeof PayloadHeadersSchema>;
export type PayloadAttachment = Static<typeof PayloadAttachmentSchema>;
export type Payload = Static<typeof PayloadSchema>;
