// The DKIM signatures of one message: RSA always, Ed25519 once its record is published.
// Our own signer (dkim-canon.ts, dkim-sign.ts), not mailauth's, which parsed each message
// with its stream parser: it cost half again the hash and the two signatures, ours a tenth
// (issue 38); mailauth still verifies inbound mail. A plain function of its request, so it
// runs the same on the main thread and in a signing worker (sign-pool.ts).
import { createPrivateKey, type KeyObject } from "node:crypto";
import { BoundedCache } from "../lib/bounded-cache.ts";
import { coveredFields, splitMessage } from "./dkim-canon.ts";
import { bodyHashOf, signatureHeader } from "./dkim-sign.ts";
import { MAX_CACHED_SIGNING_KEYS } from "./signing-keys.ts";

/** Headers every signature covers when present. */
export const SIGNED_HEADERS = [
  "from",
  "to",
  "cc",
  "subject",
  "date",
  "message-id",
  "reply-to",
  "mime-version",
  "content-type",
  "content-transfer-encoding",
];
/** Listed once more than they occur, so none can be added after signing (RFC 6376 section 8.15). */
export const OVERSIGNED_HEADERS = ["From"];

export interface SignRequest {
  raw: Uint8Array;
  domain: string;
  rsa: { selector: string; keyPem: string };
  ed25519: { selector: string; keyPem: string } | null;
  /** t= of the signatures. */
  signTimeMs: number;
}

/**
 * Parsed private keys a signer (each worker, and the main thread) keeps, by PEM: parsing a
 * 2048-bit RSA PEM costs about 70 µs, a tenth of the signature, and would otherwise be
 * done again for every message. Two per sending domain whose keys the main thread keeps
 * decrypted (signing-keys.ts); the least recently used go first. A rotated key has another
 * PEM, so it is parsed afresh.
 */
export const MAX_PARSED_SIGNING_KEYS = 2 * MAX_CACHED_SIGNING_KEYS;
const parsedKeys = new BoundedCache<string, KeyObject>(MAX_PARSED_SIGNING_KEYS);

/** The private key of `pem`, parsed once while it stays in the bounded cache. */
export const privateKeyOf = (pem: string): KeyObject => parsedKeys.getOrMake(pem, (p) => createPrivateKey(p));

/** The parsed key: a key that cannot be parsed fails the signing, naming its selector. */
function parsed(selector: string, pem: string): KeyObject {
  try {
    return privateKeyOf(pem);
  } catch (err) {
    throw new Error(`DKIM signing failed: the private key of selector ${selector} cannot be read (${(err as Error).message})`);
  }
}

/** The DKIM-Signature header lines to put in front of the message, each ending in CRLF: RSA first, then Ed25519. */
export async function dkimSignatures(req: SignRequest): Promise<string> {
  const text = Buffer.from(req.raw.buffer, req.raw.byteOffset, req.raw.byteLength).toString("latin1");
  const { fields, body } = splitMessage(text);
  const { covered, h } = coveredFields(fields, SIGNED_HEADERS, OVERSIGNED_HEADERS);
  // RFC 6376 section 5.4: From must be signed; a signature without it fails every verifier.
  if (!covered.some((f) => f.key === "from")) throw new Error("DKIM signing failed: the message has no From header");
  const common = { domain: req.domain, timeS: Math.floor(req.signTimeMs / 1000), bodyHash: bodyHashOf(body), h };
  let out = signatureHeader(
    covered,
    { ...common, algorithm: "rsa-sha256", selector: req.rsa.selector },
    parsed(req.rsa.selector, req.rsa.keyPem),
  );
  if (req.ed25519)
    out += signatureHeader(
      covered,
      { ...common, algorithm: "ed25519-sha256", selector: req.ed25519.selector },
      parsed(req.ed25519.selector, req.ed25519.keyPem),
    );
  return out;
}
