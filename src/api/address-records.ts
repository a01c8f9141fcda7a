// Addresses on the wire: the request body schemas, the record responses show (secrets
// masked), and the checks that turn a body into stored values.
import { t, type Static } from "elysia";
import {
  attachmentStoreProblems,
  maskAttachmentStore,
  restoreMaskedAttachmentSecret,
  type AttachmentStore,
} from "../inbound/addresses/attachment-store.ts";
import {
  TARGET_FAILURE_MODES,
  TARGET_FORMATS,
  type Address,
  type TargetFailureMode,
  type TargetFormat,
} from "../inbound/addresses/address.ts";
import { maskTarget, resolveTarget, targetAddressProblem, targetProblem, type StoredTarget } from "../inbound/addresses/target-url.ts";
import { isoTime } from "../lib/clock.ts";
import { invalid } from "../http/errors.ts";
import { oneLine } from "../http/text-checks.ts";

const secret = (description: string) => oneLine(256, { minLength: 1, description });

export const AttachmentStoreSchema = t.Object(
  {
    store: t.Optional(
      t.Union([t.Literal("local"), t.Literal("s3")], {
        errorMessage: 'must be "local" or "s3"',
        description: "omit to embed attachments Base64 in the payload",
      }),
    ),
    bucket: t.Optional(oneLine(63, { description: "S3 bucket (store s3)" })),
    path_prefix: t.Optional(oneLine(512, { description: "key prefix inside the bucket (store s3)" })),
    region: t.Optional(oneLine(64, { description: "S3 region (store s3)" })),
    endpoint: t.Optional(oneLine(2048, { description: "S3-compatible endpoint URL (store s3)" })),
    access_key_id: t.Optional(secret("S3 access key ID (store s3)")),
    secret_access_key: t.Optional(secret("S3 secret key (store s3); reads back as ***")),
  },
  { additionalProperties: false, title: "AttachmentStore", description: "where attachments of received mail are kept" },
);

const addressFields = {
  target: oneLine(2048, { description: "http(s) URL that receives a POST per email; credentials in it are sent as Basic auth" }),
  target_format: t.Union(
    TARGET_FORMATS.map((f) => t.Literal(f)),
    {
      errorMessage: `must be one of ${TARGET_FORMATS.map((f) => `"${f}"`).join(", ")}`,
      description:
        "format of the POST: json+n, multipart+n (normalised); json, multipart (header names as written, attachments[0]...); raw (a form with the message in `message` and the envelope); rfc822 (beyond: the message itself, Content-Type message/rfc822)",
    },
  ),
  nickname: t.Optional(
    t.Union([oneLine(255), t.Null()], {
      errorMessage: "must be one line of at most 255 characters without control characters, or null",
      description: "a label",
    }),
  ),
  attachments: t.Optional(AttachmentStoreSchema),
  signed: t.Optional(
    t.Boolean({
      errorMessage: "must be true or false",
      description:
        "(beyond) sign every POST with Standard Webhooks headers; the secret is returned once, in the answer that turns signing on. Left out: unchanged.",
    }),
  ),
  store_messages: t.Optional(
    t.Boolean({
      errorMessage: "must be true or false",
      description:
        "(beyond) keep each received message (in the attachment store; locally when there is none) and send its signed URL as envelope.store_url. Left out: unchanged.",
    }),
  ),
  on_target_failure: t.Optional(
    t.Union(
      TARGET_FAILURE_MODES.map((m) => t.Literal(m)),
      {
        errorMessage: 'must be "defer" or "queue"',
        description:
          '(beyond) a 5xx, a timeout or an unreachable target: "defer" (default) answers the sender 451 and it retries; "queue" accepts the mail (250), keeps it and posts it again on inbound.retry_delays until inbound.max_queue_time. A 4xx refuses the mail either way. Left out: unchanged.',
      },
    ),
  ),
  spam_threshold: t.Optional(
    t.Union([t.Number({ minimum: -1000, maximum: 1000 }), t.Null()], {
      errorMessage: "must be a number from -1000 to 1000, or null",
      description:
        "(beyond) with inbound.spamd set, mail whose SpamAssassin score is above this is refused with 550 5.7.1 and recorded; null = never. Left out: unchanged.",
    }),
  ),
};

export const AddressCreateBody = t.Object(addressFields, {
  additionalProperties: false,
  title: "AddressInput",
  examples: [
    {
      target: "https://hook:s3cret@app.example.com/mail",
      target_format: "json+n",
      nickname: "invoices",
      attachments: { store: "local" },
      signed: true,
    },
  ],
});

export const AddressPatchBody = t.Object(
  {
    target: t.Optional(addressFields.target),
    target_format: t.Optional(addressFields.target_format),
    nickname: addressFields.nickname,
    attachments: addressFields.attachments,
    signed: addressFields.signed,
    store_messages: addressFields.store_messages,
    on_target_failure: addressFields.on_target_failure,
    spam_threshold: addressFields.spam_threshold,
  },
  { additionalProperties: false, title: "AddressPatch" },
);

export const AddressRecordSchema = t.Object(
  {
    id: t.String({ pattern: "^[0-9a-f]{20}$" }),
    email: t.String({ description: "the address to send mail to" }),
    target: t.String({ description: "password, if any, shown as ***" }),
    target_format: t.String(),
    nickname: t.Union([t.String(), t.Null()]),
    attachments: AttachmentStoreSchema,
    signed: t.Boolean({ description: "(beyond) whether POSTs carry Standard Webhooks signatures" }),
    signing_secret: t.Optional(t.String({ description: "(beyond) the whsec_ secret, only in the answer that turned signing on" })),
    store_messages: t.Boolean({ description: "(beyond) whether received messages are kept and linked as envelope.store_url" }),
    on_target_failure: t.String({ description: '(beyond) "defer" or "queue": what a failing target does to the mail' }),
    spam_threshold: t.Union([t.Number(), t.Null()], {
      description: "(beyond) the SpamAssassin score above which mail is refused, or null",
    }),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false, title: "Address" },
);
export type AddressRecord = Static<typeof AddressRecordSchema>;

/** The record; `revealSecret` only in the answer that has just turned signing on. */
export function addressRecord(a: Address, inboundDomain: string, revealSecret = false): AddressRecord {
  return {
    id: a.id,
    email: `${a.id}@${inboundDomain}`,
    target: maskTarget(a.target),
    target_format: a.targetFormat,
    nickname: a.nickname,
    attachments: maskAttachmentStore(a.attachments),
    signed: a.signingSecret !== null,
    ...(revealSecret && a.signingSecret ? { signing_secret: a.signingSecret } : {}),
    store_messages: a.storeMessages === true,
    on_target_failure: a.onTargetFailure ?? "defer",
    spam_threshold: a.spamThreshold ?? null,
    created_at: isoTime(a.createdAtMs),
    updated_at: isoTime(a.updatedAtMs),
  };
}

export const newSigningSecret = (): string => "whsec_" + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");

export interface AddressValues {
  target: StoredTarget;
  targetFormat: TargetFormat;
  nickname: string | null;
  attachments: AttachmentStore;
  signingSecret: string | null;
  storeMessages: boolean;
  onTargetFailure: TargetFailureMode;
  spamThreshold: number | null;
}

/** Checks a create/PUT body (or a PATCH merged onto the stored address); throws 422. */
export function addressValues(
  input: {
    target: string;
    target_format: TargetFormat;
    nickname?: string | null;
    attachments?: AttachmentStore;
    signed?: boolean;
    store_messages?: boolean;
    on_target_failure?: TargetFailureMode;
    spam_threshold?: number | null;
  },
  stored: Address | null,
  allowPrivateTargets: boolean,
): AddressValues {
  const problem = targetProblem(input.target) ?? targetAddressProblem(input.target, allowPrivateTargets);
  if (problem) throw invalid("target", problem);
  const target = resolveTarget(input.target, stored?.target ?? null);
  if (target === null) throw invalid("target", "the password *** is the mask shown on read; send the real password");
  const attachmentsIn = input.attachments ?? {};
  const problems = attachmentStoreProblems(attachmentsIn, allowPrivateTargets);
  if (problems[0]) throw invalid(problems[0].path, problems[0].message);
  const attachments = restoreMaskedAttachmentSecret(attachmentsIn, stored?.attachments ?? null);
  if (attachments === null) throw invalid("attachments.secret_access_key", "*** is the mask shown on read; send the real key");
  // Left out, signing stays as it was: a client that knows nothing of it must not turn it off.
  const prior = stored?.signingSecret ?? null;
  const signingSecret = input.signed === undefined ? prior : input.signed ? (prior ?? newSigningSecret()) : null;
  // Left out, kept as it was (a PUT from a client that knows nothing of it must not turn it off).
  const storeMessages = input.store_messages ?? stored?.storeMessages === true;
  // Left out, as they were: a client of the hosted service knows nothing of them.
  const onTargetFailure = input.on_target_failure ?? stored?.onTargetFailure ?? "defer";
  const spamThreshold = input.spam_threshold === undefined ? (stored?.spamThreshold ?? null) : input.spam_threshold;
  return {
    target,
    targetFormat: input.target_format,
    nickname: input.nickname ?? null,
    attachments,
    signingSecret,
    storeMessages,
    onTargetFailure,
    spamThreshold,
  };
}
