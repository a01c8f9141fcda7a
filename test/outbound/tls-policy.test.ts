import { describe, expect, test } from "bun:test";
import { mxPermitted, requireTlsListed, tlsRequirement, type StsPolicy } from "../../src/outbound/delivery/tls-policy.ts";

const policy = (mode: StsPolicy["mode"], mx = ["mx1.example.com", "*.backup.example.net"]): StsPolicy => ({
  id: "1",
  mode,
  mx,
  maxAgeSeconds: 86400,
  expiresAtMs: 0,
});

describe("requireTlsListed", () => {
  const cases: [string, string[], boolean][] = [
    ["bank.example", ["bank.example"], true],
    ["BANK.example", ["bank.example"], true],
    ["mail.bank.example", ["bank.example"], false],
    ["mail.bank.example", [".bank.example"], true],
    ["bank.example", [".bank.example"], false],
    ["evilbank.example", [".bank.example"], false],
    ["other.example", [], false],
  ];
  for (const [domain, list, expected] of cases)
    test(`${domain} in ${JSON.stringify(list)}: ${expected}`, () => expect(requireTlsListed(domain, list)).toBe(expected));
});

describe("tlsRequirement: MTA-STS enforce beats require_tls, testing delivers as usual", () => {
  test("no policy, not listed: opportunistic", () => expect(tlsRequirement("a.example", [], null)).toEqual({ level: "opportunistic" }));
  test("listed: encrypt", () =>
    expect(tlsRequirement("a.example", ["a.example"], null)).toEqual({ level: "encrypt", why: "outbound.require_tls lists a.example" }));
  test("enforce: verify against the policy", () =>
    expect(tlsRequirement("a.example", ["a.example"], policy("enforce"))).toMatchObject({
      level: "verify",
      why: "the MTA-STS policy of a.example (enforce)",
    }));
  test("testing: delivered as usual", () => expect(tlsRequirement("a.example", [], policy("testing"))).toEqual({ level: "opportunistic" }));
  test("testing and listed: encrypt", () =>
    expect(tlsRequirement("a.example", ["a.example"], policy("testing"))).toMatchObject({ level: "encrypt" }));
  test("none: as if there were no policy", () =>
    expect(tlsRequirement("a.example", [], policy("none"))).toEqual({ level: "opportunistic" }));
});

describe("mxPermitted under enforce (RFC 8461 4.1 matching)", () => {
  const enforce = tlsRequirement("example.com", [], policy("enforce"));
  const cases: [string, boolean][] = [
    ["mx1.example.com", true],
    ["MX1.example.com.", true],
    ["mx2.example.com", false],
    ["a.backup.example.net", true],
    ["a.b.backup.example.net", false],
    ["backup.example.net", false],
  ];
  for (const [mx, expected] of cases) test(`${mx}: ${expected}`, () => expect(mxPermitted(mx, enforce)).toBe(expected));
  test("any MX when the requirement is not verify", () =>
    expect(mxPermitted("anything.example", tlsRequirement("x.example", ["x.example"], null))).toBe(true));
});
