// API tokens and SMTP keys: minted at random, stored only as SHA-256, compared in
// constant time. A SHA-256 of a 256-bit random secret needs no salt or slow hash:
// there is no dictionary to try.
import { createHash, timingSafeEqual } from "node:crypto";

export const SECRET_HASH_PREFIX = "sha256:";

/** A new random secret: "pr_" + 256 bits in Base64url (safe in URLs, headers and SMTP AUTH). */
export function mintSecret(): string {
  return "pr_" + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** The form stored in the config: "sha256:<64 hex>". */
export function hashSecret(secret: string): string {
  return SECRET_HASH_PREFIX + createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Whether `secret` hashes to one of `hashes`; every candidate is compared, none skipped. */
export function secretMatchesAny(secret: string, hashes: readonly string[]): boolean {
  return matchingHash(secret, hashes) !== null;
}

/** The stored hash the secret matches, or null; every hash is compared, in constant time. */
export function matchingHash(secret: string, hashes: readonly string[]): string | null {
  const presented = Buffer.from(hashSecret(secret));
  let found: string | null = null;
  for (const h of hashes) {
    const stored = Buffer.from(h);
    // Every stored hash has the same length as the presented one (schema-checked), so
    // timingSafeEqual always runs; the length test only guards against a malformed entry.
    if (stored.length === presented.length && timingSafeEqual(stored, presented)) found = h;
  }
  return found;
}
