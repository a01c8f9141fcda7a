// ACME mode with several nodes: the node holding the check-certificate lease orders and
// saves the renewal in the store; a node that does not hold it still serves the renewed
// certificate, taken from the store by its own reload-certificate job (every
// tls.check_interval). Here the lease is held by another node the whole time, so this node
// never runs the check; the other node's renewal is written straight into the store.
import { afterAll, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/lib/logger.ts";
import { createJobLeaseRepo } from "../../src/jobs/job-lease.repo.ts";
import { openStore } from "../../src/store/store.ts";
import { sqliteTlsStore } from "../../src/tls/tls-store.repo.ts";
import { acmeWithoutCa, servedSerial } from "../helpers/acme-offline.ts";
import { startTestApp } from "../helpers/app.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { eventually } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

const NAME = "mail.postroom.test";
const work = tempDir();
const dataDir = join(work.path, "data");
const ACME = acmeWithoutCa(NAME, "200ms");

afterAll(() => work.remove());

// 90 days: not due for renewal.
function pair(name: string): { cert: string; key: string } {
  const { certFile, keyFile } = makeSelfSignedCert(work.path, NAME, name, 90);
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
}

test("a node without the check-certificate lease serves the certificate the holder renewed, after its own reload", async () => {
  const first = pair("first");
  const renewed = pair("renewed");
  // The other node: holds the lease for an hour, and has stored the certificate in use.
  const otherNode = openStore(dataDir);
  try {
    expect(await createJobLeaseRepo(otherNode.main).tryHold("check-certificate", "node-elsewhere", Date.now(), 3_600_000)).toBe(true);
    await sqliteTlsStore(otherNode, Date.now).saveCertificate(first);

    const lines: string[] = [];
    const started = await startTestApp({
      dataDir,
      inbound: true,
      tls: ACME,
      logger: createLogger({ level: "info", sink: (l) => lines.push(l) }),
    });
    try {
      const port = started.app.inboundPort!;
      expect(await servedSerial(port, NAME)).toBe(new X509Certificate(first.cert).serialNumber);
      // The holder's renewal, as its order saves it.
      await sqliteTlsStore(otherNode, Date.now).saveCertificate(renewed);
      const renewedSerial = new X509Certificate(renewed.cert).serialNumber;
      await eventually(async () => (await servedSerial(port, NAME)) === renewedSerial, 10_000, "the renewed certificate served");
      expect(lines.some((l) => l.includes('"acme order"'))).toBe(false);
    } finally {
      await started.stop();
    }
  } finally {
    otherNode.close();
  }
}, 30_000);
