// Warm-up of a new sending address (issue 29): a cap of recipients per destination per
// day, growing from a start day, as receivers expect of an IP they have not seen before.
// Pure. Days are UTC calendar days; day 0 is the schedule's start day. Before the start the
// first day's cap holds (the address is still cold); after the list ends there is no cap.
import type { WarmupSchedule } from "../../config/config.ts";

export const DAY_MS = 86_400_000;

/** Midnight UTC of the day `nowMs` is in. */
export const dayStartMs = (nowMs: number): number => Math.floor(nowMs / DAY_MS) * DAY_MS;

/** Midnight UTC of the next day: when the next day's cap opens. */
export const nextDayStartMs = (nowMs: number): number => dayStartMs(nowMs) + DAY_MS;

/** The warm-up day `nowMs` falls on: 0 on the start day, negative before it. */
export const warmupDay = (schedule: WarmupSchedule, nowMs: number): number => Math.floor((nowMs - schedule.startMs) / DAY_MS);

/** Recipients a destination may get from the address on the day of `nowMs`; null = no cap (warm-up over). */
export function warmupCap(schedule: WarmupSchedule | null, nowMs: number): number | null {
  if (!schedule) return null;
  const day = warmupDay(schedule, nowMs);
  if (day >= schedule.daily.length) return null;
  return schedule.daily[Math.max(0, day)]!;
}

/** How many of `want` recipients go now, given `cap` and what the day has `sent` so far. */
export const withinCap = (cap: number, sent: number, want: number): number => Math.max(0, Math.min(want, cap - sent));
