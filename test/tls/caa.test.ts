import { describe, expect, test } from "bun:test";
import { caaProblem, caaVerdict } from "../../src/tls/caa.ts";
import type { CaaRecord } from "../../src/lib/dns.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";

const issue = (value: string, flags = 0): CaaRecord => ({ flags, tag: "issue", value });
const LE = ["letsencrypt.org"];

describe("caaVerdict (RFC 8659)", () => {
  const cases: [string, string, CaaRecord[], string[], true | string][] = [
    ["no issue property: anyone", "mx.example.com", [{ flags: 0, tag: "iodef", value: "mailto:sec@example.com" }], LE, true],
    ["our CA named", "mx.example.com", [issue("letsencrypt.org")], LE, true],
    ["our CA named with parameters", "mx.example.com", [issue("letsencrypt.org; accounturi=https://acme/acct/1")], LE, true],
    ["case-insensitive", "mx.example.com", [issue("LetsEncrypt.org")], LE, true],
    ["another CA only", "mx.example.com", [issue("sectigo.com")], LE, 'CAA at example.com lets only sectigo.com issue for mx.example.com, and this ACME server is letsencrypt.org: add example.com. CAA 0 issue "letsencrypt.org"'],
    ["no CA at all", "mx.example.com", [issue(";")], LE, 'CAA at example.com forbids every CA to issue for mx.example.com (issue ";")'],
    ["no CA at all, even one that publishes no identity", "mx.example.com", [issue(";")], [], 'CAA at example.com forbids every CA to issue for mx.example.com (issue ";")'],
    ["a CA without identities cannot be checked", "mx.example.com", [issue("sectigo.com")], [], true],
    ["unknown critical property", "mx.example.com", [issue("letsencrypt.org"), { flags: 128, tag: "tbs", value: "x" }], LE, 'CAA at example.com has a critical "tbs" property no CA may ignore'],
    ["issuewild governs wildcards", "*.example.com", [issue("letsencrypt.org"), { flags: 0, tag: "issuewild", value: ";" }], LE, 'CAA at example.com forbids every CA to issue for *.example.com (issuewild ";")'],
  ];
  for (const [why, name, records, ids, expected] of cases) {
    test(why, () => {
      const verdict = caaVerdict(name, "example.com", records, ids);
      expect(verdict).toEqual(expected === true ? { allowed: true } : { allowed: false, reason: expected });
    });
  }
});

describe("caaProblem climbs to the closest record set", () => {
  test("the parent's set governs a name without its own; the name's own set wins over the parent's", async () => {
    const dns = await TestDnsServer.start();
    try {
      dns.set("example.com", [{ type: "CAA", flags: 0, tag: "issue", value: "sectigo.com" }]);
      dns.set("mx.example.com", [{ type: "A", address: "192.0.2.1" }]);
      dns.set("ok.example.com", [{ type: "CAA", flags: 0, tag: "issue", value: "letsencrypt.org" }]);
      const resolver = createResolver({ servers: [dns.address], timeoutMs: 300 });
      expect(await caaProblem(resolver, ["mx.example.com"], LE)).toContain("CAA at example.com lets only sectigo.com");
      expect(await caaProblem(resolver, ["ok.example.com"], LE)).toBeNull();
      expect(await caaProblem(resolver, ["www.nowhere.test"], LE)).toBeNull();
    } finally {
      await dns.stop();
    }
  });
});
