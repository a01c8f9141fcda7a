// The body posted to a target (docs/receiving.md, json+n and multipart+n), built once per message and address:
// the json+n object, and the same content as multipart+n form fields.
import type { ParsedMail } from "mailparser";
import { payloadHeaders, type PayloadHeaders } from "./headers.ts";
import type { Payload, PayloadAttachment, PayloadEnvelope } from "./payload-schema.ts";

export type { AuthResult, Payload, PayloadAttachment, PayloadEnvelope } from "./payload-schema.ts";
import { replyText } from "./reply-text.ts";

/** An attachment of the message, before we decide to embed it or store it. */
export interface MessageAttachment {
  fileName: string;
  contentType: string;
  disposition: "attachment" | "inline";
  /** As the message gives it, angle brackets included (`<logo@example.org>`). */
  contentId: string | null;
  content: Buffer;
}

/** What every address reached by one message shares: headers, bodies, attachments. */
export interface MessageContent {
  headers: PayloadHeaders;
  /** The same headers under the names the message writes (the original json and multipart formats). */
  originalHeaders: PayloadHeaders;
  plain?: string;
  html?: string;
  reply_plain?: string;
  attachments: MessageAttachment[];
}

export function messageContent(parsed: ParsedMail): MessageContent {
  const plain = typeof parsed.text === "string" && parsed.text !== "" ? parsed.text : undefined;
  const html = typeof parsed.html === "string" && parsed.html !== "" ? parsed.html : undefined;
  const reply_plain = replyText(plain);
  return {
    ...payloadHeaders(parsed.headerLines),
    plain,
    html,
    reply_plain,
    attachments: parsed.attachments.map((a, i) => ({
      fileName: a.filename ?? `attachment-${i + 1}${extensionFor(a.contentType)}`,
      contentType: a.contentType || "application/octet-stream",
      disposition: a.contentDisposition === "inline" ? "inline" : "attachment",
      contentId: contentIdOf(a.contentId),
      content: a.content,
    })),
  };
}

/**
 * The Content-ID with its angle brackets, as the hosted service sends it (its official Go
 * client's fixture, a real capture, has `"<f_kcd6ejvs1>"`); added when the message left them out.
 */
function contentIdOf(header: string | undefined): string | null {
  const id = header?.trim().replace(/^<|>$/g, "").trim();
  return id ? `<${id}>` : null;
}

function extensionFor(contentType: string): string {
  const sub = /^[a-z]+\/([a-z0-9.+-]+)$/i.exec(contentType ?? "")?.[1]?.toLowerCase();
  return sub && /^[a-z0-9]{1,8}$/.test(sub) ? `.${sub}` : "";
}

/**
 * The attachment as the payload lists it: Base64 content, or the URL of the stored copy.
 * `size` is a decimal string and `content_id` keeps its <>, as the hosted service sends
 * them: the official Go client declares `size` as `json:"size,string"` and refuses a number
 * (docs/compatibility.md); the Node client reads either.
 * `content`: what to put as the content instead of the Base64 (a streamed body's marker).
 */
export function payloadAttachment(a: MessageAttachment, url: string | null, content?: string): PayloadAttachment {
  const base = {
    file_name: a.fileName,
    content_type: a.contentType,
    size: String(a.content.length),
    disposition: a.disposition,
    content_id: a.contentId,
  };
  return url === null ? { ...base, content: content ?? a.content.toString("base64") } : { ...base, url };
}

/** `original`: the headers under their names as written (the `json` and `multipart` formats). */
export function buildPayload(
  content: MessageContent,
  envelope: PayloadEnvelope,
  attachments: PayloadAttachment[],
  original = false,
): Payload {
  const payload: Payload = { envelope, headers: original ? content.originalHeaders : content.headers, attachments };
  if (content.plain !== undefined) payload.plain = content.plain;
  if (content.html !== undefined) payload.html = content.html;
  if (content.reply_plain !== undefined) payload.reply_plain = content.reply_plain;
  return payload;
}

/**
 * multipart+n: every field of the payload as a form field named by its path
 * (`headers[received][0]`, `envelope[spf][result]`), booleans as "true"/"false", nulls
 * left out. Embedded attachments are file parts named `attachments[]`; stored ones are
 * `attachments[][file_name]`-style fields; `indexed` (the original `multipart` format):
 * `attachments[0]`, `attachments[0][file_name]`. `contentOf(i)`: what to put as embedded
 * file i's content instead of its bytes (a streamed body's marker).
 */
export function toFormData(
  payload: Payload,
  embedded: MessageAttachment[] | null,
  contentOf?: (i: number) => string,
  indexed = false,
): FormData {
  const form = new FormData();
  const put = (name: string, value: unknown) => {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) for (const [i, v] of value.entries()) put(`${name}[${i}]`, v);
    else if (typeof value === "object") for (const [k, v] of Object.entries(value)) put(`${name}[${k}]`, v);
    else form.append(name, String(value));
  };
  for (const key of ["plain", "html", "reply_plain"] as const) put(key, payload[key]);
  put("headers", payload.headers);
  put("envelope", payload.envelope);
  const slot = (i: number) => (indexed ? `attachments[${i}]` : "attachments[]");
  if (embedded) {
    for (const [i, a] of embedded.entries())
      form.append(slot(i), new Blob([contentOf ? contentOf(i) : a.content], { type: a.contentType }), a.fileName);
  } else {
    payload.attachments.forEach((a, i) => {
      for (const key of ["file_name", "content_type", "size", "disposition", "content_id", "url"] as const) {
        if (a[key] !== null && a[key] !== undefined) form.append(`${slot(i)}[${key}]`, String(a[key]));
      }
    });
  }
  return form;
}
