// The slowing of repeated SMTP AUTH failures (issue 31): the decisions, the window and
// the bound on addresses remembered.
import { describe, expect, test } from "bun:test";
import { attemptVerdict, AuthFailures, closesAt, failuresAt, type AuthFailureLimits } from "../../src/lib/auth-failures.ts";

const LIMITS: AuthFailureLimits = { failuresBeforeDelay: 5, delayMs: 1000, maxDelayMs: 30_000, failuresBeforeClose: 10, windowMs: 900_000, trackedClients: 3 };

describe("attemptVerdict: the next attempt of an address with this many failures", () => {
  test.each([
    // failures so far → wait before the check, refused without a check
    [0, 0, false],
    [4, 0, false],
    [5, 1000, false],
    [6, 2000, false],
    [7, 4000, false],
    [8, 8000, false],
    [9, 16_000, false],
    [10, 30_000, true],
    [1000, 30_000, true],
  ])("%p failures: wait %p ms, refused %p", (failures, delayMs, refuse) => {
    expect(attemptVerdict(failures, LIMITS)).toEqual({ failures, delayMs, refuse });
  });
  test("auth_failures_before_delay = 0 slows from the first attempt", () => {
    expect(attemptVerdict(0, { ...LIMITS, failuresBeforeDelay: 0 }).delayMs).toBe(1000);
  });
  test.each([
    [9, false],
    [10, true],
    [11, true],
  ])("the failure that makes %p closes the connection: %p", (failures, close) => {
    expect(closesAt(failures, LIMITS)).toBe(close);
  });
});

describe("failuresAt", () => {
  test.each([
    // prior, now → failures still counted
    [undefined, 0, 0],
    [{ count: 4, lastAtMs: 1000 }, 2000, 4],
    [{ count: 4, lastAtMs: 1000 }, 1000 + 900_000 - 1, 4],
    [{ count: 4, lastAtMs: 1000 }, 1000 + 900_000, 0],
  ])("prior %p at %p → %p", (prior, nowMs, count) => {
    expect(failuresAt(prior, nowMs, LIMITS.windowMs)).toBe(count);
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

  test("the 6th attempt waits, the 10th failure closes, the 11th attempt is refused unchecked; another address is untouched", () => {
    const f = new AuthFailures(() => LIMITS);
    for (let i = 1; i <= 5; i++) {
      expect(f.attempt("192.0.2.7", i).delayMs).toBe(0);
      expect(f.failed("192.0.2.7", i)).toEqual({ failures: i, close: false });
    }
    expect(f.attempt("192.0.2.7", 6)).toEqual({ failures: 5, delayMs: 1000, refuse: false });
    for (let i = 6; i <= 9; i++) f.failed("192.0.2.7", i);
    expect(f.failed("192.0.2.7", 10)).toEqual({ failures: 10, close: true });
    expect(f.attempt("192.0.2.7", 11).refuse).toBe(true);
    expect(f.attempt("192.0.2.8", 11)).toEqual({ failures: 0, delayMs: 0, refuse: false });
    // Once the window has passed since the last failure, the address starts again.
    expect(f.attempt("192.0.2.7", 10 + LIMITS.windowMs)).toEqual({ failures: 0, delayMs: 0, refuse: false });
  });

  test("bounded: past auth_failure_clients the least recently failing address is forgotten", () => {
    const f = new AuthFailures(() => LIMITS);
    for (let i = 1; i <= 100; i++) f.failed(`192.0.2.${i}`, i);
    expect(f.trackedClients).toBe(3);
    expect(f.failed("192.0.2.100", 200).failures).toBe(2);
    expect(f.failed("192.0.2.1", 201).failures).toBe(1);
  });
});
