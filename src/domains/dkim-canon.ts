// RFC 6376's "relaxed" canonicalizations (section 3.4.2 and 3.4.4) and the choice of the
// header fields a signature covers (section 5.4.2), as pure functions of the message text.
// The text is the message's bytes decoded as latin1, one character per byte, so 8-bit
// bytes pass through unchanged and the hash is taken of `Buffer.from(text, "latin1")`.
// A line ends at CRLF or at a bare LF: the SMTP client sends a bare LF as CRLF.
import { headerSection } from "../lib/header-section.ts";

/** One header field as the message has it: the name as written, and every line of it. */
export interface HeaderField {
  /** The name in lower case, for matching. */
  key: string;
  /** Everything from the name to the end of the last line, without the final line break. */
  text: string;
}

/** Spaces and tabs: the WSP of RFC 5234, and nothing else (JavaScript's \s and trim() also take 0xA0). */
const WSP_RUN = /[ \t]+/g;

/** The header fields in order, and the body after the blank line (empty when there is none). */
export function splitMessage(text: string): { fields: HeaderField[]; body: string } {
  const { fields, body } = headerSection(text);
  return { fields: fields.map((field) => ({ key: nameOf(field).toLowerCase(), text: field })), body };
}

/** A field's name as written, without the white space the obsolete syntax allows before its colon. */
const nameOf = (field: string): string => field.slice(0, field.indexOf(":")).replace(WSP_RUN, "");

/** A field in the relaxed form, its CRLF included: "name:value" unfolded, each run of WSP one space, none at either end of the value. */
export function relaxedHeader(field: string): string {
  const value = field
    .slice(field.indexOf(":") + 1)
    .replace(/\r?\n/g, "")
    .replace(WSP_RUN, " ");
  return `${nameOf(field).toLowerCase()}:${trimWsp(value)}\r\n`;
}

/** The body in the relaxed form: each run of WSP one space, none at a line's end, no empty lines at the end, CRLF after the last line. */
export function relaxedBody(body: string): string {
  let out = "";
  relaxedBodyChunks(body, (chunk) => {
    out += chunk;
  });
  return out;
}

/** What the canonical body is emitted in at most, about: the hash takes it a piece at a time. */
const CHUNK_CHARS = 64 * 1024;

/**
 * The relaxed body, given to `emit` in pieces of about CHUNK_CHARS, so that a large message
 * is hashed without a second copy of it, nor an array of its lines. Empty lines are held
 * back until a line with text follows: those at the end are dropped. An empty body (or
 * only empty lines) emits nothing (RFC 6376 erratum 1384).
 */
export function relaxedBodyChunks(body: string, emit: (chunk: string) => void): void {
  let pending = "";
  let emptyLines = 0;
  for (let at = 0; at < body.length; ) {
    const lf = body.indexOf("\n", at);
    const end = lf < 0 ? body.length : lf;
    const line = body
      .slice(at, end > at && body.charCodeAt(end - 1) === 13 && lf >= 0 ? end - 1 : end)
      .replace(WSP_RUN, " ")
      .replace(/ $/, "");
    at = lf < 0 ? body.length : lf + 1;
    if (line === "") {
      emptyLines++;
      continue;
    }
    pending += `${"\r\n".repeat(emptyLines)}${line}\r\n`;
    emptyLines = 0;
    if (pending.length >= CHUNK_CHARS) {
      emit(pending);
      pending = "";
    }
  }
  if (pending) emit(pending);
}

/**
 * The fields a signature covers and its h= names. Every field whose name is in `names`,
 * from the bottom of the header up, as a verifier takes them; then each of `oversigned`
 * once more, which stands for a field that is not there: a field of that name added
 * after signing then breaks the signature (RFC 6376 section 8.15).
 */
export function coveredFields(
  fields: readonly HeaderField[],
  names: readonly string[],
  oversigned: readonly string[],
): { covered: HeaderField[]; h: string[] } {
  const wanted = new Set(names.map((n) => n.toLowerCase()));
  const covered = fields.filter((f) => wanted.has(f.key)).reverse();
  return { covered, h: [...covered.map((f) => nameOf(f.text)), ...oversigned] };
}

function trimWsp(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && (s[start] === " " || s[start] === "\t")) start++;
  while (end > start && (s[end - 1] === " " || s[end - 1] === "\t")) end--;
  return s.slice(start, end);
}
