import { describe, expect, test } from "bun:test";
import { retryAfterMs, webhookRetryAt } from "../../src/events/webhook-schedule.ts";

const S = 1000;
const delays = [10 * S, 60 * S, 300 * S, 1800 * S, 7200 * S, 21600 * S];

describe("webhookRetryAt", () => {
  test.each([
    [1, 10 * S],
    [2, 60 * S],
    [3, 300 * S],
    [4, 1800 * S],
    [5, 7200 * S],
    [6, 21600 * S],
    [20, 21600 * S],
  ])("after %p failures wait %p ms (no jitter at the midpoint)", (failures, wait) =>
    expect(webhookRetryAt(failures, 0, delays, null, () => 0.5)).toBe(wait),
  );

  test("jitter spreads ±10%", () => {
    expect(webhookRetryAt(1, 0, delays, null, () => 0)).toBe(9 * S);
    expect(webhookRetryAt(1, 0, delays, null, () => 1)).toBe(11 * S);
  });

  test("a longer Retry-After wins; a shorter one does not hurry us", () => {
    expect(webhookRetryAt(1, 0, delays, 120 * S, () => 0.5)).toBe(120 * S);
    expect(webhookRetryAt(3, 0, delays, 5 * S, () => 0.5)).toBe(300 * S);
  });
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-11-22T10:00:00Z");
  test.each([
    ["120", 120 * S],
    [" 5 ", 5 * S],
    ["Sun, 22 Nov 2026 10:01:00 GMT", 60 * S],
    ["Sun, 22 Nov 2026 09:00:00 GMT", 0],
    ["soon", null],
    [null, null],
  ])("%p → %p", (header, ms) => expect(retryAfterMs(header, now)).toBe(ms));
});
