// Rate limits counted in PostgreSQL (createPgRateLimits): two nodes, each with its own SQL
// client and limiter, on one database share each key's limit, as a user of the API sending
// to either node behind a load balancer would see. Times are given, not read from a clock.
import { SQL } from "bun";
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { createPgRateLimits, type PgRateLimits } from "../../src/auth/rate-limit.pg.repo.ts";
import { STORE_ENGINES, type EngineHandle } from "../helpers/engines.ts";
import { eventually } from "../helpers/sink.ts";

const engine = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;
const it = engine.test;
const FIVE_PER_MIN = { limit: 5, windowMs: 60_000 };
// The start of a fixed minute window (a multiple of 60 s).
const T0 = 1_800_000_000_000;

describe("rate limits shared by two nodes on one PostgreSQL", () => {
  let handle: EngineHandle | undefined;
  let url = "";
  const clients: SQL[] = [];
  let a: PgRateLimits;
  let b: PgRateLimits;
  const node = (url: string, max = 2) => {
    const sql = new SQL(url, { max });
    clients.push(sql);
    return createPgRateLimits(sql);
  };
  const rows = async () =>
    (await handle!.sql!`SELECT key, window_start FROM rate_counters ORDER BY key, window_start`) as { key: string; window_start: string }[];

  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    if (handle.kind !== "postgres") throw new Error("PostgreSQL expected");
    url = handle.url;
    a = node(url);
    b = node(url);
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(["rate_counters"]);
  });
  afterAll(async () => {
    for (const sql of clients) await sql.close();
    await handle?.close();
  });

  it("calls on either node count against one limit: five in a minute in all, not five per node", async () => {
    const seen = [];
    for (const [limiter, t] of [
      [a, 0],
      [b, 1_000],
      [a, 2_000],
      [b, 3_000],
      [a, 4_000],
    ] as const)
      seen.push(await limiter.take("outbound:o1", FIVE_PER_MIN, T0 + t));
    expect(seen.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    const refusedOnB = await b.take("outbound:o1", FIVE_PER_MIN, T0 + 10_000);
    expect(refusedOnB).toMatchObject({ allowed: false, limit: 5, remaining: 0 });
    expect(refusedOnB.resetSeconds).toBeGreaterThan(0);
    expect((await a.take("outbound:o1", FIVE_PER_MIN, T0 + 10_000)).allowed).toBe(false);
    // Another key has its own count.
    expect((await b.take("outbound:o2", FIVE_PER_MIN, T0 + 10_000)).allowed).toBe(true);
  });

  it("forty calls at once through two nodes' pools: exactly the limit is allowed", async () => {
    const c = node(url, 8);
    const d = node(url, 8);
    const rate = { limit: 10, windowMs: 60_000 };
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? c : d).take("account:busy", rate, T0 + 5_000)));
    expect(decisions.filter((x) => x.allowed).length).toBe(10);
    expect(await handle!.sql!`SELECT count FROM rate_counters WHERE key = 'account:busy'`).toEqual([{ count: "10" }]);
  });

  it("the previous window's calls still count, fading over the next window; refused calls do not count", async () => {
    for (let i = 0; i < 5; i++) expect((await a.take("account:a", FIVE_PER_MIN, T0 + 59_000)).allowed).toBe(true);
    // A new fixed window has begun, but the five calls of a second ago still weigh in full.
    const early = await b.take("account:a", FIVE_PER_MIN, T0 + 60_500);
    expect(early.allowed).toBe(false);
    // Half-way through, half of them count (2.5): two more fit, the third does not.
    for (let i = 0; i < 20; i++) await b.take("account:a", FIVE_PER_MIN, T0 + 61_000);
    expect((await b.take("account:a", FIVE_PER_MIN, T0 + 90_000)).allowed).toBe(true);
    expect((await a.take("account:a", FIVE_PER_MIN, T0 + 90_000)).allowed).toBe(true);
    expect((await b.take("account:a", FIVE_PER_MIN, T0 + 90_000)).allowed).toBe(false);
  });

  it("a higher limit (after SIGHUP) takes effect at once on every node", async () => {
    for (let i = 0; i < 5; i++) await a.take("account:grow", FIVE_PER_MIN, T0);
    expect((await b.take("account:grow", FIVE_PER_MIN, T0 + 1)).allowed).toBe(false);
    expect((await b.take("account:grow", { limit: 10, windowMs: 60_000 }, T0 + 2)).allowed).toBe(true);
  });

  it("rows no window needs any more are deleted, by purgeExpired and now and then by a take", async () => {
    await a.take("sign-in:192.0.2.1", FIVE_PER_MIN, T0);
    await a.take("sign-in:192.0.2.1", FIVE_PER_MIN, T0 + 60_000);
    await a.take("sign-in:192.0.2.2", FIVE_PER_MIN, T0 + 60_000);
    // At T0 + 120 s the T0 window is two windows old; the next one is still the previous window.
    expect(await a.purgeExpired(T0 + 120_000)).toBe(1);
    expect((await rows()).map((r) => r.key)).toEqual(["sign-in:192.0.2.1", "sign-in:192.0.2.2"]);
    // A node's take more than a purge period after its last purge starts one by itself.
    await b.take("sign-in:192.0.2.3", FIVE_PER_MIN, T0 + 600_000);
    await eventually(async () => (await rows()).every((r) => r.key === "sign-in:192.0.2.3"), 5_000, "the old rows to be purged");
  });
});
