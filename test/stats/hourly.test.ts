// The overview's counts (src/stats/hourly.ts) as tables.
import { describe, expect, test } from "bun:test";
import { buckets, HOUR_MS, periodStartMs, PERIODS, tally } from "../../src/stats/hourly.ts";

const T0 = Date.parse("2026-11-24T10:00:00Z");

describe("tally", () => {
  test("one count per account, hour, series and key", () => {
    const counts = tally([
      { accountId: "a", atMs: T0 + 1, series: "inbound", key: "successful" },
      { accountId: "a", atMs: T0 + 59 * 60_000, series: "inbound", key: "successful" },
      { accountId: "a", atMs: T0 + HOUR_MS, series: "inbound", key: "successful" },
      { accountId: "a", atMs: T0, series: "inbound", key: "rejected" },
      { accountId: "b", atMs: T0, series: "inbound", key: "successful" },
      { accountId: "a", atMs: T0, series: "outbound", key: "successful" },
    ]);
    expect(counts).toEqual([
      { accountId: "a", hour: T0, series: "inbound", key: "successful", count: 2 },
      { accountId: "a", hour: T0 + HOUR_MS, series: "inbound", key: "successful", count: 1 },
      { accountId: "a", hour: T0, series: "inbound", key: "rejected", count: 1 },
      { accountId: "b", hour: T0, series: "inbound", key: "successful", count: 1 },
      { accountId: "a", hour: T0, series: "outbound", key: "successful", count: 1 },
    ]);
  });
});

describe("buckets", () => {
  const now = T0 + 30 * 60_000;
  test.each([
    ["24h: 24 hourly buckets, the last holds now", PERIODS["24h"], 24, T0 - 23 * HOUR_MS],
    ["7d: 28 buckets of 6 hours aligned in UTC", PERIODS["7d"], 28, Date.parse("2026-11-24T06:00:00Z") - 27 * 6 * HOUR_MS],
  ])("%s", (_, period, n, first) => {
    const out = buckets([], "inbound", period, now);
    expect(out.length).toBe(n);
    expect(out[0]!.atMs).toBe(first);
    expect(periodStartMs(period, now)).toBe(first);
    expect(out.at(-1)!.atMs).toBeLessThanOrEqual(now);
    expect(out.at(-1)!.atMs + period.bucketMs).toBeGreaterThan(now);
    expect(out[0]!.counts).toEqual({ successful: 0, rejected: 0, delayed: 0 });
  });

  test("hours are summed into their bucket; hours outside the period and unknown keys are left out", () => {
    const rows = [
      { hour: T0, key: "delivery", count: 3 },
      { hour: Date.parse("2026-11-24T07:00:00Z"), key: "delivery", count: 2 },
      { hour: Date.parse("2026-11-24T06:00:00Z"), key: "bounce", count: 1 },
      { hour: Date.parse("2026-11-24T05:00:00Z"), key: "delivery", count: 100 },
      { hour: T0 - 8 * 24 * HOUR_MS, key: "delivery", count: 1000 },
      { hour: T0, key: "registration", count: 7 },
    ];
    const out = buckets(rows, "outbound", PERIODS["7d"], now);
    expect(out.at(-1)!.counts).toEqual({ delivery: 5, bounce: 1, deferral: 0, open: 0, click: 0 });
    expect(out.at(-2)!.counts.delivery).toBe(100);
    expect(out.reduce((n, b) => n + b.counts.delivery!, 0)).toBe(105);
  });
});
