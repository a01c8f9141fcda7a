// The DKIM signatures of one message (mailauth): RSA always, Ed25519 once its record is
// published. A plain function of its request, so it runs the same on the main thread and
// in a signing worker (sign-pool.ts).
import { dkimSign } from "mailauth";

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

/** The DKIM-Signature header lines to put in front of the message, each ending in CRLF. */
export async function dkimSignatures(req: SignRequest): Promise<string> {
  const signatureData = [{ signingDomain: req.domain, selector: req.rsa.selector, privateKey: req.rsa.keyPem, algorithm: "rsa-sha256" }];
  if (req.ed25519)
    signatureData.push({
      signingDomain: req.domain,
      selector: req.ed25519.selector,
      privateKey: req.ed25519.keyPem,
      algorithm: "ed25519-sha256",
    });
  const raw = Buffer.from(req.raw.buffer, req.raw.byteOffset, req.raw.byteLength);
  const signed = await dkimSign(raw, {
    signingDomain: req.domain,
    selector: req.rsa.selector,
    privateKey: req.rsa.keyPem,
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
