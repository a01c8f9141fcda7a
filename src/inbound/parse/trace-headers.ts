// The trace lines a final-delivery server adds (RFC 5321 section 4.4): our Received line
// and a Return-Path with the envelope sender, put in front of the message as the sender
// sent it. Pure functions; the message bytes are spliced, never re-serialised.
import { isIPv4, isIPv6 } from "node:net";

export interface ReceivedFacts {
  /** The HELO/EHLO name as the client gave it. */
  helo: string;
  remoteIp: string;
  /** Whether the client greeted with EHLO (ESMTP) rather than HELO. */
  ehlo: boolean;
  tls: { protocol: string; cipher: string } | null;
  authenticated: boolean;
  /** Our hostname (the `by` clause). */
  hostname: string;
  /** Identifies this transaction in our logs. */
  id: string;
  /** Every accepted recipient of the transaction; named in a `for` clause only when there is one. */
  recipients: readonly string[];
  nowMs: number;
}

// A HELO name is a domain or an address literal; anything else could end the `from`
// clause early (a "(" or ";") or the line itself, so it is shown as "?".
const NOT_HELO_CHAR = /[^A-Za-z0-9.\-_:[\]]/g;
// A mailbox may hold almost anything in a quoted local part; only what would break the
// line or the angle brackets (or look like the ";" before the date) is replaced.
const NOT_MAILBOX_CHAR = /[\x00-\x1f\x7f<>;]/g;
const MAX_HELO_CHARS = 255;
/** Longest mailbox named in a `for` clause; the folded line stays well under 998 octets. */
const MAX_FOR_CHARS = 900;

const heloName = (helo: string): string => helo.slice(0, MAX_HELO_CHARS).replace(NOT_HELO_CHAR, "?") || "unknown";

/** The client's address as RFC 5321 writes it: `[192.0.2.1]`, `[IPv6:2001:db8::1]`. */
export function addressLiteral(ip: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped && isIPv4(mapped)) return `[${mapped}]`;
  if (isIPv4(ip)) return `[${ip}]`;
  if (isIPv6(ip)) return `[IPv6:${ip.toLowerCase()}]`;
  return null;
}

/** The `with` keyword of RFC 3848: SMTP after HELO, ESMTP after EHLO, plus S for TLS and A for AUTH. */
export function withProtocol(ehlo: boolean, tls: boolean, authenticated: boolean): string {
  if (!ehlo) return "SMTP";
  return `ESMTP${tls ? "S" : ""}${authenticated ? "A" : ""}`;
}

// Messages of the same second share the date text: formatting it cost as much as all the
// rest of the Received line.
let lastDate = { second: NaN, text: "" };

/** RFC 5322 date-time in UTC: "Tue, 24 Nov 2026 06:39:11 +0000". */
export function rfc5322Date(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastDate.second) lastDate = { second, text: new Date(second * 1000).toUTCString().replace("GMT", "+0000") };
  return lastDate.text;
}

/**
 * Our Received header field, folded as Postfix folds it, ending in CRLF:
 *
 *   Received: from client.example.org ([192.0.2.1])
 *   	(using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384)
 *   	by mx.example.com (Postroom) with ESMTPS id 0123456789abcdef
 *   	for <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000
 *
 * No reverse lookup is made, so the TCP-info is the address literal alone (RFC 5321's
 * `TCP-info = address-literal`). The `for` clause names the recipient only when the
 * transaction had exactly one, as Postfix does: with more it would tell every target of
 * the message who else received it.
 */
export function receivedHeader(f: ReceivedFacts): string {
  const literal = addressLiteral(f.remoteIp);
  let out = `Received: from ${heloName(f.helo)}${literal ? ` (${literal})` : ""}\r\n`;
  if (f.tls) out += `\t(using ${heloName(f.tls.protocol)} with cipher ${heloName(f.tls.cipher)})\r\n`;
  out += `\tby ${heloName(f.hostname)} (Postroom) with ${withProtocol(f.ehlo, f.tls !== null, f.authenticated)} id ${heloName(f.id)}`;
  const only = f.recipients.length === 1 ? f.recipients[0]! : null;
  const date = rfc5322Date(f.nowMs);
  if (only !== null && only.length <= MAX_FOR_CHARS) return `${out}\r\n\tfor <${only.replace(NOT_MAILBOX_CHAR, "?")}>; ${date}\r\n`;
  return `${out};\r\n\t${date}\r\n`;
}

/** `Return-Path: <sender>`, `<>` for the null sender (RFC 5321 section 4.4), ending in CRLF. */
export function returnPathHeader(mailFrom: string): string {
  return `Return-Path: <${mailFrom.replace(NOT_MAILBOX_CHAR, "?")}>\r\n`;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Bytes of the header section, with the line break of its last line (the whole message if
 * it has no body). Line by line, so only the header section is read: searching the whole
 * message for "\n\n", which a CRLF message never has, read all of it.
 */
function headerSectionWithLastBreak(raw: Buffer): number {
  if (raw[0] === LF || (raw[0] === CR && raw[1] === LF)) return 0;
  for (let lf = raw.indexOf(LF); lf >= 0; lf = raw.indexOf(LF, lf + 1)) {
    const next = raw[lf + 1];
    if (next === LF || (next === CR && raw[lf + 2] === LF)) return lf + 1;
  }
  return raw.length;
}

// A Return-Path field of the sender's with its folded continuation lines: a final-delivery
// server removes those and adds its own (RFC 5321 section 4.4).
const RETURN_PATH_FIELD = /^return-path[ \t]*:[^\n]*\n?(?:[ \t][^\n]*\n?)*/gim;
// Lines at the very top that start with white space continue no field of the sender's; in
// front of them, our Received line would take them as its own continuation.
const LEADING_CONTINUATION = /^(?:[ \t][^\n]*\n?)+/;

/**
 * The message as a target receives it: `trace` (our header fields, in order) in front of
 * the sender's message, less the sender's own Return-Path fields and any orphan
 * continuation lines at its top. Most messages have neither; they are copied once, not
 * parsed or re-serialised; with `frontRoom` bytes free in front of it in its buffer (the
 * listener keeps room there), not even copied: the lines are written into that room.
 */
export function withTraceHeaders(raw: Buffer, trace: string, frontRoom = 0): Buffer {
  const front = Buffer.from(trace, "utf8");
  const startsFolded = raw[0] === 0x20 || raw[0] === 0x09;
  const headLength = headerSectionWithLastBreak(raw);
  const head = raw.toString("latin1", 0, headLength);
  RETURN_PATH_FIELD.lastIndex = 0;
  if (!startsFolded && !RETURN_PATH_FIELD.test(head)) {
    // `frontRoom` bytes in front of the message are the caller's to write: no copy of it.
    if (front.length > frontRoom) return Buffer.concat([front, raw]);
    const whole = Buffer.from(raw.buffer, raw.byteOffset - front.length, front.length + raw.length);
    front.copy(whole, 0);
    return whole;
  }
  const kept = head.replace(LEADING_CONTINUATION, "").replace(RETURN_PATH_FIELD, "");
  return Buffer.concat([front, Buffer.from(kept, "latin1"), raw.subarray(headLength)]);
}
