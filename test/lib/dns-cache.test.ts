// The resolver keeps an answer for the answer's own TTL, at most its cache time (60 s):
// seen from a real DNS server on loopback that counts the questions it gets.
import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { createResolver, type DnsResolver } from "../../src/lib/dns.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";

let dns: TestDnsServer;
let resolver: DnsResolver;
const asked = new Map<string, number>();
const T0 = Date.parse("2026-11-24T12:00:00Z");

beforeAll(async () => {
  dns = await TestDnsServer.start();
  const get = dns.zone.get.bind(dns.zone);
  dns.zone.get = (name: string) => {
    asked.set(name, (asked.get(name) ?? 0) + 1);
    return get(name);
  };
  dns.set("short.example", [{ type: "MX", exchange: "mx.short.example", priority: 10, ttl: 5 }]);
  dns.set("long.example", [{ type: "MX", exchange: "mx.long.example", priority: 10, ttl: 86_400 }]);
  dns.set("zero.example", [{ type: "MX", exchange: "mx.zero.example", priority: 10, ttl: 0 }]);
  resolver = createResolver({ servers: [dns.address] });
});
afterAll(() => dns.stop());
afterEach(() => setSystemTime());

/** Looks `name` up at T0 + `atS` seconds; how many questions the server had for it by then. */
async function at(atS: number, name: string): Promise<number> {
  setSystemTime(new Date(T0 + atS * 1000));
  await resolver.resolveMx(name);
  return asked.get(name) ?? 0;
}

describe("DNS answers are kept for their TTL", () => {
  test("a 5 s answer is asked again after 5 s, not before", async () => {
    expect(await at(0, "short.example")).toBe(1);
    expect(await at(4, "short.example")).toBe(1);
    expect(await at(6, "short.example")).toBe(2);
  });

  test("a day's TTL is kept 60 s at most", async () => {
    expect(await at(100, "long.example")).toBe(1);
    expect(await at(159, "long.example")).toBe(1);
    expect(await at(161, "long.example")).toBe(2);
  });

  test("a TTL of 0 is not cached", async () => {
    expect(await at(200, "zero.example")).toBe(1);
    expect(await at(200, "zero.example")).toBe(2);
  });
});
