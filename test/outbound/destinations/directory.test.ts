// Which destination a recipient domain belongs to, as the delivery worker asks it: by its MX
// hosts (looked up once a minute), again at once after a reload changes the rules or the
// smarthost; a failed lookup leaves the domain alone.
import { describe, expect, test } from "bun:test";
import type { Config } from "../../../src/config/config.ts";
import type { DnsResolver } from "../../../src/lib/dns.ts";
import { relayDestination } from "../../../src/outbound/delivery/destination-window.ts";
import { DESTINATION_TTL_MS, DestinationDirectory } from "../../../src/outbound/destinations/directory.ts";
import type { DestinationRule } from "../../../src/outbound/destinations/rules.ts";

const rule = (name: string, mx: string[]): DestinationRule => ({
  name,
  mx,
  maxConnections: 2,
  rate: null,
  throttleReplies: [],
  pauseMs: 1000,
});

function rig() {
  const lookups: string[] = [];
  const mx: Record<string, string> = { "a.test": "mx.a.provider.test", "b.test": "mx.b.provider.test", "c.test": "mx.shared.test" };
  const resolver = {
    async resolveMx(name: string) {
      lookups.push(name);
      if (!mx[name]) throw Object.assign(new Error("timeout"), { code: "ETIMEOUT" });
      return [{ exchange: mx[name]!, priority: 10 }];
    },
  } as unknown as DnsResolver;
  let outbound = { destinations: [] as DestinationRule[], smarthost: null as string | null };
  const config = () => ({ outbound }) as unknown as Config;
  let now = 0;
  const dir = new DestinationDirectory(resolver, config, relayDestination, () => now);
  return {
    dir,
    lookups,
    setRules: (rules: DestinationRule[], smarthost: string | null = null) => {
      outbound = { destinations: rules, smarthost };
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("DestinationDirectory", () => {
  test("resolves by MX hosts once a minute; a reload's new rules apply at once", async () => {
    const r = rig();
    expect((await r.dir.resolve("a.test")).windowKey).toBe("mx mx.a.provider.test");
    await r.dir.resolve("a.test");
    expect(r.lookups).toEqual(["a.test"]);
    r.setRules([rule("provider", [".provider.test"])]);
    const after = await r.dir.resolve("A.test");
    expect([after.name, after.windowKey]).toEqual(["provider", "rule provider"]);
    expect((await r.dir.resolve("b.test")).name).toBe("provider");
    expect(r.lookups).toEqual(["a.test", "a.test", "b.test"]);
    r.advance(DESTINATION_TTL_MS + 1);
    await r.dir.resolve("a.test");
    expect(r.lookups).toHaveLength(4);
    expect(r.dir.domainsWhere((d) => d.name === "provider", 10).sort()).toEqual(["a.test", "b.test"]);
  });

  test("a failed lookup: the domain alone; through a smarthost: the relay's window, taken at once after a reload", async () => {
    const r = rig();
    expect(await r.dir.resolve("down.test")).toEqual({ name: "down.test", windowKey: "domain down.test", rule: null });
    expect((await r.dir.resolve("c.test")).windowKey).toBe("mx mx.shared.test");
    r.setRules([], "smtp://relay.test:587");
    expect((await r.dir.resolve("c.test")).windowKey).toBe(relayDestination("smtp://relay.test:587"));
  });
});
