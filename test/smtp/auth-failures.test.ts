// The slowing of repeated SMTP AUTH failures (issue 31): the decisions, the window and
// the bound on addresses remembered.
import { describe, expect, test } from "bun:test";
import type { AuthFailureLimits } from "../../src/config/config.ts";
import { attemptVerdict, AuthFailures, failuresAt } from "../../src/smtp/auth-failures.ts";

const LIMITS: AuthFailureLimits = {
  failuresBeforeDelay: 5,
  delayMs: 1000,
  maxDelayMs: 30_000,
  failuresBeforeClose: 10,
  windowMs: 900_000,
  trackedClients: 3,
};

describe("attemptVerdict: the next attempt of an address with this many failures", () => {
  test.each([
    // failures before → this attempt's number, wait before the check, refused unchecked, a wrong password closes
    [0, 1, 0, false, false],
    [4, 5, 0, false, false],
    [5, 6, 1000, false, false],
    [6, 7, 2000, false, false],
    [8, 9, 8000, false, false],
    [9, 10, 16_000, false, true],
    [10, 11, 30_000, true, true],
    [1000, 1001, 30_000, true, true],
  ])("%p failures: attempt %p waits %p ms, refused %p, closes if wrong %p", (prior, failures, delayMs, refuse, closeIfWrong) => {
    expect(attemptVerdict(prior, LIMITS)).toEqual({ failures, delayMs, refuse, closeIfWrong });
  });
  test("auth_failures_before_delay = 0 slows from the first attempt", () => {
    expect(attemptVerdict(0, { ...LIMITS, failuresBeforeDelay: 0 }).delayMs).toBe(1000);
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
  test("counted per address, an IPv6 client by its /64", () => {
    const f = new AuthFailures(() => LIMITS);
    expect(f.attempt("2001:db8:1:2::10", 0).failures).toBe(1);
    expect(f.attempt("2001:db8:1:2:ffff::1", 1).failures).toBe(2);
    expect(f.attempt("2001:db8:1:3::1", 2).failures).toBe(1);
    expect(f.attempt("::ffff:192.0.2.1", 3).failures).toBe(1);
    expect(f.attempt("192.0.2.1", 4).failures).toBe(2);
  });

  test("a success takes back its own attempt only: logging in with a password of one's own does not wipe out guesses", () => {
    const f = new AuthFailures(() => LIMITS);
    for (let i = 0; i < 4; i++) f.attempt("192.0.2.9", i); // four wrong
    f.attempt("192.0.2.9", 5);
    f.succeeded("192.0.2.9"); // one right
    expect(f.attempt("192.0.2.9", 6).failures).toBe(5);
  });

  test("attempts side by side count one after the other: the 6th waits, the 10th closes if wrong, the 11th is refused; another address is untouched", () => {
    const f = new AuthFailures(() => LIMITS);
    const verdicts = Array.from({ length: 11 }, () => f.attempt("192.0.2.7", 100));
    expect(verdicts.map((v) => v.delayMs)).toEqual([0, 0, 0, 0, 0, 1000, 2000, 4000, 8000, 16_000, 30_000]);
    expect(verdicts.map((v) => v.closeIfWrong)).toEqual([false, false, false, false, false, false, false, false, false, true, true]);
    expect(verdicts.map((v) => v.refuse)).toEqual([false, false, false, false, false, false, false, false, false, false, true]);
    expect(f.attempt("192.0.2.8", 100)).toMatchObject({ failures: 1, delayMs: 0, refuse: false });
    // Once the window has passed since the last attempt, the address starts again.
    expect(f.attempt("192.0.2.7", 100 + LIMITS.windowMs)).toMatchObject({ failures: 1, delayMs: 0, refuse: false });
  });

  test("bounded: past auth_failure_clients the least recently failing address is forgotten", () => {
    const f = new AuthFailures(() => LIMITS);
    for (let i = 1; i <= 100; i++) f.attempt(`192.0.2.${i}`, i);
    expect(f.trackedClients).toBe(3);
    expect(f.attempt("192.0.2.100", 200).failures).toBe(2);
    expect(f.attempt("192.0.2.1", 201).failures).toBe(1);
  });
});
