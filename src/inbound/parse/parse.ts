// Parsing a received message under the named limits (header size, MIME depth and part
// count), so hostile input is refused with a reply instead of costing memory or stack.
import { Readable } from "node:stream";
import { Splitter } from "@zone-eu/mailsplit";
import { simpleParser, type ParsedMail } from "mailparser";
import { garbageMade } from "../../lib/gc-pacer.ts";
import { SMTP_REPLIES } from "../../smtp/replies.ts";
import type { SmtpReply } from "../../smtp/reply.ts";

export interface ParseLimits {
  maxHeaderBytes: number;
  maxMimeDepth: number;
  maxMimeParts: number;
}

export class MessageRefused extends Error {
  override name = "MessageRefused";
  constructor(readonly reply: SmtpReply) {
    super(reply.text);
  }
}

/** Bytes before the blank line that ends the header section (the whole message if none). */
export function headerSectionBytes(raw: Buffer): number {
  const crlf = raw.indexOf("\r\n\r\n");
  // A "\n\n" before the CRLF one starts within its first byte: only the header section is
  // searched, not (for a CRLF message, which has none) the whole message.
  const lf = (crlf >= 0 ? raw.subarray(0, crlf + 1) : raw).indexOf("\n\n");
  return lf >= 0 ? lf : crlf >= 0 ? crlf : raw.length;
}

/** Deepest nesting of MIME nodes (1 = a single-part message), found by mailsplit without decoding. */
export async function mimeDepth(raw: Buffer): Promise<number> {
  const splitter = new Splitter({ maxChildNodes: Number.MAX_SAFE_INTEGER } as never) as unknown as NodeJS.ReadWriteStream;
  let max = 0;
  splitter.on("data", (data: { type: string; parentNode?: unknown }) => {
    if (data.type !== "node") return;
    let depth = 1;
    for (let p = (data as { parentNode?: { parentNode?: unknown } }).parentNode; p; p = (p as { parentNode?: unknown }).parentNode as never)
      depth++;
    if (depth > max) max = depth;
  });
  await new Promise<void>((resolve, reject) => {
    splitter.once("end", resolve);
    splitter.once("error", reject);
    inSlices(raw).pipe(splitter);
  });
  return max;
}

/** A large message is handed to the parsers in slices (views, not copies). */
const SLICE_BYTES = 64 * 1024;
const WHOLE_UP_TO_BYTES = 256 * 1024;

/**
 * The message as a stream of slices. Given one large chunk, mailsplit and mailparser make
 * strings and buffers of its whole size (a 25 MB message cost 140 MB while parsed, 90 MB in
 * slices: measured for issue 15).
 */
function inSlices(raw: Buffer): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < raw.length; at += SLICE_BYTES) {
        // The parser makes several times each slice in strings and buffers it drops.
        garbageMade(3 * SLICE_BYTES);
        yield raw.subarray(at, at + SLICE_BYTES);
      }
    })(),
    { objectMode: false },
  );
}

// Each level of nesting needs a boundary parameter or an embedded message, so a message
// with few of either cannot be deep; only the rest pay for the exact count. Counted in
// windows of the message, so a large one is never turned into one string: every word
// "boundary" counts (a parameter needs one), which can only count more than there are.
const NESTING_MARKERS = /boundary|message\/(?:rfc822|global)/gi;
const MARKER_WINDOW_CHARS = 1024 * 1024;
const LONGEST_MARKER_CHARS = "message/global".length;

/** Occurrences of NESTING_MARKERS in `raw`, window by window (a marker across two windows counts once). */
export function nestingMarkers(raw: Buffer): number {
  let count = 0;
  for (let start = 0; start < raw.length; start += MARKER_WINDOW_CHARS) {
    const text = raw.toString("latin1", start, Math.min(raw.length, start + MARKER_WINDOW_CHARS + LONGEST_MARKER_CHARS - 1));
    NESTING_MARKERS.lastIndex = 0;
    for (let m = NESTING_MARKERS.exec(text); m; m = NESTING_MARKERS.exec(text)) if (m.index < MARKER_WINDOW_CHARS) count++;
  }
  return count;
}

// The top-level headers mailparser decodes for us (the payload's headers come from
// headerLines, decoded by headers.ts): From for DMARC, Subject and Message-ID for the
// status, and Content-ID for a message that is a single attachment. Decoding every
// other header too (addresses, dates, the content type mailsplit has parsed already)
// cost a sixth of the parse. Patched option, see patches/mailparser@3.9.31.patch.
export const ROOT_HEADER_KEYS: ReadonlySet<string> = new Set(["from", "subject", "message-id", "content-id"]);

/**
 * Parses `raw`, whose first `traceBytes` are our own trace lines (trace-headers.ts): the
 * header limit is the sender's, so those bytes are not counted against it.
 */
/** mailparser's options for a received message (bench:inbound's bare pipeline takes the same). */
export function parserOptions(limits: ParseLimits, traceBytes = 0): object {
  return {
    // Keep the message as it was: no text made from HTML or HTML from text, cid: links intact.
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
    keepCidLinks: true,
    rootHeaderKeys: ROOT_HEADER_KEYS,
    maxHeadSize: limits.maxHeaderBytes + traceBytes,
    maxChildNodes: limits.maxMimeParts,
  };
}

export async function parseMessage(raw: Buffer, limits: ParseLimits, traceBytes = 0): Promise<ParsedMail> {
  const headerBytes = headerSectionBytes(raw) - traceBytes;
  if (headerBytes > limits.maxHeaderBytes) {
    throw new MessageRefused(SMTP_REPLIES.headerTooLarge(limits.maxHeaderBytes));
  }
  if (nestingMarkers(raw) + 1 > limits.maxMimeDepth && (await mimeDepth(raw)) > limits.maxMimeDepth) {
    throw new MessageRefused(SMTP_REPLIES.mimeTooDeep(limits.maxMimeDepth));
  }
  try {
    return await (simpleParser as (input: Buffer | Readable, options: object) => Promise<ParsedMail>)(
      raw.length > WHOLE_UP_TO_BYTES ? inSlices(raw) : raw,
      parserOptions(limits, traceBytes),
    );
  } catch (err) {
    // mailsplit tags its limit errors EMAXLEN; anything else is a parser failure.
    const { code, message = "" } = err as { code?: string; message?: string };
    if (code === "EMAXLEN" && /child nodes/i.test(message)) throw new MessageRefused(SMTP_REPLIES.tooManyMimeParts(limits.maxMimeParts));
    if (code === "EMAXLEN") throw new MessageRefused(SMTP_REPLIES.partHeaderTooLarge(limits.maxHeaderBytes));
    throw err;
  }
}
