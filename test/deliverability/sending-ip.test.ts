import { describe, expect, test } from "bun:test";
import {
  forwardConfirms,
  heloMatches,
  ipWarnings,
  type SendingIpHealth,
  sendingIpsOf,
  usableSourceAddresses,
} from "../../src/deliverability/sending-ip.ts";

const healthy: SendingIpHealth = {
  ip: "192.0.2.1",
  helo: "mta.example.com",
  ptr: "mta.example.com",
  fcrdns: true,
  helo_matches: true,
  listed: [],
  unknown: [],
  checkedAtMs: 0,
};

describe("sendingIpsOf", () => {
  test("outbound.sending_ips, each with smtp's hostname, once", () => {
    const config = { hostname: "mx.example.com", outbound: { sendingIps: ["192.0.2.1", "2001:db8::1", "192.0.2.1"], ipPools: [] } };
    expect(sendingIpsOf(config as never)).toEqual([
      { ip: "192.0.2.1", helo: "mx.example.com" },
      { ip: "2001:db8::1", helo: "mx.example.com" },
    ]);
  });

  test("pool addresses first, each with its own helo (once, even in two pools), then the other sending_ips", () => {
    const config = {
      hostname: "mx.example.com",
      outbound: {
        sendingIps: ["192.0.2.1", "198.51.100.1", "198.51.100.2"],
        ipPools: [
          { name: "bulk", addresses: [{ ip: "198.51.100.1", helo: "bulk1.example.com", warmup: null }] },
          {
            name: "tx",
            addresses: [
              { ip: "198.51.100.2", helo: "tx.example.com", warmup: null },
              { ip: "198.51.100.1", helo: "bulk1.example.com", warmup: null },
            ],
          },
        ],
      },
    };
    // Before: every address was checked against smtp's hostname, the pools' helo names ignored.
    expect(sendingIpsOf(config as never)).toEqual([
      { ip: "198.51.100.1", helo: "bulk1.example.com" },
      { ip: "198.51.100.2", helo: "tx.example.com" },
      { ip: "192.0.2.1", helo: "mx.example.com" },
    ]);
  });
});

describe("PTR decisions", () => {
  test.each([
    ["mta.example.com", "mta.example.com", true],
    ["MTA.Example.com", "mta.example.com.", true],
    ["mta.example.com", "host-1.isp.example", false],
  ])("heloMatches(%s, %s)", (helo, ptr, ok) => expect(heloMatches(helo, ptr)).toBe(ok));

  test.each([
    ["192.0.2.1", ["192.0.2.1"], true],
    ["192.0.2.1", ["192.0.2.9", "192.0.2.1"], true],
    ["192.0.2.1", ["192.0.2.9"], false],
    ["2001:db8::1", ["2001:0db8:0000:0000:0000:0000:0000:0001"], true],
    ["2001:db8::1", ["2001:db8::2"], false],
    ["192.0.2.1", [], false],
  ])("forwardConfirms(%s, %j)", (ip, forward, ok) => expect(forwardConfirms(ip, forward)).toBe(ok));
});

describe("ipWarnings", () => {
  test("none for a healthy address", () => expect(ipWarnings(healthy)).toEqual([]));
  test.each([
    [{ ptr: null, fcrdns: false, helo_matches: null }, "has no PTR record"],
    [{ fcrdns: false }, "does not resolve back to it"],
    [{ ptr: "host.isp.example", helo_matches: false }, "is not its EHLO name mta.example.com"],
    [{ listed: [{ zone: "bl.test", text: "see https://bl.test" }] }, "is listed on bl.test (see https://bl.test)"],
    [{ ptr: null, fcrdns: null, helo_matches: null, unknown: [{ check: "ptr", reason: "ESERVFAIL" }] }, "the PTR check could not be made"],
    [{ unknown: [{ check: "bl.test", reason: "timeout" }] }, "the bl.test blocklist check could not be made"],
  ])("%j", (change, text) => {
    const warnings = ipWarnings({ ...healthy, ...change });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(text);
  });
});

describe("usableSourceAddresses", () => {
  const a = { ip: "192.0.2.1", helo: "a" };
  const b = { ip: "192.0.2.2", helo: "b" };
  const listedB = [{ ip: "192.0.2.2", listed: [{ zone: "bl.test", text: "" }] }];
  test.each([
    ["a listed address is left out", [a, b], listedB, true, [a]],
    ["every address listed: all stay", [b], listedB, true, [b]],
    ["unchecked addresses stay", [a, b], [], true, [a, b]],
    ["avoid_listed_ips off", [a, b], listedB, false, [a, b]],
  ])("%s", (_, addresses, health, avoid, want) => expect(usableSourceAddresses(addresses, health, avoid)).toEqual(want));
});
