import { describe, expect, test } from "bun:test";
import { RateLimiter } from "../../src/auth/rate-limit.ts";

const FIVE_PER_MIN = { limit: 5, windowMs: 60_000 };

describe("RateLimiter (sliding window)", () => {
  test("five calls pass, the sixth within the minute is refused with the wait until a slot frees", async () => {
    const rl = new RateLimiter();
    const seen = [];
    for (const t of [0, 1000, 2000, 3000, 4000]) seen.push(await rl.take("a", FIVE_PER_MIN, t));
    expect(seen.map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(seen.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    const sixth = await rl.take("a", FIVE_PER_MIN, 10_000);
    expect(sixth).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 50 });
  });

  test("the window slides: a slot frees when the oldest call is a minute old", async () => {
    const rl = new RateLimiter();
    for (const t of [0, 10_000, 20_000, 30_000, 40_000]) await rl.take("a", FIVE_PER_MIN, t);
    expect((await rl.take("a", FIVE_PER_MIN, 59_999)).allowed).toBe(false);
    const next = await rl.take("a", FIVE_PER_MIN, 60_000);
    expect(next.allowed).toBe(true);
    expect(next.remaining).toBe(0);
    expect((await rl.take("a", FIVE_PER_MIN, 60_001)).allowed).toBe(false);
    expect((await rl.take("a", FIVE_PER_MIN, 70_000)).allowed).toBe(true);
  });

  test("refused calls do not count", async () => {
    const rl = new RateLimiter();
    for (let i = 0; i < 5; i++) await rl.take("a", FIVE_PER_MIN, 0);
    for (let i = 0; i < 100; i++) await rl.take("a", FIVE_PER_MIN, 30_000);
    expect((await rl.take("a", FIVE_PER_MIN, 60_000)).allowed).toBe(true);
  });

  test("keys are independent", async () => {
    const rl = new RateLimiter();
    for (let i = 0; i < 5; i++) await rl.take("a", FIVE_PER_MIN, 0);
    expect((await rl.take("a", FIVE_PER_MIN, 1)).allowed).toBe(false);
    expect((await rl.take("b", FIVE_PER_MIN, 1)).allowed).toBe(true);
  });

  test("a changed limit (SIGHUP) takes effect at once", async () => {
    const rl = new RateLimiter();
    for (let i = 0; i < 5; i++) await rl.take("a", FIVE_PER_MIN, 0);
    expect((await rl.take("a", FIVE_PER_MIN, 1)).allowed).toBe(false);
    expect((await rl.take("a", { limit: 10, windowMs: 60_000 }, 2)).allowed).toBe(true);
  });

  test("remaining counts only calls inside the window", async () => {
    const rl = new RateLimiter();
    await rl.take("a", FIVE_PER_MIN, 0);
    await rl.take("a", FIVE_PER_MIN, 1000);
    expect((await rl.take("a", FIVE_PER_MIN, 60_500)).remaining).toBe(3);
  });
});

describe("RateLimiter with maxKeys (keys from outside: client IPs, sessions)", () => {
  test("holds at most maxKeys windows: past it the oldest key is forgotten and starts afresh", async () => {
    const one = { limit: 1, windowMs: 60_000 };
    const rl = new RateLimiter(2);
    expect((await rl.take("ip1", one, 0)).allowed).toBe(true);
    expect((await rl.take("ip2", one, 0)).allowed).toBe(true);
    expect((await rl.take("ip1", one, 1)).allowed).toBe(false);
    expect((await rl.take("ip2", one, 1)).allowed).toBe(false);
    // A third key pushes out ip1, the first created; ip2 is still counted.
    expect((await rl.take("ip3", one, 2)).allowed).toBe(true);
    expect((await rl.take("ip2", one, 3)).allowed).toBe(false);
    expect((await rl.take("ip1", one, 4)).allowed).toBe(true);
  });
});
