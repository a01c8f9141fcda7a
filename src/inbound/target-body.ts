// The body of the POST to a target, in the address's target_format (docs/receiving.md):
// json+n and multipart+n (the normalised formats), json and multipart (the hosted service's
// original ones: headers under their names as written, attachments[0], ...), raw (a form
// with the whole message in `message` and the envelope), and (beyond) rfc822, the message
// itself, as relay ingresses such as Rails Action Mailbox's take it. Messages with large
// embedded attachments, and the whole message of raw and rfc822, go out streamed: never
// copied into one string or buffer.
import type { TargetFormat } from "./address.ts";
import { buildPayload, payloadAttachment, toFormData, type MessageAttachment, type MessageContent, type PayloadEnvelope } from "./payload.ts";
import { formBody, jsonBody, STREAMED_FROM_BYTES, type StreamedBody } from "./payload-body.ts";

export interface BodyInput {
  format: TargetFormat;
  content: MessageContent;
  envelope: PayloadEnvelope;
  /** Each attachment's stored copy, or null where it is embedded. */
  urls: (string | null)[];
  /** The message as the sender sent it (without our trace lines). */
  raw: Buffer;
}

export async function targetBody(input: BodyInput): Promise<string | FormData | StreamedBody> {
  const { format, content, envelope, urls, raw } = input;
  if (format === "rfc822") return { parts: [{ bytes: raw }], length: raw.length, contentType: "message/rfc822" };
  if (format === "raw") {
    const message: MessageAttachment = { fileName: "", contentType: "", disposition: "attachment", contentId: null, content: raw };
    return formBody([message], (contentOf) => rawForm(envelope, contentOf(0)));
  }
  const original = format === "json" || format === "multipart";
  const json = format === "json+n" || format === "json";
  const embedded = urls.every((u) => u === null);
  const payloadWith = (contentOf?: (i: number) => string) =>
    buildPayload(
      content,
      envelope,
      content.attachments.map((a, i) => payloadAttachment(a, urls[i]!, contentOf?.(i))),
      original,
    );
  if (embedded && content.attachments.reduce((n, a) => n + a.content.length, 0) >= STREAMED_FROM_BYTES) {
    // Large attachments are written into the POST as it goes out, never into one string.
    return json ? jsonBody(content.attachments, payloadWith) : formBody(content.attachments, (contentOf) => toFormData(payloadWith(contentOf), content.attachments, contentOf, original));
  }
  const payload = payloadWith();
  return json ? JSON.stringify(payload) : toFormData(payload, embedded && content.attachments.length > 0 ? content.attachments : null, undefined, original);
}

/** raw: `message` (where the message's bytes go, at the marker), then the envelope as multipart+n writes it. */
function rawForm(envelope: PayloadEnvelope, messageMarker: string): FormData {
  const form = toFormData({ envelope, headers: {}, attachments: [] }, null);
  const withMessage = new FormData();
  withMessage.append("message", messageMarker);
  for (const [name, value] of form.entries()) withMessage.append(name, value as string);
  return withMessage;
}
