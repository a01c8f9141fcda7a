import { describe, expect, test } from "bun:test";
import { dnsblQueryName, dnsblVerdict, ptrQueryName } from "../../src/deliverability/dnsbl.ts";

describe("dnsblQueryName and ptrQueryName", () => {
  test.each([
    ["203.0.113.7", "zen.spamhaus.org", "7.113.0.203.zen.spamhaus.org"],
    ["127.0.0.2", "bl.spamcop.net", "2.0.0.127.bl.spamcop.net"],
    ["2001:db8::7", "zen.spamhaus.org", `7.${"0.".repeat(23)}8.b.d.0.1.0.0.2.zen.spamhaus.org`],
    ["2001:DB8:0:0:1::", "z.test", `${"0.".repeat(12)}1.0.0.0.${"0.".repeat(8)}8.b.d.0.1.0.0.2.z.test`],
    ["::ffff:192.0.2.1", "z.test", `1.0.2.0.0.0.0.c.f.f.f.f.${"0.".repeat(20)}z.test`],
  ])("%s on %s", (ip, zone, name) => expect(dnsblQueryName(ip, zone)).toBe(name));

  test("PTR names under in-addr.arpa and ip6.arpa", () => {
    expect(ptrQueryName("192.0.2.10")).toBe("10.2.0.192.in-addr.arpa");
    expect(ptrQueryName("2001:db8::1")).toBe(`1.${"0.".repeat(23)}8.b.d.0.1.0.0.2.ip6.arpa`);
  });

  test("an IPv6 name has 32 nibbles", () => {
    expect(ptrQueryName("::1").split(".").length).toBe(34);
  });

  test("not an address", () => expect(() => dnsblQueryName("mail.example.com", "z.test")).toThrow());
});

describe("dnsblVerdict", () => {
  test.each([
    [{ kind: "addresses", addresses: ["127.0.0.2"] }, "listed"],
    [{ kind: "addresses", addresses: ["127.0.0.11", "127.0.0.4"] }, "listed"],
    [{ kind: "error", code: "ENOTFOUND" }, "not_listed"],
    [{ kind: "error", code: "ENODATA" }, "not_listed"],
    [{ kind: "error", code: "ESERVFAIL" }, "unknown"],
    [{ kind: "error", code: "ETIMEOUT" }, "unknown"],
    [{ kind: "error", code: "EREFUSED" }, "unknown"],
    [{ kind: "addresses", addresses: ["127.255.255.254"] }, "unknown"],
    [{ kind: "addresses", addresses: ["127.255.255.252", "127.0.0.2"] }, "unknown"],
    [{ kind: "addresses", addresses: ["192.0.2.1"] }, "unknown"],
  ] as const)("%j → %s", (answer, state) => expect(dnsblVerdict(answer).state).toBe(state));

  test("a refused query says what to do", () => {
    const v = dnsblVerdict({ kind: "addresses", addresses: ["127.255.255.254"] });
    expect(v).toEqual({ state: "unknown", reason: expect.stringContaining("your own resolver") });
  });
});
