// Decrypted DKIM private keys, kept per sending domain so a message does not pay for an
// AES-GCM decryption of both keys (and the key derivation setup) each time it is signed.
// An entry is used only while the row still holds the same encrypted keys, so a key that
// changes is decrypted afresh; a domain written to (deleted, re-checked) is forgotten.
import { BoundedCache } from "../lib/bounded-cache.ts";
import { decryptSecret } from "./keys.ts";
import type { SendingDomain } from "./sending-domain.ts";

/** Sending domains whose keys stay decrypted in memory at once; the least recently used go first. */
export const MAX_CACHED_SIGNING_KEYS = 1000;

export interface SigningKeys {
  /** PKCS#8 PEM of the RSA key. */
  rsaPem: string;
  /** PKCS#8 PEM of the Ed25519 key, decrypted on first use. */
  ed25519Pem(): string;
}

interface Entry {
  rsaEnc: string;
  ed25519Enc: string;
  rsaPem: string;
  ed25519Pem: string | null;
}

export class SigningKeyCache {
  private readonly entries: BoundedCache<string, Entry>;

  constructor(
    private readonly encryptionKey: Buffer,
    maxEntries = MAX_CACHED_SIGNING_KEYS,
  ) {
    this.entries = new BoundedCache(maxEntries);
  }

  keysFor(d: SendingDomain): SigningKeys {
    let entry = this.entries.get(d.id);
    if (!entry || entry.rsaEnc !== d.dkimPrivateKeyEnc || entry.ed25519Enc !== d.ed25519PrivateKeyEnc) {
      entry = {
        rsaEnc: d.dkimPrivateKeyEnc,
        ed25519Enc: d.ed25519PrivateKeyEnc,
        rsaPem: decryptSecret(d.dkimPrivateKeyEnc, this.encryptionKey),
        ed25519Pem: null,
      };
      this.entries.set(d.id, entry);
    }
    const e = entry;
    return { rsaPem: e.rsaPem, ed25519Pem: () => (e.ed25519Pem ??= decryptSecret(e.ed25519Enc, this.encryptionKey)) };
  }

  forget(domainId: string): void {
    this.entries.delete(domainId);
  }

  forgetAll(): void {
    this.entries.clear();
  }

  /** Domain IDs with keys in memory (tests). */
  cachedIds(): string[] {
    return this.entries.keys();
  }
}
