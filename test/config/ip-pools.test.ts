// [[outbound.ip_pools]] and an outbound account's ip_pool (issue 29): every bad value is
// a config error naming its key, and a good one is what delivery and SPF read.
import { describe, expect, test } from "bun:test";
import { bindProblem, hostAddressProblems } from "../../src/config/host-addresses.ts";
import { parseConfigText } from "../../src/config/load.ts";

const ACCOUNT = (pool: string) =>
  `[[accounts]]\nid = "0123456789abcdef"\n[[accounts.outbound]]\nid = "fedcba9876543210"\nip_pool = "${pool}"`;
const POOL = (name: string, addresses: string) => `[[outbound.ip_pools]]\nname = "${name}"\naddresses = [${addresses}]\n`;
const A = (ip: string, helo = "mta1.example.com", extra = "") => `{ ip = "${ip}", helo = "${helo}"${extra} }`;

function problemsOf(toml: string): string[] {
  const r = parseConfigText(toml);
  return r.ok ? [] : r.problems;
}

describe("bad pools name the key", () => {
  test.each([
    [
      "an unknown pool in an outbound account",
      POOL("bulk", A("127.0.0.2")) + ACCOUNT("transactional"),
      'accounts[0].outbound[0].ip_pool: names no pool: "transactional" is not the name of an [[outbound.ip_pools]] table (known: "bulk")',
    ],
    [
      "a pool when none is set",
      ACCOUNT("bulk"),
      'accounts[0].outbound[0].ip_pool: names no pool: "bulk" is not the name of an [[outbound.ip_pools]] table (none is set)',
    ],
    ["a malformed ip", POOL("bulk", A("203.0.113.300")), "outbound.ip_pools[0].addresses[0].ip: must be an IPv4 or IPv6 address"],
    [
      "a malformed helo",
      POOL("bulk", A("127.0.0.2", "mta 1")),
      "outbound.ip_pools[0].addresses[0].helo: must be a host name such as mta1.example.com (the name this address's PTR record gives)",
    ],
    [
      "a helo that is not a full name",
      POOL("bulk", A("127.0.0.2", "localhost")),
      "outbound.ip_pools[0].addresses[0].helo: must be a host name such as mta1.example.com (the name this address's PTR record gives)",
    ],
    ["no helo", POOL("bulk", '{ ip = "127.0.0.2" }'), "outbound.ip_pools[0].addresses[0].helo: is required"],
    [
      "no address",
      POOL("bulk", ""),
      'outbound.ip_pools[0].addresses: must list 1 to 256 addresses such as { ip = "203.0.113.7", helo = "mta1.example.com" }',
    ],
    [
      "the unspecified address",
      POOL("bulk", A("0.0.0.0")),
      "outbound.ip_pools[0].addresses[0].ip: 0.0.0.0 is unspecified, not one address of this host that connections can come from",
    ],
    [
      "a multicast address",
      POOL("bulk", A("ff02::1")),
      "outbound.ip_pools[0].addresses[0].ip: ff02::1 is multicast, not one address of this host that connections can come from",
    ],
    [
      "two pools with one name",
      POOL("bulk", A("127.0.0.2")) + POOL("bulk", A("127.0.0.3")),
      "outbound.ip_pools[1].name: duplicates the pool at outbound.ip_pools[0]",
    ],
    [
      "one address twice in a pool",
      POOL("bulk", `${A("127.0.0.2")}, ${A("127.0.0.2")}`),
      'outbound.ip_pools[0].addresses[1].ip: 127.0.0.2 is listed twice in pool "bulk"',
    ],
    [
      "one address with two names",
      POOL("a", A("127.0.0.2", "one.example.com")) + POOL("b", A("127.0.0.2", "two.example.com")),
      "outbound.ip_pools[1].addresses[0]: 127.0.0.2 is also in outbound.ip_pools[0].addresses[0] with another helo or warmup: an address greets with one name and warms up once",
    ],
    [
      "a warm-up start that is no day",
      POOL("bulk", A("127.0.0.2", "mta1.example.com", ', warmup = { start = "2026-02-31", daily = [50] }')),
      "outbound.ip_pools[0].addresses[0].warmup.start: 2026-02-31 is not a day of the calendar",
    ],
    [
      "a warm-up start that is no date",
      POOL("bulk", A("127.0.0.2", "mta1.example.com", ', warmup = { start = "soon", daily = [50] }')),
      'outbound.ip_pools[0].addresses[0].warmup.start: must be a date such as "2026-11-01" (the first day of the warm-up, UTC)',
    ],
    [
      "a warm-up without caps",
      POOL("bulk", A("127.0.0.2", "mta1.example.com", ', warmup = { start = "2026-11-01", daily = [] }')),
      "outbound.ip_pools[0].addresses[0].warmup.daily: must be a list of 1 to 366 daily caps such as [50, 100, 200]",
    ],
    [
      "a negative cap",
      POOL("bulk", A("127.0.0.2", "mta1.example.com", ', warmup = { start = "2026-11-01", daily = [50, -1] }')),
      "outbound.ip_pools[0].addresses[0].warmup.daily[1]: must be an integer from 0 to 10000000",
    ],
    ["an unknown key in a pool", `${POOL("bulk", A("127.0.0.2"))}helo = "x"\n`, "outbound.ip_pools[0].helo: unknown key"],
  ])("%s", (_name, toml, expected) => {
    expect(problemsOf(`[outbound]\n${toml}`)).toContain(expected);
  });
});

describe("a good pool", () => {
  test("is read as the program uses it, and its addresses join sending_ips for SPF", () => {
    const r = parseConfigText(
      `[outbound]\nsending_ips = ["192.0.2.1", "127.0.0.2"]\n` +
        POOL("transactional", `${A("127.0.0.2", "MTA1.example.com")}, ${A("::1", "mta6.example.com")}`) +
        POOL("bulk", A("127.0.0.3", "bulk.example.com", ', warmup = { start = "2026-11-01", daily = [50, 100] }')) +
        ACCOUNT("bulk"),
    );
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.outbound.ipPools).toEqual([
      {
        name: "transactional",
        addresses: [
          { ip: "127.0.0.2", helo: "mta1.example.com", warmup: null },
          { ip: "::1", helo: "mta6.example.com", warmup: null },
        ],
      },
      {
        name: "bulk",
        addresses: [{ ip: "127.0.0.3", helo: "bulk.example.com", warmup: { startMs: Date.UTC(2026, 10, 1), daily: [50, 100] } }],
      },
    ]);
    expect(r.config.outbound.sendingIps).toEqual(["192.0.2.1", "127.0.0.2", "::1", "127.0.0.3"]);
    expect(r.config.accounts[0]!.outbound[0]!.ipPool).toBe("bulk");
  });

  test("an outbound account without ip_pool sends from the system's default address", () => {
    const r = parseConfigText(`[[accounts]]\nid = "0123456789abcdef"\n[[accounts.outbound]]\nid = "fedcba9876543210"`);
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.accounts[0]!.outbound[0]!.ipPool).toBeNull();
    expect(r.config.outbound.ipPools).toEqual([]);
  });
});

describe("an address of this host is one a socket binds to", () => {
  test.each([
    ["127.0.0.2 (loopback on Linux, though no interface lists it)", "127.0.0.2", null],
    ["::1", "::1", null],
    ["203.0.113.7 (TEST-NET-3: on no host)", "203.0.113.7", "is not an address of this host"],
    ["2001:db8::7 (documentation range)", "2001:db8::7", "is not an address of this host"],
  ])("%s", async (_name, ip, expected) => {
    expect(await bindProblem(ip)).toBe(expected);
  });

  test("each missing pool address is named by its key", async () => {
    const raw = { outbound: { ip_pools: [{ name: "a", addresses: [{ ip: "127.0.0.2" }, { ip: "203.0.113.7" }] }] } };
    expect(await hostAddressProblems(raw)).toEqual([
      {
        path: "outbound.ip_pools[0].addresses[1].ip",
        message: "203.0.113.7 is not an address of this host: add it to an interface, or take it out of the pool",
      },
    ]);
  });
});
