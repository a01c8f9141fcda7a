// The DKIM verifier (mailauth through our resolver) accepts both signatures of the
// RFC 8463 example (Ed25519 and RSA), with the example's DNS records served by a real
// DNS server on loopback.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { AuthChecker } from "../../src/inbound/parse/auth-checks.ts";
import { extractMessage } from "../../src/inbound/parse/extract.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { corpusPath } from "../helpers/corpus.ts";

const CORPUS = new URL(`file://${corpusPath("dkim/")}`);
let dns: TestDnsServer;

beforeAll(async () => {
  dns = await TestDnsServer.start();
  const zone = JSON.parse(readFileSync(new URL("dns.json", CORPUS), "utf8")) as Record<string, { TXT?: string[][] }>;
  for (const [name, records] of Object.entries(zone))
    dns.set(
      name,
      (records.TXT ?? []).map((data) => ({ type: "TXT" as const, data })),
    );
});
afterAll(() => dns.stop());

test("both signatures of corpus/dkim/signed.eml verify (ed25519-sha256 and rsa-sha256)", async () => {
  const raw = readFileSync(new URL("signed.eml", CORPUS));
  const { facts } = await extractMessage(raw, { maxHeaderBytes: 65_536, maxMimeDepth: 20, maxMimeParts: 100 });
  expect(facts.hasDkimSignature).toBe(true);
  const checker = new AuthChecker(createResolver({ servers: [dns.address], timeoutMs: 500 }), 0);
  const auth = await checker.check(
    raw,
    { mailFrom: "joe@football.example.com", helo: "football.example.com", remoteIp: "213.165.64.12", mta: "mx.postroom.test" },
    facts,
  );
  expect(auth.dkim.signatures.map((s) => [s.selector, s.domain, s.result]).sort()).toEqual([
    ["brisbane", "football.example.com", "pass"],
    ["test", "football.example.com", "pass"],
  ]);
  expect(auth.dkim.result).toBe("pass");
  // The RSA key is 1024 bits and its TXT record spans four strings: both must be handled.
  expect(auth.spf).toEqual({ result: "pass", domain: "football.example.com" });
});
