// The slowing of repeated SMTP AUTH failures (issue 31): the decision, the window and
// the bound on addresses remembered.
import { describe, expect, test } from "bun:test";
import { AuthFailures, authFailureVerdict, failuresNow, type AuthFailureLimits } from "../../src/lib/auth-failures.ts";

const LIMITS: AuthFailureLimits = { failuresBeforeDelay: 5, delayMs: 1000, maxDelayMs: 30_000, failuresBeforeClose: 10, windowMs: 900_000, trackedClients: 3 };

describe("authFailureVerdict", () => {
  test.each([
    // failures → delay, close
    [1, 0, false],
    [5, 0, false],
    [6, 1000, false],
    [7, 2000, false],
    [8, 4000, false],
    [9, 8000, false],
    [10, 16_000, true],
    [11, 30_000, true],
    [1000, 30_000, true],
  ])("failure %p: delay %p ms, close %p", (failures, delayMs, close) => {
    expect(authFailureVerdict(failures, LIMITS)).toEqual({ failures, delayMs, close });
  });
  test("auth_failures_before_delay = 0 slows from the first failure", () => {
    expect(authFailureVerdict(1, { ...LIMITS, failuresBeforeDelay: 0 }).delayMs).toBe(1000);
  });
});

describe("failuresNow", () => {
  test.each([
    // prior, now → count
    [undefined, 0, 1],
    [{ count: 4, lastAtMs: 1000 }, 2000, 5],
    [{ count: 4, lastAtMs: 1000 }, 1000 + 900_000 - 1, 5],
    [{ count: 4, lastAtMs: 1000 }, 1000 + 900_000, 1],
  ])("prior %p at %p → %p", (prior, nowMs, count) => {
    expect(failuresNow(prior, nowMs, LIMITS.windowMs)).toBe(count);
  });
});

describe("AuthFailures", () => {
  test("counted per address, an IPv6 client by its /64; a success starts again", () => {
    const f = new AuthFailures(() => LIMITS);
    expect(f.failed("2001:db8:1:2::10", 0).failures).toBe(1);
    expect(f.failed("2001:db8:1:2:ffff::1", 1).failures).toBe(2);
    expect(f.failed("2001:db8:1:3::1", 2).failures).toBe(1);
    expect(f.failed("::ffff:192.0.2.1", 3).failures).toBe(1);
    expect(f.failed("192.0.2.1", 4).failures).toBe(2);
    f.succeeded("192.0.2.1");
    expect(f.failed("192.0.2.1", 5).failures).toBe(1);
  });

  test("bounded: past auth_failure_clients the least recently failing address is forgotten", () => {
    const f = new AuthFailures(() => LIMITS);
    for (let i = 1; i <= 100; i++) f.failed(`192.0.2.${i}`, i);
    expect(f.trackedClients).toBe(3);
    expect(f.failed("192.0.2.100", 200).failures).toBe(2);
    expect(f.failed("192.0.2.1", 201).failures).toBe(1);
  });
});
