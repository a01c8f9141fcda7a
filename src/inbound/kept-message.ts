// (beyond) What the dashboard shows of a kept message (an address with store_messages):
// its header fields in message order, and the payload its target was posted, made again
// from the message and the envelope kept with it, in the address's format. Attachments'
// contents are left out of the view (their size is said instead): the view is for reading.
import { headerSection } from "../lib/header-section.ts";
import type { TargetFormat } from "./addresses/address.ts";
import type { ExtractedMessage } from "./parse/extract.ts";
import { headerValue } from "./payload/headers.ts";
import { buildPayload, payloadAttachment, toFormData, type MessageContent, type PayloadEnvelope } from "./payload/payload.ts";

export interface HeaderField {
  name: string;
  value: string;
}

export interface PayloadView {
  /** The Content-Type the POST had (multipart's boundary left out). */
  contentType: string;
  /** JSON pretty-printed, a form's fields one per line, or the message itself. */
  body: string;
  /** The body was cut at the view's limit. */
  truncated: boolean;
}

/** The most of a payload or message the view shows. */
export const PAYLOAD_VIEW_MAX_CHARS = 256 * 1024;

/** The header fields of `raw` as written: folded lines joined, values decoded, in message order. */
export function headerFields(raw: Buffer): HeaderField[] {
  const { fields } = headerSection(raw.subarray(0, Math.min(raw.length, 1024 * 1024)).toString("latin1"));
  return fields.map((line) => ({ name: line.slice(0, line.indexOf(":")).trim(), value: headerValue(line) }));
}

const cut = (text: string): { body: string; truncated: boolean } =>
  text.length > PAYLOAD_VIEW_MAX_CHARS
    ? { body: text.slice(0, PAYLOAD_VIEW_MAX_CHARS), truncated: true }
    : { body: text, truncated: false };

/** Each attachment's content as the view shows it in its place. */
const elided = (bytes: number) => `(${bytes} bytes, Base64, not shown)`;

/** A form's fields one per line (`name: value`), files by name, type and size. */
function formLines(form: FormData, sizes: readonly number[]): string {
  let file = 0;
  const lines: string[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === "string") lines.push(`${name}: ${value}`);
    else {
      const part = value as File;
      lines.push(`${name}: file "${part.name}" (${part.type || "application/octet-stream"}, ${sizes[file++] ?? part.size} bytes)`);
    }
  }
  return lines.join("\n");
}

/**
 * The payload `format` posts for the message: `extracted` from it, with `envelope` (the one
 * kept with it). Attachments appear embedded, as they are when the address stores none.
 */
export function payloadView(format: TargetFormat, raw: Buffer, extracted: ExtractedMessage | null, envelope: PayloadEnvelope): PayloadView {
  const text = raw.toString("utf8");
  if (format === "rfc822" || extracted === null) return { contentType: "message/rfc822", ...cut(text) };
  if (format === "raw") {
    const form = toFormData({ envelope, headers: {}, attachments: [] }, null);
    return { contentType: "multipart/form-data", ...cut(`message: ${text}\n${formLines(form, [])}`) };
  }
  // Only the first PAYLOAD_VIEW_MAX_CHARS are shown, and a text takes at least as many
  // characters in the view as it has: longer texts are cut first, so a text of control
  // characters (six times longer once escaped in JSON) is never escaped whole to show a part.
  const shown = (t: string | undefined) => (t !== undefined && t.length > PAYLOAD_VIEW_MAX_CHARS ? t.slice(0, PAYLOAD_VIEW_MAX_CHARS) : t);
  const content: MessageContent = {
    ...extracted.content,
    plain: shown(extracted.content.plain),
    html: shown(extracted.content.html),
    reply_plain: shown(extracted.content.reply_plain),
  };
  const original = format === "json" || format === "multipart";
  const sizes = content.attachments.map((a) => a.content.length);
  const payload = buildPayload(
    content,
    envelope,
    content.attachments.map((a) => payloadAttachment(a, null, elided(a.content.length))),
    original,
  );
  if (format === "json+n" || format === "json") return { contentType: "application/json", ...cut(JSON.stringify(payload, null, 2)) };
  const form = toFormData(payload, content.attachments.length > 0 ? content.attachments : null, (i) => elided(sizes[i]!), original);
  return { contentType: "multipart/form-data", ...cut(formLines(form, sizes)) };
}
