// Which pool address a destination's mail leaves from (issue 29): stable per destination,
// spread over the pool, moved as little as possible when the pool changes, and of the
// family (IPv4, IPv6) the MX address needs.
import { describe, expect, test } from "bun:test";
import type { SourceAddress } from "../../src/config/config.ts";
import { parseConfigText } from "../../src/config/load.ts";
import {
  newConnectionSources,
  pairForRemote,
  pickSourceAddress,
  poolOf,
  rankSourceAddresses,
  sourceForRemote,
} from "../../src/outbound/delivery/source-address.ts";

const at = (ip: string): SourceAddress => ({ ip, helo: `h-${ip}.example.com`, warmup: null });
const POOL = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"].map(at);
const DOMAINS = Array.from({ length: 400 }, (_, i) => `d${i}.example`);

describe("pickSourceAddress", () => {
  test.each([
    // Fixed answers: a change of the hash would move every destination of every operator.
    ["gmail.com", "127.0.0.3"],
    ["outlook.com", "127.0.0.2"],
    ["yahoo.com", "127.0.0.4"],
    ["GMAIL.com", "127.0.0.3"],
  ])("%s leaves from %s, whatever the order of the pool", (destination, ip) => {
    expect(pickSourceAddress(POOL, destination).ip).toBe(ip);
    expect(pickSourceAddress([...POOL].reverse(), destination).ip).toBe(ip);
  });

  test("a pool of one sends everything from it", () => {
    expect(new Set(DOMAINS.map((d) => pickSourceAddress([at("127.0.0.2")], d).ip))).toEqual(new Set(["127.0.0.2"]));
  });

  test("destinations spread over the pool: each address gets 15% to 35% of 400", () => {
    const counts = new Map<string, number>();
    for (const d of DOMAINS) counts.set(pickSourceAddress(POOL, d).ip, (counts.get(pickSourceAddress(POOL, d).ip) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(POOL.map((a) => a.ip));
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(60);
      expect(n).toBeLessThan(140);
    }
  });

  test("taking an address out moves only the destinations it had", () => {
    const smaller = POOL.filter((a) => a.ip !== "127.0.0.4");
    for (const d of DOMAINS) {
      const before = pickSourceAddress(POOL, d).ip;
      if (before !== "127.0.0.4") expect(pickSourceAddress(smaller, d).ip).toBe(before);
    }
  });
});

describe("newConnectionSources: a listed address is skipped while its family has a clean one", () => {
  const none = new Set<string>();
  test.each([
    // gmail.com prefers 127.0.0.3 (above); listed, the next of its ranking takes it.
    ["nothing listed: the pool's ranking", none, rankSourceAddresses(POOL, "gmail.com").map((a) => a.ip)],
    [
      "the preferred one listed: the others, in their order",
      new Set(["127.0.0.3"]),
      rankSourceAddresses(POOL, "gmail.com")
        .map((a) => a.ip)
        .filter((ip) => ip !== "127.0.0.3"),
    ],
    [
      "every address listed: all of them (a pool never stops sending)",
      new Set(POOL.map((a) => a.ip)),
      rankSourceAddresses(POOL, "gmail.com").map((a) => a.ip),
    ],
  ])("%s", (_, listed, want) => {
    expect(newConnectionSources(POOL, "gmail.com", listed, true).map((a) => a.ip)).toEqual(want);
  });

  test("outbound.avoid_listed_ips = false: listed addresses are used as before", () => {
    expect(newConnectionSources(POOL, "gmail.com", new Set(["127.0.0.3"]), false)[0]!.ip).toBe("127.0.0.3");
  });

  test("a listed IPv4 address with no clean IPv4 one is kept: the pool's IPv6 address cannot reach an IPv4 MX", () => {
    const mixed = [at("127.0.0.2"), at("::1")];
    const sources = newConnectionSources(mixed, "gmail.com", new Set(["127.0.0.2"]), true);
    expect(sourceForRemote(sources, "192.0.2.25")?.ip).toBe("127.0.0.2");
    expect(sourceForRemote(sources, "2001:db8::25")?.ip).toBe("::1");
  });
});

describe("sourceForRemote: an MX address is reached from the pool's first address of its family", () => {
  const mixed = rankSourceAddresses([at("127.0.0.2"), at("::1"), at("127.0.0.3")], "example.org");
  test.each([
    ["an IPv4 MX", mixed, "192.0.2.25", mixed.find((a) => !a.ip.includes(":"))!.ip],
    ["an IPv6 MX", mixed, "2001:db8::25", "::1"],
    ["an IPv6 MX from an IPv4-only pool", [at("127.0.0.2")], "2001:db8::25", null],
    ["an IPv4 MX from an IPv6-only pool", [at("::1")], "192.0.2.25", null],
  ])("%s", (_name, ranked, remote, expected) => {
    expect(sourceForRemote(ranked, remote)?.ip ?? null).toBe(expected);
  });
});

describe("pairForRemote: a dual-stack MX is reached over the family the pool has", () => {
  const v4 = at("127.0.0.2");
  const v6 = at("::1");
  test.each([
    [
      "a dual-stack MX from an IPv6-only pool: its IPv6 address",
      [v6],
      ["192.0.2.25", "2001:db8::25"],
      { ip: "2001:db8::25", source: "::1" },
    ],
    [
      "a dual-stack MX from an IPv4-only pool: its IPv4 address",
      [v4],
      ["192.0.2.25", "2001:db8::25"],
      { ip: "192.0.2.25", source: "127.0.0.2" },
    ],
    [
      "a dual-stack MX from a mixed pool: IPv4 first, as listed",
      [v6, v4],
      ["192.0.2.25", "2001:db8::25"],
      { ip: "192.0.2.25", source: "127.0.0.2" },
    ],
    ["an IPv4-only MX from an IPv6-only pool: none", [v6], ["192.0.2.25"], null],
    ["an IPv6-only MX from an IPv4-only pool: none", [v4], ["2001:db8::25"], null],
  ])("%s", (_name, ranked, remotes, expected) => {
    const pair = pairForRemote(ranked, remotes);
    expect(pair ? { ip: pair.ip, source: pair.source.ip } : null).toEqual(expected);
  });
});

describe("poolOf", () => {
  const r = parseConfigText(`[outbound]
[[outbound.ip_pools]]
name = "bulk"
addresses = [{ ip = "127.0.0.3", helo = "bulk.example.com" }]
[[accounts]]
id = "0123456789abcdef"
[[accounts.outbound]]
id = "fedcba9876543210"
ip_pool = "bulk"
[[accounts.outbound]]
id = "fedcba9876543211"`);
  if (!r.ok) throw new Error(r.problems.join("\n"));
  test.each([
    ["an outbound account with ip_pool", "fedcba9876543210", "bulk"],
    ["one without", "fedcba9876543211", null],
    ["one the config no longer has", "0000000000000000", null],
  ])("%s", (_name, id, pool) => {
    expect(poolOf(r.config, id)?.name ?? null).toBe(pool);
  });
});
