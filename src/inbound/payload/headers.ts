// Message headers as the payload carries them (docs/receiving.md, Headers): names lower case with
// "-" replaced by "_", a header seen once is a string, one seen more often an array in
// message order (top first); values unfolded and MIME-decoded to UTF-8.
import libmime from "libmime";
import { BoundedCache } from "../../lib/bounded-cache.ts";

export type { PayloadHeaders } from "./payload-schema.ts";
import type { PayloadHeaders } from "./payload-schema.ts";

export const headerKey = (name: string): string => name.trim().toLowerCase().replace(/-/g, "_");

// Messages carry the same few dozen header names; their payload keys are kept rather
// than made again for every header of every message. Bounded: names are sender-chosen.
const KEY_CACHE_ENTRIES = 1024;
const keys = new BoundedCache<string, string>(KEY_CACHE_ENTRIES);

const NON_ASCII = /[\x80-\xff]/;
const NOT_A_BYTE = /[^\x00-\xff]/;

/**
 * A header's bytes (mailparser's header lines hold one character per byte) as text: raw
 * UTF-8, which SMTPUTF8 allows and many mailers send anyway, is read as UTF-8; bytes that
 * are not valid UTF-8 are kept one character each (Latin-1), as mailparser does for the
 * header values it decodes itself.
 */
export function headerText(bytes: string): string {
  // A string that is not one of bytes was decoded already.
  if (!NON_ASCII.test(bytes) || NOT_A_BYTE.test(bytes)) return bytes;
  const utf8 = Buffer.from(bytes, "latin1").toString("utf8");
  return utf8.includes("\uFFFD") ? bytes : utf8;
}

/** The value of a raw header line ("Subject: =?utf-8?...") unfolded and decoded. */
export function headerValue(line: string): string {
  const colon = line.indexOf(":");
  const value = colon >= 0 ? headerText(line.slice(colon + 1)) : "";
  const raw = (value.includes("\n") ? value.replace(/\r?\n(?=[ \t])/g, "") : value).trim();
  if (!raw.includes("=?")) return raw;
  try {
    return libmime.decodeWords(raw);
  } catch {
    return raw;
  }
}

/** A header line as mailparser gives it: `key` its name in lower case, `line` the whole field. */
type HeaderLine = { key: string; line: string };

/**
 * Both shapes of the headers from one pass, each value unfolded and decoded once: the
 * payload's (`headers`, normalised names) and, for the original `json` and `multipart`
 * formats, `originalHeaders` under the names the message writes (`From`, `X-Mailer`; a
 * name seen again in another case joins the first one's array). Decoding every value
 * twice, once per shape, was a sixth of the payload's cost (issue 38).
 */
export function payloadHeaders(lines: readonly HeaderLine[]): { headers: PayloadHeaders; originalHeaders: PayloadHeaders } {
  const headers = headerObject();
  const original = headerObject();
  const nameOf = new Map<string, string>();
  for (const { key, line } of lines) {
    const normalized = keys.getOrMake(key, headerKey);
    const written = line.slice(0, Math.max(0, line.indexOf(":"))).trim();
    if (normalized === "" && written === "") continue;
    const value = headerValue(line);
    if (normalized !== "") addHeader(headers, normalized, value);
    if (written === "") continue;
    const name = nameOf.get(key) ?? written;
    nameOf.set(key, name);
    addHeader(original, name, value);
  }
  return { headers, originalHeaders: original };
}

/** The headers under the names the message writes them (see payloadHeaders). */
export const originalHeaders = (lines: readonly HeaderLine[]): PayloadHeaders => payloadHeaders(lines).originalHeaders;

/** The headers under the payload's names (see payloadHeaders). */
export const normalizeHeaders = (lines: readonly HeaderLine[]): PayloadHeaders => payloadHeaders(lines).headers;

/**
 * An object without a prototype: header names are the sender's, and `__proto__`,
 * `toString` or `constructor` must be keys like any other, not Object.prototype's members
 * (issue 31: `__proto__` was dropped, `toString` read as the built-in function). JSON,
 * Object.entries and a structured clone (the parse worker's answer) keep such keys as
 * own properties.
 */
export const headerObject = (): PayloadHeaders => Object.create(null) as PayloadHeaders;

/** A header seen once is a string, one seen again an array in message order. */
function addHeader(out: PayloadHeaders, name: string, value: string): void {
  const prior = out[name];
  if (prior === undefined) out[name] = value;
  else if (Array.isArray(prior)) prior.push(value);
  else out[name] = [prior, value];
}
