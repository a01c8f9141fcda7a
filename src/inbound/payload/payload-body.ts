// The body posted to a target when the message embeds large attachments (issue 15): the
// same bytes as JSON.stringify or a FormData would give, but never held whole. The small
// parts (everything but the attachments' content) are serialised as usual with a marker
// where each attachment goes; the attachments are then written between them as the POST
// goes out, in Base64 (json+n) or as they are (multipart+n), a slice at a time. Long
// texts (plain, html) of a JSON body are written the same way, escaped a slice at a time:
// a message of control characters is six times larger once escaped (`\u0001` for each
// byte, issue 31), and would otherwise be built whole, twice (string and UTF-8). Its length
// is known beforehand (sent as Content-Length), and it can be read again (a redirect sends
// it again, the signature reads it first).
import { createHmac, randomBytes } from "node:crypto";
import { garbageMade } from "../../lib/gc-pacer.ts";
import type { MessageAttachment, Payload } from "./payload.ts";

export type BodyPart = { bytes: Buffer } | { base64Of: Buffer } | { jsonTextOf: string };

export interface StreamedBody {
  parts: BodyPart[];
  /** Bytes of the whole body (its Content-Length). */
  length: number;
  contentType: string;
}

/** Messages whose embedded attachments add up to this much are posted streamed. */
export const STREAMED_FROM_BYTES = 256 * 1024;

/** Attachment bytes per slice (a multiple of 3, so the Base64 of the slices joins up). */
const SLICE_BYTES = 48 * 1024;
/** Characters of a text per slice: at most 6 bytes each once escaped (`\u0001`). */
const TEXT_SLICE_CHARS = 16 * 1024;

const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

/** A string no message can contain where it appears (random per body). */
const markerOf = (nonce: string, i: number) => `\u0000postroom-${nonce}-${i}\u0000`;

/** Splits `text` at each marker's serialised form (in whatever order they appear), putting its part between. */
function splitAt(text: Buffer, markers: Buffer[], between: (i: number) => BodyPart): BodyPart[] {
  const places = markers.map((marker, i) => {
    const at = text.indexOf(marker);
    if (at < 0) throw new Error("streamed body: a streamed part's place was not found");
    return { at, end: at + marker.length, i };
  });
  places.sort((a, b) => a.at - b.at);
  const parts: BodyPart[] = [];
  let from = 0;
  for (const { at, end, i } of places) {
    parts.push({ bytes: text.subarray(from, at) }, between(i));
    from = end;
  }
  parts.push({ bytes: text.subarray(from) });
  return parts;
}

/**
 * The UTF-8 bytes of `text` as JSON.stringify writes it between its quotes: `"` and `\`
 * and the short escapes take 2, other control characters and lone surrogates 6 (`\u0001`).
 */
export function jsonTextLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += c === 0x22 || c === 0x5c || c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : c < 0x20 ? 6 : 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += c >= 0xd800 && c <= 0xdfff ? 6 : 3;
  }
  return n;
}

const partLength = (p: BodyPart) =>
  "bytes" in p ? p.bytes.length : "base64Of" in p ? base64Length(p.base64Of.length) : jsonTextLength(p.jsonTextOf);
const lengthOf = (parts: BodyPart[]) => parts.reduce((n, p) => n + partLength(p), 0);

/** `text` in slices of about TEXT_SLICE_CHARS, never between the two halves of a surrogate pair. */
function* textSlices(text: string): Generator<string> {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + TEXT_SLICE_CHARS);
    if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800 && (text.charCodeAt(end) & 0xfc00) === 0xdc00) end--;
    yield text.slice(at, end);
    at = end;
  }
}

/**
 * json+n: `payload(contentOf)` builds the payload with `contentOf(i)` as the `content` of
 * embedded attachment i; each is replaced by that attachment's Base64 (which JSON never
 * escapes), exactly where JSON.stringify would have put it.
 */
export function jsonBody(attachments: MessageAttachment[], payload: (contentOf: (i: number) => string) => Payload): StreamedBody {
  return jsonBodyOf(
    attachments.map((a) => ({ base64Of: a.content })),
    payload,
  );
}

/**
 * A JSON body with `fills[i]` written where `payload(markerOf)` put `markerOf(i)` (inside
 * a JSON string, so Base64 or an escaped text goes between the quotes).
 */
export function jsonBodyOf(fills: BodyPart[], payload: (markerOf: (i: number) => string) => Payload): StreamedBody {
  const nonce = randomBytes(12).toString("hex");
  const text = Buffer.from(JSON.stringify(payload((i) => markerOf(nonce, i))), "utf8");
  // The marker as JSON writes it, quotes excluded.
  const markers = fills.map((_, i) => Buffer.from(JSON.stringify(markerOf(nonce, i)).slice(1, -1), "utf8"));
  const parts = splitAt(text, markers, (i) => fills[i]!);
  return { parts, length: lengthOf(parts), contentType: "application/json" };
}

/**
 * multipart+n: `form(contentOf)` builds the form with `contentOf(i)` as the content of
 * embedded attachment i's file part; the form is encoded (its boundary, headers and
 * fields as FormData writes them), and each file's bytes go where its marker was.
 */
export async function formBody(
  attachments: MessageAttachment[],
  form: (contentOf: (i: number) => string) => FormData,
): Promise<StreamedBody> {
  const nonce = randomBytes(12).toString("hex");
  const encoded = new Response(form((i) => markerOf(nonce, i)));
  // The type carries the boundary; read it before the body (Bun drops it once consumed).
  const contentType = encoded.headers.get("content-type")!;
  const text = Buffer.from(await encoded.arrayBuffer());
  const markers = attachments.map((_, i) => Buffer.from(markerOf(nonce, i), "utf8"));
  const parts = splitAt(text, markers, (i) => ({ bytes: attachments[i]!.content }));
  return { parts, length: lengthOf(parts), contentType };
}

/** The body's bytes, slice by slice. */
export function* slicesOf(body: StreamedBody): Generator<Uint8Array> {
  for (const part of body.parts) {
    if ("jsonTextOf" in part) {
      for (const slice of textSlices(part.jsonTextOf)) {
        const escaped = Buffer.from(JSON.stringify(slice).slice(1, -1), "utf8");
        garbageMade(2 * escaped.length);
        yield escaped;
      }
      continue;
    }
    const source = "bytes" in part ? part.bytes : part.base64Of;
    for (let at = 0; at < source.length; at += SLICE_BYTES) {
      const slice = source.subarray(at, at + SLICE_BYTES);
      if ("bytes" in part) {
        yield slice;
        continue;
      }
      // A string and a buffer of each slice's Base64, dropped once written.
      garbageMade(3 * slice.length);
      yield Buffer.from(slice.toString("base64"), "latin1");
    }
  }
}

/** A new stream of the body (each request, redirects included, reads its own). */
export function streamOf(body: StreamedBody): ReadableStream<Uint8Array> {
  const slices = slicesOf(body);
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = slices.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Standard Webhooks' signature (`v1,` + Base64 HMAC-SHA256 over "<id>.<timestamp>.<body>",
 * keyed with the secret after whsec_, Base64-decoded), over the body's bytes as sent.
 */
export function signatureOf(secret: string, messageId: string, timestampS: number, body: StreamedBody): string {
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
  const hmac = createHmac("sha256", key).update(`${messageId}.${timestampS}.`);
  for (const slice of slicesOf(body)) hmac.update(slice);
  return `v1,${hmac.digest("base64")}`;
}
