// Keys the appliance makes for itself (URL signing, encryption at rest), kept under
// data_dir/keys, created on first use with 0600 permissions, never logged; and the one
// scheme secrets are encrypted with at rest (DKIM private keys, target passwords, S3
// secret keys, signing secrets): AES-256-GCM under such a key.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const KEY_BYTES = 32;

export function loadOrCreateKey(dataDir: string, name: string): Buffer {
  const dir = join(dataDir, "keys");
  const path = join(dir, `${name}.key`);
  if (existsSync(path)) {
    const key = readFileSync(path);
    if (key.length !== KEY_BYTES) throw new Error(`${path} is not a ${KEY_BYTES}-byte key; remove it to make a new one`);
    // A directory or key made by hand (or restored) under a looser umask: the owner's only.
    ownerOnly(dir, 0o700);
    ownerOnly(path, 0o600);
    return key;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  ownerOnly(dir, 0o700);
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(KEY_BYTES)));
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, key, { mode: 0o600, flush: true });
  renameSync(tmp, path);
  chmodSync(path, 0o600);
  return key;
}

/** Tightens the mode of a file of ours; one owned by another user (EPERM) is left as it is. */
function ownerOnly(path: string, mode: number): void {
  if ((statSync(path).mode & 0o777) === mode) return;
  try {
    chmodSync(path, mode);
  } catch (err) {
    if ((err as { code?: string }).code !== "EPERM") throw err;
  }
}

/** "v1:" + base64(iv | tag | ciphertext), AES-256-GCM with a random 96-bit IV. */
export function encryptSecret(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return "v1:" + Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64");
}

/** The plaintext of encryptSecret's output; throws when the key is wrong or the value was altered. */
export function decryptSecret(sealed: string, key: Buffer): string {
  if (!sealed.startsWith("v1:")) throw new Error("unknown encrypted key format");
  const raw = Buffer.from(sealed.slice(3), "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}

/** Encrypts and decrypts secrets kept in the database. */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/** A SecretBox under the key `key()` gives, asked for at first use (so no key file is made before one is needed). */
export function secretBox(key: () => Buffer): SecretBox {
  let loaded: Buffer | null = null;
  const k = () => (loaded ??= key());
  return { seal: (plaintext) => encryptSecret(plaintext, k()), open: (sealed) => decryptSecret(sealed, k()) };
}
