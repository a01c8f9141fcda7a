// Versions before the store kept ACME's state as files under data_dir/tls: the certificate
// with its key in one PEM (certificate.pem), the account key (acme-account.key) and the
// account's URL (acme-account.json). At start each is imported into the store when the
// store has none yet, so an upgrade neither orders a new certificate nor registers a new
// account; the files are left in place (a downgrade still finds them) and never read again
// once the store holds a value.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../lib/logger.ts";
import type { TlsMaterial } from "./certificate.ts";
import { tlsDir } from "./sources.ts";
import type { TlsStore } from "./tls-store.port.ts";

/** Splits the one-file form (key, then chain) into its key and certificate; null when it holds no key. */
export function splitPem(pem: string): TlsMaterial | null {
  const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----\n?/.exec(pem)?.[0];
  return key ? { key, cert: pem.replace(key, "").trim() + "\n" } : null;
}

export async function importLegacyTlsFiles(dataDir: string, store: TlsStore, logger: Logger): Promise<void> {
  const dir = tlsDir(dataDir);
  const read = (name: string): string | null => {
    try {
      return readFileSync(join(dir, name), "utf8");
    } catch {
      return null;
    }
  };
  const pem = (await store.certificate()) ? null : read("certificate.pem");
  const material = pem === null ? null : splitPem(pem);
  if (material) {
    await store.saveCertificate(material);
    logger.info("tls certificate imported into the store", { from: join(dir, "certificate.pem") });
  }
  const accountKey = (await store.accountKey()) ? null : read("acme-account.key");
  if (accountKey) {
    await store.keepAccountKey(accountKey);
    logger.info("acme account key imported into the store", { from: join(dir, "acme-account.key") });
  }
  const account = (await store.account()) ? null : read("acme-account.json");
  if (account) {
    try {
      const a = JSON.parse(account) as { directoryUrl?: unknown; accountUrl?: unknown };
      if (typeof a.directoryUrl === "string" && typeof a.accountUrl === "string")
        await store.saveAccount({ directoryUrl: a.directoryUrl, accountUrl: a.accountUrl });
    } catch {
      // An unreadable URL file only costs a registration, which finds the same account by its key.
    }
  }
}
