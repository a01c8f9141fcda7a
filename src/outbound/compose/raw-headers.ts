// The header section of a raw message, read and changed in place (mailsplit keeps every
// untouched header byte for byte, which DKIM signatures and users expect).
import { Headers } from "@zone-eu/mailsplit";
import libmime from "libmime";

export interface SplitMessage {
  headers: MessageHeaders;
  body: Buffer;
}

const OBSOLETE_FIRST_FIELD = /^([!-9;-~]+)[ \t]+:/;

export class MessageHeaders {
  private readonly h: InstanceType<typeof Headers>;
  constructor(section: Buffer) {
    // A first line "From : x" (obsolete syntax, space before the colon) is a From field to
    // receivers, but mailsplit takes it for an mbox separator, hides it and drops it on
    // rebuild: without the space it is the header it is everywhere.
    const head = section.subarray(0, 200).toString("binary");
    const obsolete = OBSOLETE_FIRST_FIELD.exec(head);
    this.h = new Headers(
      obsolete ? Buffer.concat([Buffer.from(obsolete[1]! + ":", "binary"), section.subarray(obsolete[0].length)]) : section,
    );
  }
  /** Every value of a header, unfolded and MIME-decoded, top first. */
  all(name: string): string[] {
    return (this.h.getDecoded(name) as { value: string }[]).map((l) => decode(l.value));
  }
  /**
   * Every value of a header as written: unfolded, not MIME-decoded, empty ones kept, top
   * first. For address fields, whose encoded words must stay text.
   */
  rawValues(name: string): string[] {
    return (this.h.get(name) as string[]).map((line) => unfold(line.slice(line.indexOf(":") + 1)));
  }
  first(name: string): string | null {
    return this.all(name)[0] ?? null;
  }
  has(name: string): boolean {
    return this.h.hasHeader(name);
  }
  remove(name: string): void {
    this.h.remove(name);
  }
  /** Replaces every occurrence with one line; non-ASCII values are MIME-encoded. */
  set(name: string, value: string): void {
    this.h.update(name, encodeIfNeeded(value));
  }
  /** Adds a header at the top (where trace and generated headers go). */
  prepend(name: string, value: string): void {
    this.h.add(name, encodeIfNeeded(value), 0);
  }
  build(): Buffer {
    return this.h.build();
  }
}

const unfold = (value: string): string => value.replace(/\r?\n(?=[ \t])/g, "").trim();

function decode(value: string): string {
  try {
    return libmime.decodeWords(value);
  } catch {
    return value;
  }
}

const encodeIfNeeded = (value: string): string => (/[^\x20-\x7e\t]/.test(value) ? libmime.encodeWords(value, "Q", 52) : value);

/** Splits at the blank line that ends the header section; the body keeps its bytes. */
export function splitMessage(raw: Buffer): SplitMessage {
  const crlf = raw.indexOf("\r\n\r\n");
  const lf = raw.indexOf("\n\n");
  let end: number;
  let sep: number;
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) [end, sep] = [crlf, 4];
  else if (lf >= 0) [end, sep] = [lf, 2];
  else [end, sep] = [raw.length, 0];
  // The header section passed on keeps its final line break: mailsplit expects it.
  return { headers: new MessageHeaders(raw.subarray(0, end + sep / 2)), body: raw.subarray(end + sep) };
}

/**
 * Header section and body back together, with the blank line between them. With
 * `writableFrom` (an offset into the body's buffer: the bytes from there up to the body
 * are the caller's, its old header section among them), the section is written in front
 * of the body when it fits, and the message is not copied; `m.headers` is then spent.
 */
export function joinMessage(m: SplitMessage, writableFrom?: number): Buffer {
  // mailsplit ends a rebuilt section with a blank line and an untouched one without.
  const head = Buffer.from(
    m.headers
      .build()
      .toString("binary")
      .replace(/(\r?\n)+$/, "") + "\r\n\r\n",
    "binary",
  );
  const start = m.body.byteOffset - head.length;
  if (writableFrom === undefined || start < writableFrom) return Buffer.concat([head, m.body]);
  const whole = Buffer.from(m.body.buffer, start, head.length + m.body.length);
  head.copy(whole, 0);
  return whole;
}
