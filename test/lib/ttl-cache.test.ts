// The bounded cache of DNS answers and SPF and DMARC verdicts (src/lib/ttl-cache.ts).
import { expect, test } from "bun:test";
import { TtlCache } from "../../src/lib/ttl-cache.ts";

const fill = async (cache: TtlCache<string>, keys: Iterable<string>) => {
  for (const k of keys) await cache.get(k, async () => `value of ${k}`);
};

test("a full cache drops its oldest entries first, one for each new one", async () => {
  const cache = new TtlCache<string>(60_000, 3);
  await fill(cache, ["a", "b", "c", "d", "e"]);
  const loaded: string[] = [];
  const probe = (k: string) =>
    cache.get(k, async () => {
      loaded.push(k);
      return "again";
    });
  // c, d and e are kept; a is loaded again (and drops c, now the oldest).
  expect(await probe("e")).toBe("value of e");
  expect(await probe("d")).toBe("value of d");
  expect(await probe("a")).toBe("again");
  expect(await probe("e")).toBe("value of e");
  expect(loaded).toEqual(["a"]);
});

// Issue 38: the oldest entry was found by a new iterator over the Map at every put, which
// walks past every entry deleted since the Map last compacted: 5 µs a put at 10,000
// entries, 29 µs at 50,000 (the inbound path puts five entries per message). Timed against
// the same puts into a cache with room, so that the machine's load cancels out (before
// the fix: 10.6 times as long; after: 1.3).
test("a full cache takes a new entry about as fast as one with room", async () => {
  const timed = async (cache: TtlCache<string>, prefix: string, count: number) => {
    const t0 = performance.now();
    await fill(
      cache,
      Array.from({ length: count }, (_, i) => `${prefix} ${i}`),
    );
    return performance.now() - t0;
  };
  const full = new TtlCache<string>(60_000, 50_000);
  const roomy = new TtlCache<string>(60_000, 1_000_000);
  await timed(full, "warm", 50_000);
  await timed(roomy, "warm", 50_000);
  // The best of three alternating trials each: a GC pause or a lost core in one trial
  // (CI once measured 3.6 in a single pair) does not decide it; 10.6 before the fix would.
  const withRoom: number[] = [];
  const whenFull: number[] = [];
  for (let trial = 0; trial < 3; trial++) {
    withRoom.push(await timed(roomy, `new ${trial}`, 100_000));
    whenFull.push(await timed(full, `new ${trial}`, 100_000));
  }
  expect(Math.min(...whenFull) / Math.min(...withRoom)).toBeLessThan(3);
});
