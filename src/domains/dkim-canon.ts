// RFC 6376's "relaxed" canonicalizations (section 3.4.2 and 3.4.4) and the choice of the
// header fields a signature covers (section 5.4.2), as pure functions of the message text.
// The text is the message's bytes decoded as latin1, one character per byte, so 8-bit
// bytes pass through unchanged and the hash is taken of `Buffer.from(text, "latin1")`.
// A line ends at CRLF or at a bare LF: the SMTP client sends a bare LF as CRLF.

/** One header field as the message has it: the name as written, and every line of it. */
export interface HeaderField {
  /** The name in lower case, for matching. */
  key: string;
  /** Everything from the name to the end of the last line, without the final line break. */
  text: string;
}

/** Spaces and tabs: the WSP of RFC 5234, and nothing else (JavaScript's \s and trim() also take 0xA0). */
const WSP_RUN = /[ \t]+/g;
const LINE_BREAK = /\r?\n/;

/** The header fields in order, and the body after the blank line (empty when there is none). */
export function splitMessage(text: string): { fields: HeaderField[]; body: string } {
  const end = /\r?\n\r?\n/.exec(text);
  const head = end ? text.slice(0, end.index) : text;
  const body = end ? text.slice(end.index + end[0].length) : "";
  const fields: HeaderField[] = [];
  for (const line of head.split(LINE_BREAK)) {
    const last = fields[fields.length - 1];
    if ((line.startsWith(" ") || line.startsWith("\t")) && last) last.text += `\r\n${line}`;
    else if (line.length > 0) {
      const colon = line.indexOf(":");
      // A line with no colon is no field (a broken message); it is not signed.
      if (colon > 0) fields.push({ key: line.slice(0, colon).replace(WSP_RUN, "").toLowerCase(), text: line });
    }
  }
  return { fields, body };
}

/** A field in the relaxed form, its CRLF included: "name:value" unfolded, each run of WSP one space, none at either end of the value. */
export function relaxedHeader(field: string): string {
  const colon = field.indexOf(":");
  const name = field.slice(0, colon).replace(WSP_RUN, "").toLowerCase();
  const value = field
    .slice(colon + 1)
    .replace(/\r?\n/g, "")
    .replace(WSP_RUN, " ");
  return `${name}:${trimWsp(value)}\r\n`;
}

/** The body in the relaxed form: each run of WSP one space, none at a line's end, no empty lines at the end, CRLF after the last line. */
export function relaxedBody(body: string): string {
  const lines = body.split(LINE_BREAK);
  let last = lines.length - 1;
  const canonical = lines.map((line) => line.replace(WSP_RUN, " ").replace(/ $/, ""));
  while (last >= 0 && canonical[last] === "") last--;
  // An empty body (or only empty lines) canonicalizes to nothing (RFC 6376 erratum 1384).
  return last < 0 ? "" : `${canonical.slice(0, last + 1).join("\r\n")}\r\n`;
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
  return { covered, h: [...covered.map((f) => f.text.slice(0, f.text.indexOf(":")).replace(WSP_RUN, "")), ...oversigned] };
}

function trimWsp(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && (s[start] === " " || s[start] === "\t")) start++;
  while (end > start && (s[end - 1] === " " || s[end - 1] === "\t")) end--;
  return s.slice(start, end);
}
