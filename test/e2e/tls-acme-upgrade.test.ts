// Upgrading from a version that kept ACME's state as files under data_dir/tls: the first
// start imports the certificate (with its key) and the account key into the store and
// serves that certificate without ordering; the files are left in place, and a later start
// takes the store's certificate, not a file put there since (the import happens once).
import { afterAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/lib/logger.ts";
import { openStore } from "../../src/store/store.ts";
import { sqliteTlsStore } from "../../src/tls/tls-store.repo.ts";
import { acmeWithoutCa, servedSerial } from "../helpers/acme-offline.ts";
import { startTestApp } from "../helpers/app.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { tempDir } from "../helpers/tmp.ts";

const NAME = "mail.postroom.test";
const work = tempDir();
const dataDir = join(work.path, "data");
const tlsDir = join(dataDir, "tls");
const ACME = acmeWithoutCa(NAME, "1h");

afterAll(() => work.remove());

/** The one-file form older versions wrote: the key, then the certificate. */
function writeOldPem(name: string): { cert: string; key: string } {
  const { certFile, keyFile } = makeSelfSignedCert(work.path, NAME, name, 90);
  const pair = { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
  writeFileSync(join(tlsDir, "certificate.pem"), `${pair.key.trim()}\n${pair.cert.trim()}\n`);
  return pair;
}

describe("upgrading from ACME files under data_dir/tls", () => {
  test("the first start imports them once, serves the imported certificate without ordering, and leaves the files", async () => {
    mkdirSync(tlsDir, { recursive: true });
    const old = writeOldPem("old");
    const accountKey = readFileSync(join(work.path, "old.key"), "utf8");
    writeFileSync(join(tlsDir, "acme-account.key"), accountKey);
    writeFileSync(
      join(tlsDir, "acme-account.json"),
      JSON.stringify({ directoryUrl: "https://127.0.0.1:9/directory", accountUrl: "https://ca.test/acct/7" }),
    );

    const lines: string[] = [];
    const first = await startTestApp({
      dataDir,
      inbound: true,
      tls: ACME,
      logger: createLogger({ level: "info", sink: (l) => lines.push(l) }),
    });
    const oldSerial = new X509Certificate(old.cert).serialNumber;
    try {
      expect(await servedSerial(first.app.inboundPort!, NAME)).toBe(oldSerial);
      const store = openStore(dataDir);
      try {
        const tls = sqliteTlsStore(store, Date.now);
        expect(await tls.certificate()).toStrictEqual(old);
        expect(await tls.accountKey()).toBe(accountKey);
        expect(await tls.account()).toStrictEqual({ directoryUrl: "https://127.0.0.1:9/directory", accountUrl: "https://ca.test/acct/7" });
      } finally {
        store.close();
      }
      expect(lines.some((l) => l.includes('"tls certificate imported into the store"'))).toBe(true);
      expect(lines.some((l) => l.includes('"acme order"'))).toBe(false);
    } finally {
      await first.stop();
    }
    for (const file of ["certificate.pem", "acme-account.key", "acme-account.json"]) expect(existsSync(join(tlsDir, file))).toBe(true);

    // A file put there since is not imported again: the store's certificate is the one served.
    writeOldPem("newer");
    const lines2: string[] = [];
    const second = await startTestApp({
      dataDir,
      inbound: true,
      tls: ACME,
      logger: createLogger({ level: "info", sink: (l) => lines2.push(l) }),
    });
    try {
      expect(await servedSerial(second.app.inboundPort!, NAME)).toBe(oldSerial);
      expect(lines2.some((l) => l.includes("imported into the store"))).toBe(false);
    } finally {
      await second.stop();
    }
  }, 30_000);
});
