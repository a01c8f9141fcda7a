// DKIM keys of sending domains: a 2048-bit RSA key (the record clients publish) and an
// Ed25519 key (RFC 8463, beyond), each under its own random selector. Private keys are
// stored encrypted (AES-256-GCM) under a key kept in data_dir, and never leave the server.
import { generateKeyPairSync, randomBytes } from "node:crypto";

export interface DkimKeyPair {
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  /** Base64 of the SubjectPublicKeyInfo (RSA) or of the raw 32-byte key (Ed25519), as p= wants it. */
  publicKey: string;
}

const SELECTOR_FIRST = "abcdefghijklmnopqrstuvwxyz";
const SELECTOR_REST = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh random 12-character selector: a letter, then letters and digits. */
export function newSelector(): string {
  const bytes = randomBytes(12);
  let s = SELECTOR_FIRST[bytes[0]! % SELECTOR_FIRST.length]!;
  for (let i = 1; i < 12; i++) s += SELECTOR_REST[bytes[i]! % SELECTOR_REST.length]!;
  return s;
}

export function newRsaKey(): DkimKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKey: publicKey.export({ type: "spki", format: "der" }).toString("base64"),
  };
}

export function newEd25519Key(): DkimKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  // RFC 8463: p= is the bare 32-byte key, the last 32 bytes of the SPKI encoding.
  const spki = publicKey.export({ type: "spki", format: "der" });
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKey: spki.subarray(spki.length - 32).toString("base64"),
  };
}

export const rsaRecord = (publicKey: string): string => `v=DKIM1; k=rsa; p=${publicKey}`;
export const ed25519Record = (publicKey: string): string => `v=DKIM1; k=ed25519; p=${publicKey}`;

// The scheme is shared with the other secrets kept at rest (src/lib/secret-key.ts).
export { decryptSecret, encryptSecret } from "../lib/secret-key.ts";
