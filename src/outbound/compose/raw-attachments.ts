// The file names a raw message (E11 raw, SMTP submission) gives its parts, judged by the
// blocked-extension rule like E11's attachments (attachment-names.ts). Every name a part
// carries counts: the Content-Disposition filename and the Content-Type name (clients pick
// one or the other), as written and as decoded (quotes, RFC 2231 filename*= with its
// charset and continuations, encoded words), in every Content-Disposition or Content-Type
// line of the message. Those lines are found with Buffer.indexOf rather than by parsing
// the MIME tree: a 20 MB message is scanned in a few milliseconds, without copies, and a
// part nested in a message/rfc822 counts too. Judged conservatively: a body line that
// looks like such a header counts as one (Base64 never does).
import libmime from "libmime";
import { blockedExtensionOf } from "./attachment-names.ts";
export interface BlockedAttachment {
  fileName: string;
  extension: string;
}

/** Raw parameter text of `name` (`name=`, `name*=`, `name*0*=` ...) in a header value, as written. */
function rawParams(value: string, name: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`;\\s*${name}(\\*\\d*\\*?)?\\s*=\\s*("(?:[^"\\\\]|\\\\.)*"?|[^;]*)`, "gi");
  for (const m of value.matchAll(re)) out.push(m[2]!.trim());
  return out;
}

/** Pure: every name a part's header lines give it, written and decoded. */
export function partFileNames(dispositions: readonly string[], contentTypes: readonly string[]): string[] {
  const names = new Set<string>();
  const add = (values: readonly string[], param: string) => {
    for (const value of values) {
      // Decoded first: the name a refusal quotes is the one the sender meant.
      try {
        const parsed = libmime.parseHeaderValue(value).params[param];
        if (typeof parsed === "string" && parsed !== "") names.add(parsed);
      } catch {
        // Unparsable: its raw text is judged below.
      }
      for (const raw of rawParams(value, param)) if (raw !== "") names.add(raw);
    }
  };
  add(dispositions, "filename");
  add(contentTypes, "name");
  return [...names];
}

/** Longest header line read (unfolded); the rest of a longer one is not judged. */
const MAX_HEADER_LINE_BYTES = 16 * 1024;
const NAMED_HEADER = /^content-(disposition|type)[ \t]*:([\s\S]*)$/i;

/** Every Content-Disposition and Content-Type line of `raw` (unfolded), by where "ontent-" stands. */
export function* contentHeaderLines(raw: Buffer): Generator<{ kind: "disposition" | "type"; value: string }> {
  for (let at = raw.indexOf("ontent-"); at >= 0; at = raw.indexOf("ontent-", at + 7)) {
    const start = at - 1;
    if (start < 0 || (raw[start] !== 0x43 && raw[start] !== 0x63)) continue; // C or c
    if (start > 0 && raw[start - 1] !== 0x0a) continue; // at a line's start
    let end = start;
    const limit = Math.min(raw.length, start + MAX_HEADER_LINE_BYTES);
    // The line and its folded continuations (a line break followed by a space or a tab).
    for (;;) {
      const nl = raw.indexOf(0x0a, end);
      if (nl < 0 || nl >= limit) {
        end = limit;
        break;
      }
      end = nl + 1;
      if (raw[end] !== 0x20 && raw[end] !== 0x09) break;
    }
    const line = raw.toString("latin1", start, end).replace(/\r?\n/g, "");
    const m = NAMED_HEADER.exec(line);
    if (m) yield { kind: m[1]!.toLowerCase() === "type" ? "type" : "disposition", value: headerText(m[2]!.trim()) };
  }
}

/** Header bytes as text: UTF-8 where they are valid UTF-8 (SMTPUTF8 names), else one character a byte. */
function headerText(latin1: string): string {
  if (!/[\x80-\xff]/.test(latin1)) return latin1;
  const utf8 = Buffer.from(latin1, "latin1").toString("utf8");
  return utf8.includes("\uFFFD") ? latin1 : utf8;
}

/** The first part of `raw` whose file name ends in a blocked extension, or null. */
export function blockedAttachmentOf(raw: Buffer, blocked: readonly string[]): BlockedAttachment | null {
  if (blocked.length === 0) return null;
  for (const { kind, value } of contentHeaderLines(raw)) {
    const names = kind === "disposition" ? partFileNames([value], []) : partFileNames([], [value]);
    for (const fileName of names) {
      const extension = blockedExtensionOf(fileName, blocked);
      if (extension) return { fileName, extension };
    }
  }
  return null;
}
