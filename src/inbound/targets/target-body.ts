// The body of the POST to a target, in the address's target_format (docs/receiving.md):
// json+n and multipart+n (the normalised formats), json and multipart (the hosted service's
// original ones: headers under their names as written, attachments[0], ...), raw (a form
// with the whole message in `message` and the envelope), and (beyond) rfc822, the message
// itself, as relay ingresses such as Rails Action Mailbox's take it. Messages with large
// embedded attachments, long texts in the JSON formats (escaped as they go: a text of
// control characters is six times larger once escaped, issue 31), and the whole message of
// raw and rfc822, go out streamed: never copied into one string or buffer.
import type { TargetFormat } from "../addresses/address.ts";
import {
  buildPayload,
  payloadAttachment,
  toFormData,
  type MessageAttachment,
  type MessageContent,
  type PayloadEnvelope,
} from "../payload/payload.ts";
import { formBody, jsonBodyOf, STREAMED_FROM_BYTES, type BodyPart, type StreamedBody } from "../payload/payload-body.ts";

/** A text (plain, html, reply_plain) this long is escaped into a JSON body as it goes out. */
export const STREAMED_TEXT_CHARS = 64 * 1024;
const TEXT_KEYS = ["plain", "html", "reply_plain"] as const;

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
  const largeAttachments = embedded && content.attachments.reduce((n, a) => n + a.content.length, 0) >= STREAMED_FROM_BYTES;
  const longTexts = json ? TEXT_KEYS.filter((k) => (content[k]?.length ?? 0) >= STREAMED_TEXT_CHARS) : [];
  if (json && (largeAttachments || longTexts.length > 0)) {
    // Large attachments and long texts are written into the POST as it goes out, never into one string.
    const streamed = largeAttachments ? content.attachments.length : 0;
    const fills: BodyPart[] = [
      ...content.attachments.slice(0, streamed).map((a) => ({ base64Of: a.content })),
      ...longTexts.map((k) => ({ jsonTextOf: content[k]! })),
    ];
    return jsonBodyOf(fills, (markerOf) => {
      const marked: MessageContent = { ...content };
      for (const [j, k] of longTexts.entries()) marked[k] = markerOf(streamed + j);
      return buildPayload(
        marked,
        envelope,
        content.attachments.map((a, i) => payloadAttachment(a, urls[i]!, i < streamed ? markerOf(i) : undefined)),
        original,
      );
    });
  }
  if (largeAttachments)
    return formBody(content.attachments, (contentOf) => toFormData(payloadWith(contentOf), content.attachments, contentOf, original));
  const payload = payloadWith();
  return json
    ? JSON.stringify(payload)
    : toFormData(payload, embedded && content.attachments.length > 0 ? content.attachments : null, undefined, original);
}

/** raw: `message` (where the message's bytes go, at the marker), then the envelope as multipart+n writes it. */
function rawForm(envelope: PayloadEnvelope, messageMarker: string): FormData {
  const form = toFormData({ envelope, headers: {}, attachments: [] }, null);
  const withMessage = new FormData();
  withMessage.append("message", messageMarker);
  for (const [name, value] of form.entries()) withMessage.append(name, value as string);
  return withMessage;
}
