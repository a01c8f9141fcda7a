// findLive's routing cache (addresses.port.ts), shared by both engines: an address is kept
// up to its age limit; a change drops it; and a load that was still under way when a change
// dropped the entry (PostgreSQL answers on another connection, possibly after the change
// committed) is handed to its caller but not kept, so the next lookup reads the row again.
import { describe, expect, test } from "bun:test";
import { ROUTING_CACHE_MAX_AGE_MS, routingCache } from "../../../src/inbound/addresses/addresses.port.ts";
import type { Address } from "../../../src/inbound/addresses/address.ts";
import { address } from "../inbound-repos.ts";

const loader = (values: (Address | null)[]) => {
  let loads = 0;
  return { load: async () => values[loads++] ?? null, count: () => loads };
};

describe("routingCache", () => {
  test("keeps a loaded address until its age limit, then loads again", async () => {
    let nowMs = 0;
    const cache = routingCache(() => nowMs);
    const db = loader([address("a", { nickname: "one" }), address("a", { nickname: "two" })]);
    expect((await cache.find("a", db.load))?.nickname).toBe("one");
    nowMs = ROUTING_CACHE_MAX_AGE_MS - 1;
    expect((await cache.find("a", db.load))?.nickname).toBe("one");
    expect(db.count()).toBe(1);
    nowMs = ROUTING_CACHE_MAX_AGE_MS;
    expect((await cache.find("a", db.load))?.nickname).toBe("two");
    expect(db.count()).toBe(2);
  });

  test("a drop makes the next lookup load again; an absent address is not kept", async () => {
    const cache = routingCache(() => 0);
    const db = loader([address("a", { nickname: "one" }), null, address("a", { nickname: "three" })]);
    await cache.find("a", db.load);
    cache.drop("a");
    expect(await cache.find("a", db.load)).toBeNull();
    expect((await cache.find("a", db.load))?.nickname).toBe("three");
    expect(db.count()).toBe(3);
  });

  test("a load answered after a drop is returned but not kept", async () => {
    const cache = routingCache(() => 0);
    let answer!: (a: Address) => void;
    const pending = cache.find("a", () => new Promise<Address>((resolve) => (answer = resolve)));
    cache.drop("a"); // a change committed while the old row was on its way
    answer(address("a", { nickname: "old" }));
    expect((await pending)?.nickname).toBe("old");
    const db = loader([address("a", { nickname: "new" })]);
    expect((await cache.find("a", db.load))?.nickname).toBe("new");
    expect(db.count()).toBe(1);
  });
});
