// One DKIM-Signature header (RFC 6376 section 5, RFC 8463 for Ed25519), relaxed/relaxed,
// from the canonical forms of dkim-canon.ts. The hashing and the signatures are node:crypto's
// (native); what is left here is string work done once per message, not a message parser.
import { createHash, type KeyObject, sign } from "node:crypto";
import { type HeaderField, relaxedBodyChunks, relaxedHeader } from "./dkim-canon.ts";

export type DkimAlgorithm = "rsa-sha256" | "ed25519-sha256";

export interface SignatureTags {
  algorithm: DkimAlgorithm;
  /** d=, an A-label domain. */
  domain: string;
  /** s= */
  selector: string;
  /** t=, seconds since the epoch. */
  timeS: number;
  /** bh=, base64. */
  bodyHash: string;
  /** h=, the names as listed (an oversigned name included). */
  h: readonly string[];
}

/** What a domain name or selector label may hold in a tag: LDH labels, dot-separated. */
const DNS_NAME = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*$/;
/** A header line is folded before it passes this many characters (RFC 5322 section 2.1.1's 78, less the CRLF). */
const FOLD_AT = 76;

/** bh=: the sha256 of the relaxed body's bytes (latin1: one byte per character), base64. */
export function bodyHashOf(body: string): string {
  const hash = createHash("sha256");
  relaxedBodyChunks(body, (chunk) => hash.update(chunk, "latin1"));
  return hash.digest("base64");
}

/**
 * The header up to and including "b=", folded: a fold may come before any tag and after any
 * colon of h=, which the relaxed form turns into one space, so the folding is not signed.
 */
export function unsignedHeader(tags: SignatureTags): string {
  for (const [tag, value] of [
    ["d", tags.domain],
    ["s", tags.selector],
  ] as const)
    if (!DNS_NAME.test(value)) throw new Error(`DKIM signing failed: ${tag}=${JSON.stringify(value)} is not a DNS name`);
  // Each piece with the white space before it: one space between tags, none between the
  // names of h=, which follow their colon directly; a fold may replace either.
  const pieces: [string, string][] = [
    ...["v=1;", `a=${tags.algorithm};`, "c=relaxed/relaxed;", `d=${tags.domain};`, `s=${tags.selector};`, `t=${tags.timeS};`].map(
      (p): [string, string] => [" ", p],
    ),
    ...tags.h.map((name, i): [string, string] => [
      i === 0 ? " " : "",
      `${i === 0 ? "h=" : ""}${name}${i === tags.h.length - 1 ? ";" : ":"}`,
    ]),
    [" ", `bh=${tags.bodyHash};`],
    [" ", "b="],
  ];
  let text = "DKIM-Signature:";
  let line = text.length;
  for (const [sep, piece] of pieces) {
    if (line + sep.length + piece.length > FOLD_AT) {
      text += `\r\n ${piece}`;
      line = 1 + piece.length;
    } else {
      text += sep + piece;
      line += sep.length + piece.length;
    }
  }
  return text;
}

/** The signature header, CRLF included, with its b= value folded onto lines of its own, which verifiers drop with the value. */
export function signatureHeader(covered: readonly HeaderField[], tags: SignatureTags, key: KeyObject): string {
  const unsigned = unsignedHeader(tags);
  const b = signatureValue(covered, unsigned, tags.algorithm, key);
  return `${unsigned}${foldValue(b, unsigned.length - unsigned.lastIndexOf("\n") - 1)}\r\n`;
}

/**
 * b=, base64: the signature of `covered` in their relaxed form, then the signature header's
 * own relaxed form, b= empty and without its final CRLF (RFC 6376 section 3.7).
 */
export function signatureValue(covered: readonly HeaderField[], unsigned: string, algorithm: DkimAlgorithm, key: KeyObject): string {
  const signedText = covered.map((f) => relaxedHeader(f.text)).join("") + relaxedHeader(unsigned).slice(0, -2);
  const data = Buffer.from(signedText, "latin1");
  return (
    algorithm === "rsa-sha256"
      ? sign("sha256", data, key)
      : // Ed25519 signs the SHA-256 digest, not the data (RFC 8463 section 3).
        sign(null, createHash("sha256").update(data).digest(), key)
  ).toString("base64");
}

/** A base64 value after "b=" on a line `used` characters long: folded at FOLD_AT. */
function foldValue(value: string, used: number): string {
  let out = "";
  let at = 0;
  let room = Math.max(0, FOLD_AT - used);
  while (at < value.length) {
    if (room === 0) {
      out += "\r\n ";
      room = FOLD_AT - 1;
    }
    out += value.slice(at, at + room);
    at += room;
    room = 0;
  }
  return out;
}
