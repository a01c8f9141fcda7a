// The approximated sliding window that nodes on one PostgreSQL count (rate-window.ts): the
// check that a call fits and the answer a take gives, worked out by hand for a limit of
// 10 a minute.
import { describe, expect, test } from "bun:test";
import { fitsOneMore, fixedWindow, msUntilEstimateAtMost, windowDecision } from "../../src/auth/rate-window.ts";

const TEN_PER_MIN = { limit: 10, windowMs: 60_000 };

describe("fixedWindow", () => {
  test.each([
    [0, 0, 0],
    [59_999, 0, 59_999],
    [60_000, 60_000, 0],
    [1_700_000_012_345, 1_699_999_980_000, 32_345],
  ])("%p ms is in the window from %p, %p ms in", (nowMs, startMs, elapsedMs) => {
    expect(fixedWindow(nowMs, 60_000)).toEqual({ startMs, elapsedMs });
  });
});

describe("fitsOneMore (previous window's calls weighted by how much of it is still within a minute)", () => {
  test.each([
    // previous, current, elapsed ms, fits
    [0, 0, 0, true],
    [0, 9, 30_000, true],
    [0, 10, 30_000, false],
    // 10 at the previous window's end: nothing fits at the start of this one.
    [10, 0, 0, false],
    // Half of it still counts half-way through: 5 + 4 + 1 ≤ 10, 5 + 5 + 1 > 10.
    [10, 4, 30_000, true],
    [10, 5, 30_000, false],
    // Exactly at the limit is allowed: 10 × 0.1 + 8 + 1 = 10.
    [10, 8, 54_000, true],
    [10, 8, 53_999, false],
  ])("previous %p, current %p, %p ms in: %p", (previous, current, elapsedMs, fits) => {
    expect(fitsOneMore({ previous, current }, TEN_PER_MIN, elapsedMs)).toBe(fits);
  });
});

describe("msUntilEstimateAtMost", () => {
  test.each([
    // previous, current, elapsed, target, ms
    [0, 3, 10_000, 3, 0],
    // The previous window's 10 fade by one every 6 s: from 5 + 4 = 9 to 8 takes 6 s.
    [10, 4, 30_000, 8, 6_000],
    // The current window's calls fade only once it has become the previous one: 10 → 9 is 6 s into the next.
    [0, 10, 30_000, 9, 36_000],
    // Nothing left after two windows.
    [10, 10, 0, 0, 120_000],
  ])("previous %p, current %p, %p ms in, to %p: %p ms", (previous, current, elapsedMs, target, ms) => {
    expect(msUntilEstimateAtMost({ previous, current }, 60_000, elapsedMs, target)).toBe(ms);
  });
});

describe("windowDecision", () => {
  test.each([
    // Counted as the 1st of a fresh window: 9 left. Any part of a call counts as a whole one,
    // so this one frees its slot only when it has faded out completely, two windows on.
    [{ previous: 0, current: 0 }, 0, true, { allowed: true, limit: 10, remaining: 9, resetSeconds: 120 }],
    // 5 (faded) + 4 + this one = 10: none left; in 6 s one of the previous window's fades out.
    [{ previous: 10, current: 4 }, 30_000, true, { allowed: true, limit: 10, remaining: 0, resetSeconds: 6 }],
    // Refused at 5 + 5: one fits once the estimate is 9, 6 s later.
    [{ previous: 10, current: 5 }, 30_000, false, { allowed: false, limit: 10, remaining: 0, resetSeconds: 6 }],
    // Refused on counts read a moment before another node's: still told to wait a second.
    [{ previous: 0, current: 3 }, 30_000, false, { allowed: false, limit: 10, remaining: 0, resetSeconds: 1 }],
    // A fraction of a call still counts as one used: 10 × 0.25 + 2 + 1 = 5.5 → 4 left.
    [{ previous: 10, current: 2 }, 45_000, true, { allowed: true, limit: 10, remaining: 4, resetSeconds: 3 }],
  ])("previous and current %j, %p ms in, counted: %p", (before, elapsedMs, allowed, expected) => {
    expect(windowDecision(before, TEN_PER_MIN, elapsedMs, allowed)).toEqual(expected);
  });
});
