import { describe, expect, test } from "bun:test";
import { caaDecision, caaOwners, caaVerdict, checkCaa, type CaaDecision, type CaaLookup } from "../../src/tls/caa.ts";
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
    [
      "another CA only",
      "mx.example.com",
      [issue("sectigo.com")],
      LE,
      'CAA at example.com lets only sectigo.com issue for mx.example.com, and this ACME server is letsencrypt.org: add example.com. CAA 0 issue "letsencrypt.org"',
    ],
    ["no CA at all", "mx.example.com", [issue(";")], LE, 'CAA at example.com forbids every CA to issue for mx.example.com (issue ";")'],
    [
      "no CA at all, even one that publishes no identity",
      "mx.example.com",
      [issue(";")],
      [],
      'CAA at example.com forbids every CA to issue for mx.example.com (issue ";")',
    ],
    ["a CA without identities cannot be checked", "mx.example.com", [issue("sectigo.com")], [], true],
    [
      "unknown critical property",
      "mx.example.com",
      [issue("letsencrypt.org"), { flags: 128, tag: "tbs", value: "x" }],
      LE,
      'CAA at example.com has a critical "tbs" property no CA may ignore',
    ],
    [
      "issuewild governs wildcards",
      "*.example.com",
      [issue("letsencrypt.org"), { flags: 0, tag: "issuewild", value: ";" }],
      LE,
      'CAA at example.com forbids every CA to issue for *.example.com (issuewild ";")',
    ],
  ];
  for (const [why, name, records, ids, expected] of cases) {
    test(why, () => {
      const verdict = caaVerdict(name, "example.com", records, ids);
      expect(verdict).toEqual(expected === true ? { allowed: true } : { allowed: false, reason: expected });
    });
  }
});

describe("caaDecision: only a definite answer that forbids our CA stops an order", () => {
  const NAME = "mx.example.com";
  const refuse = (reason: string): CaaDecision => ({ proceed: false, reason });
  const proceed: CaaDecision = { proceed: true, warning: null };
  const warn = (owner: string, error: string): CaaDecision => ({
    proceed: true,
    warning: `could not look up CAA at ${owner} (${error}); ordering anyway, the CA checks CAA itself`,
  });
  const cases: [string, string, Record<string, CaaLookup>, CaaDecision][] = [
    ["NOERROR without CAA up to the root (or NXDOMAIN)", NAME, { "mx.example.com": [], "example.com": [], com: [] }, proceed],
    ["owners not asked count as holding no CAA", NAME, {}, proceed],
    ["the name's own set names our CA", NAME, { "mx.example.com": [issue("letsencrypt.org")] }, proceed],
    [
      "the name's own set names another CA",
      NAME,
      { "mx.example.com": [issue("sectigo.com")] },
      refuse(
        'CAA at mx.example.com lets only sectigo.com issue for mx.example.com, and this ACME server is letsencrypt.org: add mx.example.com. CAA 0 issue "letsencrypt.org"',
      ),
    ],
    [
      "climbs to the parent's set, which names another CA",
      NAME,
      { "mx.example.com": [], "example.com": [issue("sectigo.com")] },
      refuse(
        'CAA at example.com lets only sectigo.com issue for mx.example.com, and this ACME server is letsencrypt.org: add example.com. CAA 0 issue "letsencrypt.org"',
      ),
    ],
    [
      "climbs to the parent's set, which forbids every CA",
      NAME,
      { "mx.example.com": [], "example.com": [issue(";")] },
      refuse('CAA at example.com forbids every CA to issue for mx.example.com (issue ";")'),
    ],
    [
      "the closest set governs: own allows, parent forbids",
      NAME,
      { "mx.example.com": [issue("letsencrypt.org")], "example.com": [issue(";")] },
      proceed,
    ],
    [
      "a wildcard climbs from the name under it; issuewild governs",
      "*.mx.example.com",
      { "example.com": [issue("letsencrypt.org"), { flags: 0, tag: "issuewild", value: "sectigo.com" }] },
      refuse(
        'CAA at example.com lets only sectigo.com issue for *.mx.example.com, and this ACME server is letsencrypt.org: add example.com. CAA 0 issuewild "letsencrypt.org"',
      ),
    ],
    ["SERVFAIL at the name: order, with a warning", NAME, { "mx.example.com": { error: "SERVFAIL" } }, warn("mx.example.com", "SERVFAIL")],
    [
      "REFUSED at the parent after NOERROR at the name",
      NAME,
      { "mx.example.com": [], "example.com": { error: "REFUSED" } },
      warn("example.com", "REFUSED"),
    ],
    [
      "timeout at the name hides the parent's set: the CA decides",
      NAME,
      { "mx.example.com": { error: "no answer in time" }, "example.com": [issue(";")] },
      warn("mx.example.com", "no answer in time"),
    ],
    [
      "a forbidding set found before a failed lookup still refuses",
      NAME,
      { "mx.example.com": [issue(";")], "example.com": { error: "SERVFAIL" } },
      refuse('CAA at mx.example.com forbids every CA to issue for mx.example.com (issue ";")'),
    ],
  ];
  for (const [why, name, answers, expected] of cases) {
    test(why, () => expect(caaDecision(name, new Map(Object.entries(answers)), LE)).toEqual(expected));
  }
  test("the owners climbed, closest first", () => {
    expect(caaOwners("*.Mail.Example.com.")).toEqual(["mail.example.com", "example.com", "com"]);
  });
});

describe("checkCaa against a real DNS server", () => {
  test("climbs to the closest set; a SERVFAIL, REFUSED or unanswered CAA lookup is a warning, not a refusal", async () => {
    const dns = await TestDnsServer.start();
    try {
      dns.set("example.com", [{ type: "CAA", flags: 0, tag: "issue", value: "sectigo.com" }]);
      dns.set("mx.example.com", [{ type: "A", address: "192.0.2.1" }]);
      dns.set("ok.example.com", [{ type: "CAA", flags: 0, tag: "issue", value: "letsencrypt.org" }]);
      dns.set("servfail.example.org", [{ type: "FAIL", qtype: "CAA", rcode: "SERVFAIL" }]);
      dns.set("refused.example.org", [{ type: "FAIL", qtype: "CAA", rcode: "REFUSED" }]);
      dns.set("silent.example.org", [{ type: "FAIL", qtype: "CAA", rcode: "TIMEOUT" }]);
      const resolver = createResolver({ servers: [dns.address], timeoutMs: 300 });
      expect((await checkCaa(resolver, ["mx.example.com"], LE)).refusal).toContain("CAA at example.com lets only sectigo.com");
      expect(await checkCaa(resolver, ["ok.example.com", "www.nowhere.test"], LE)).toEqual({ refusal: null, warnings: [] });
      expect(await checkCaa(resolver, ["servfail.example.org", "refused.example.org", "silent.example.org"], LE)).toEqual({
        refusal: null,
        warnings: [
          "could not look up CAA at servfail.example.org (SERVFAIL); ordering anyway, the CA checks CAA itself",
          "could not look up CAA at refused.example.org (REFUSED); ordering anyway, the CA checks CAA itself",
          "could not look up CAA at silent.example.org (no answer in time); ordering anyway, the CA checks CAA itself",
        ],
      });
      // A refusal for one name stops the order even when another name's lookup failed.
      expect((await checkCaa(resolver, ["servfail.example.org", "mx.example.com"], LE)).refusal).toContain(
        "CAA at example.com lets only sectigo.com",
      );
    } finally {
      await dns.stop();
    }
  });
});
