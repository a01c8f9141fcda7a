// The DKIM signatures of one message (mailauth): RSA always, Ed25519 once its record is
// published. A plain function of its request, so it runs the same on the main thread and
// in a signing worker (sign-pool.ts).
import { createPrivateKey, type KeyObject } from "node:crypto";
import { dkimSign } from "mailauth";
import { BoundedCache } from "../lib/bounded-cache.ts";
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
/** Listed once more than they occur, so none can be added after signing (see patches/mailauth). */
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
 * 2048-bit RSA PEM costs about 70 µs, a tenth of the signature, and mailauth would parse it
 * again for every message. Two per sending domain whose keys the main thread keeps
 * decrypted (signing-keys.ts); the least recently used go first. A rotated key has another
 * PEM, so it is parsed afresh.
 */
export const MAX_PARSED_SIGNING_KEYS = 2 * MAX_CACHED_SIGNING_KEYS;
const parsedKeys = new BoundedCache<string, KeyObject>(MAX_PARSED_SIGNING_KEYS);

/** The private key of `pem`, parsed once while it stays in the bounded cache. */
export const privateKeyOf = (pem: string): KeyObject => parsedKeys.getOrMake(pem, (p) => createPrivateKey(p));

/** The key, or the error mailauth's own parsing gave before the cache: a key that cannot be parsed fails the signing. */
function parsed(selector: string, pem: string): KeyObject {
  try {
    return privateKeyOf(pem);
  } catch (err) {
    throw new Error(`DKIM signing failed: the private key of selector ${selector} cannot be read (${(err as Error).message})`);
  }
}

/** The DKIM-Signature header lines to put in front of the message, each ending in CRLF. */
export async function dkimSignatures(req: SignRequest): Promise<string> {
  const rsaKey = parsed(req.rsa.selector, req.rsa.keyPem);
  const signatureData = [{ signingDomain: req.domain, selector: req.rsa.selector, privateKey: rsaKey, algorithm: "rsa-sha256" }];
  if (req.ed25519)
    signatureData.push({
      signingDomain: req.domain,
      selector: req.ed25519.selector,
      privateKey: parsed(req.ed25519.selector, req.ed25519.keyPem),
      algorithm: "ed25519-sha256",
    });
  const raw = Buffer.from(req.raw.buffer, req.raw.byteOffset, req.raw.byteLength);
  const signed = await dkimSign(raw, {
    signingDomain: req.domain,
    selector: req.rsa.selector,
    privateKey: rsaKey as never,
    canonicalization: "relaxed/relaxed",
    headerList: SIGNED_HEADERS,
    signTime: new Date(req.signTimeMs),
    signatureData: signatureData.map((s) => ({
      ...s,
      canonicalization: "relaxed/relaxed",
      headerList: SIGNED_HEADERS,
      oversign: OVERSIGNED_HEADERS,
    })) as never,
  });
  if (signed.errors.length > 0) throw new Error(`DKIM signing failed: ${JSON.stringify(signed.errors)}`);
  return signed.signatures;
}
