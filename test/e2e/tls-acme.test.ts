// tls.mode = "acme" against Debian's pebble on loopback: Postroom answers the HTTP-01
// challenge itself, obtains a certificate, serves it on inbound STARTTLS, submission
// (STARTTLS and implicit TLS) and the HTTPS API; a forced renewal reaches new
// connections while an open one keeps working.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/lib/logger.ts";
import { openStore } from "../../src/store/store.ts";
import { loadConfigured } from "../../src/tls/sources.ts";
import { sqliteTlsStore } from "../../src/tls/tls-store.repo.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { pebbleAvailable, startPebble, type Pebble } from "../helpers/pebble.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { runSwaks, swaksAvailable } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const NAME = "mail.postroom.test";
const hasTools = pebbleAvailable() && swaksAvailable();
const work = tempDir();
let dns: TestDnsServer;
let pebble: Pebble;
let rootFile: string;
let t: TestApp;
let target: TestTarget;
const logLines: string[] = [];

function acmeToml(opts: { domains: string[]; backoff?: string }): string {
  return `mode = "acme"
check_interval = "1h"
[tls.acme]
directory_url = "${pebble.directoryUrl}"
email = "ops@postroom.test"
domains = ${JSON.stringify(opts.domains)}
challenge_listen = "127.0.0.1:${pebble.challengePort}"
ca_file = "${pebble.caFile}"
failure_backoff = "${opts.backoff ?? "1h"}"`;
}

async function waitFor<T>(what: string, probe: () => T | null | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}\npebble log:\n${await pebble.log()}\npostroom log:\n${logLines.join("\n")}`);
    await Bun.sleep(50);
  }
}

/** `openssl s_client -starttls smtp` as an operator would run it; returns its output and the leaf. */
async function sClient(port: number, extra: string[] = []): Promise<{ output: string; leaf: X509Certificate }> {
  // Not spawnSync: the server under test runs in this process and must keep answering.
  const proc = Bun.spawn(["openssl", "s_client", "-starttls", "smtp", "-connect", `127.0.0.1:${port}`, "-servername", NAME, ...extra], {
    stdin: Buffer.from("QUIT\r\n"),
    stdout: "pipe",
    stderr: "pipe",
  });
  const output = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text());
  await proc.exited;
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(output)?.[0];
  if (!pem) throw new Error(`openssl s_client saw no certificate:\n${output}`);
  return { output, leaf: new X509Certificate(pem) };
}

beforeAll(async () => {
  if (!hasTools) return;
  dns = await TestDnsServer.start();
  dns.set(NAME, [{ type: "A", address: "127.0.0.1" }]);
  pebble = await startPebble(dns.address);
  rootFile = join(work.path, "pebble-root.pem");
  target = TestTarget.start();
  t = await startTestApp({
    dnsServer: dns.address,
    inbound: true,
    submission: true,
    allowInsecureAuth: false,
    smtp: `submission_tls_listen = "127.0.0.1:0"`,
    http: "tls = true",
    tls: acmeToml({ domains: [NAME] }),
    logger: createLogger({ level: "info", sink: (line) => logLines.push(line) }),
  });
  await waitFor("the first certificate", () => t.app.tls.current());
  await Bun.write(rootFile, await pebble.issuingRoot());
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await pebble?.stop();
  await dns?.stop();
  await target?.stop();
  work.remove();
});

describe.if(hasTools)("ACME with pebble", () => {
  test("inbound STARTTLS serves the certificate pebble issued for the configured name, and it verifies", async () => {
    const { output, leaf } = await sClient(t.app.inboundPort!, ["-CAfile", rootFile, "-verify_hostname", NAME, "-verify_return_error"]);
    expect(leaf.issuer).toContain("Pebble Intermediate CA");
    expect(leaf.subjectAltName).toBe(`DNS:${NAME}`);
    expect(output).toContain("Verify return code: 0 (ok)");
  });

  test("swaks --tls on submission and --tlsc on implicit TLS see the same certificate", async () => {
    for (const [flag, port] of [
      ["--tls", t.app.submissionPort!],
      ["--tlsc", t.app.submissionTlsPort!],
    ] as const) {
      const peerFile = join(work.path, `peer${flag}.pem`);
      const { code, transcript } = await runSwaks([
        "--server",
        `127.0.0.1:${port}`,
        flag,
        "--tls-verify",
        "--tls-ca-path",
        rootFile,
        "--tls-sni",
        NAME,
        "--tls-get-peer-cert",
        peerFile,
        "--quit-after",
        "AUTH",
        "--auth",
        "PLAIN",
        "--auth-user",
        ACCOUNT_A.outboundId,
        "--auth-password",
        ACCOUNT_A.smtpKey,
      ]);
      expect({ flag, code, transcript }).toMatchObject({ flag, code: 0 });
      const peer = new X509Certificate(await Bun.file(peerFile).text());
      expect(peer.serialNumber).toBe(new X509Certificate(t.app.tls.current()!.cert).serialNumber);
      expect(peer.issuer).toContain("Pebble Intermediate CA");
    }
  });

  test("the API answers over HTTPS with the certificate; plain HTTP on the challenge port redirects there", async () => {
    const root = await Bun.file(rootFile).text();
    // The certificate names mail.postroom.test; connect to loopback but check that name.
    const res = await fetch(`https://127.0.0.1:${t.app.httpPort}/healthz`, {
      tls: {
        ca: root,
        checkServerIdentity: (_host: string, cert: any) =>
          cert.subjectaltname === `DNS:${NAME}` ? undefined : new Error(`unexpected ${cert.subjectaltname}`),
      } as any,
    });
    expect(res.status).toBe(200);
    const plain = await fetch(`http://127.0.0.1:${t.app.challengePort}/healthz?x=1`, { redirect: "manual" });
    expect(plain.status).toBe(308);
    expect(plain.headers.get("location")).toBe("http://127.0.0.1:8080/healthz?x=1");
    expect((await fetch(`http://127.0.0.1:${t.app.challengePort}/.well-known/acme-challenge/unknown`)).status).toBe(404);
  });

  test("a forced renewal reaches new connections; a session opened before it still delivers mail", async () => {
    const address = (
      await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
        auth: bearer(ACCOUNT_A.token),
        body: { target: target.url("/renewal"), target_format: "json+n" },
      })
    ).body;
    const { session } = await SmtpSession.open(t.app.inboundPort!);
    await session.command("EHLO client.postroom.test");
    const before = await session.startTls(NAME);
    expect(await t.app.tls.renew()).toBe(true);

    const after = (await sClient(t.app.inboundPort!)).leaf;
    expect(after.serialNumber).not.toBe(before.serialNumber);
    expect(after.serialNumber).toBe(new X509Certificate(t.app.tls.current()!.cert).serialNumber);

    expect(await session.command("EHLO client.postroom.test")).toStartWith("250");
    expect(await session.command("MAIL FROM:<alice@sender.test>")).toStartWith("250");
    expect(await session.command(`RCPT TO:<${address.email}>`)).toStartWith("250");
    expect(await session.data("Subject: still here\r\n\r\nsent over the old TLS session\r\n")).toStartWith("250");
    await session.close();
    expect(target.at("/renewal")[0]!.json.headers.subject).toBe("still here");

    const metrics = await t.app.handle(new Request("http://localhost/metrics"));
    expect(metrics.status).toBe(404); // no metrics token configured
  });

  test("the renewed certificate is kept in the store, its key encrypted: the next start loads it instead of ordering", async () => {
    // Another handle on the same database, as the next start (or another node) opens it.
    const store = openStore(t.dataDir);
    try {
      const row = store.db.query<{ value: string }, []>("SELECT value FROM tls_state WHERE name = 'acme_certificate'").get();
      expect(row!.value).toContain("BEGIN CERTIFICATE");
      expect(row!.value).not.toContain("PRIVATE KEY");
      const next = await loadConfigured(t.app.config, () => sqliteTlsStore(store, Date.now), Date.now());
      expect(next.problem).toBeNull();
      expect(new X509Certificate(next.material!.cert).serialNumber).toBe(new X509Certificate(t.app.tls.current()!.cert).serialNumber);
      expect(next.material!.key).toBe(t.app.tls.current()!.key);
    } finally {
      store.close();
    }
    expect(existsSync(join(t.dataDir, "tls", "certificate.pem"))).toBe(false);
    expect(logLines.filter((l) => l.includes('"acme order"')).length).toBe(2); // the first and the forced one
  });
});
