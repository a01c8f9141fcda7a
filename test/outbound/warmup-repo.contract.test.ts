// The WarmupCounts contract (issue 29), run on both engines: a take gets what the day's cap
// still has, counts are kept per source address, destination and day, concurrent takes
// (as several nodes make) never hand out more than the cap, and old days are purged.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { WarmupCounts } from "../../src/outbound/delivery/warmup.port.ts";
import { createWarmupRepo } from "../../src/outbound/delivery/warmup.repo.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";

const DAY = Date.UTC(2026, 10, 2);
const NEXT = DAY + 86_400_000;

describe.each(STORE_ENGINES)("WarmupCounts on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  let repo: WarmupCounts;

  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    repo = createWarmupRepo(handle.db);
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(["warmup_counts"]);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("a take gets what the cap still has, then nothing", async () => {
    expect(await repo.take("127.0.0.2", "example.org", DAY, 3, 5)).toBe(3);
    expect(await repo.take("127.0.0.2", "example.org", DAY, 3, 5)).toBe(2);
    expect(await repo.take("127.0.0.2", "example.org", DAY, 3, 5)).toBe(0);
    expect(await repo.sent("127.0.0.2", "example.org", DAY)).toBe(5);
  });

  it("counts per source address, destination and day", async () => {
    expect(await repo.take("127.0.0.2", "example.org", DAY, 5, 5)).toBe(5);
    expect(await repo.take("127.0.0.3", "example.org", DAY, 5, 5)).toBe(5);
    expect(await repo.take("127.0.0.2", "example.net", DAY, 5, 5)).toBe(5);
    expect(await repo.take("127.0.0.2", "example.org", NEXT, 5, 10)).toBe(5);
    expect(await repo.sent("127.0.0.2", "example.org", DAY)).toBe(5);
    expect(await repo.sent("127.0.0.2", "example.org", NEXT)).toBe(5);
    expect(await repo.sent("2001:db8::1", "example.org", DAY)).toBe(0);
  });

  it("a cap of 0, or a lowered cap below what was sent, gives nothing", async () => {
    expect(await repo.take("127.0.0.2", "example.org", DAY, 3, 0)).toBe(0);
    expect(await repo.take("127.0.0.2", "example.org", DAY, 8, 10)).toBe(8);
    expect(await repo.take("127.0.0.2", "example.org", DAY, 1, 5)).toBe(0);
  });

  it("takes made at once never hand out more than the cap", async () => {
    const got = await Promise.all(Array.from({ length: 20 }, () => repo.take("127.0.0.2", "example.org", DAY, 1, 7)));
    // A take that lost every compare-and-set round gets 0 and its recipient waits: never more than the cap.
    expect(got.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(7);
    expect(await repo.sent("127.0.0.2", "example.org", DAY)).toBe(got.reduce((a, b) => a + b, 0));
  });

  it("purgeBefore deletes the days before, only", async () => {
    await repo.take("127.0.0.2", "example.org", DAY, 1, 5);
    await repo.take("127.0.0.2", "example.org", NEXT, 1, 5);
    expect(await repo.purgeBefore(NEXT)).toBe(1);
    expect(await repo.sent("127.0.0.2", "example.org", DAY)).toBe(0);
    expect(await repo.sent("127.0.0.2", "example.org", NEXT)).toBe(1);
  });
});
