// The warm-up's daily cap (issue 29): day N's cap is daily[N], counted in UTC days from
// the start day; the first day's before the start; none once the list ends.
import { describe, expect, test } from "bun:test";
import { dayStartMs, nextDayStartMs, warmupCap, withinCap } from "../../src/outbound/delivery/warmup.ts";

const SCHEDULE = { startMs: Date.UTC(2026, 10, 1), daily: [50, 100, 200, 400] };
const at = (iso: string) => Date.parse(iso);

describe("warmupCap", () => {
  test.each([
    ["no warm-up", null, "2026-11-01T12:00:00Z", null],
    ["the start day, its first millisecond", SCHEDULE, "2026-11-01T00:00:00.000Z", 50],
    ["the start day, its last millisecond", SCHEDULE, "2026-11-01T23:59:59.999Z", 50],
    ["day 1", SCHEDULE, "2026-11-02T00:00:00Z", 100],
    ["day 2", SCHEDULE, "2026-11-03T08:00:00Z", 200],
    ["the last day of the list", SCHEDULE, "2026-11-04T23:59:59Z", 400],
    ["the day after the list ends: no cap", SCHEDULE, "2026-11-05T00:00:00Z", null],
    ["months later: no cap", SCHEDULE, "2027-03-01T00:00:00Z", null],
    ["the day before the start: the first day's cap", SCHEDULE, "2026-10-31T23:00:00Z", 50],
    ["a week before the start", SCHEDULE, "2026-10-25T00:00:00Z", 50],
    ["a cap of 0 holds all mail that day", { startMs: Date.UTC(2026, 10, 1), daily: [0, 10] }, "2026-11-01T10:00:00Z", 0],
  ])("%s", (_name, schedule, now, cap) => {
    expect(warmupCap(schedule, at(now))).toBe(cap);
  });
});

describe("withinCap", () => {
  test.each([
    ["room for all", 50, 10, 5, 5],
    ["room for some", 50, 48, 5, 2],
    ["cap reached", 50, 50, 5, 0],
    ["past the cap (the cap was lowered by a reload)", 50, 70, 5, 0],
    ["a cap of 0", 0, 0, 3, 0],
  ])("%s", (_name, cap, sent, want, got) => {
    expect(withinCap(cap, sent, want)).toBe(got);
  });
});

describe("days are UTC calendar days", () => {
  test.each([
    ["noon", "2026-11-02T12:00:00Z", "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"],
    ["midnight itself", "2026-11-02T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"],
    ["the last millisecond of a year", "2026-12-31T23:59:59.999Z", "2026-12-31T00:00:00Z", "2027-01-01T00:00:00Z"],
  ])("%s", (_name, now, start, next) => {
    expect([dayStartMs(at(now)), nextDayStartMs(at(now))]).toEqual([at(start), at(next)]);
  });
});
