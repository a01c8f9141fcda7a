// The sliding window that several nodes count in the database (rate-limit.pg.repo.ts),
// approximated from two fixed windows: calls allowed in the current window (aligned to a
// multiple of its length since the epoch) plus the previous window's calls weighted by how
// much of it still lies within one window length of now, as if they had come evenly:
//
//   estimate = previous × (windowMs − elapsedMs) / windowMs + current
//
// Why not exact: an exact window needs every counted call's time (the limit's worth of
// rows or array entries per key, rewritten at each call), while this is one row per key
// and window, changed by one atomic upsert whatever the limit. The price, documented in
// docs/api.md (Rate limits): no fixed window ever holds more than the limit, but calls
// bunched at the end of one window and spread over the next can reach up to twice the
// limit within one window length. Everything is in integers (ms), scaled by windowMs, so
// the SQL's check and this file agree exactly.
import type { RateLimit } from "../config/units.ts";
import type { RateDecision } from "./rate-limit.ts";

/** Calls counted in the previous and the current fixed window. */
export interface WindowCounts {
  previous: number;
  current: number;
}

/** The fixed window `nowMs` is in: its start and how far into it `nowMs` is. */
export function fixedWindow(nowMs: number, windowMs: number): { startMs: number; elapsedMs: number } {
  const startMs = Math.floor(nowMs / windowMs) * windowMs;
  return { startMs, elapsedMs: nowMs - startMs };
}

/** The estimate × windowMs (an integer), `elapsedMs` into the current window. */
const scaledEstimate = (c: WindowCounts, windowMs: number, elapsedMs: number): number =>
  c.previous * (windowMs - elapsedMs) + c.current * windowMs;

/** Whether one more call fits: the check the database makes in the same statement that counts it. */
export const fitsOneMore = (c: WindowCounts, rate: RateLimit, elapsedMs: number): boolean =>
  scaledEstimate({ previous: c.previous, current: c.current + 1 }, rate.windowMs, elapsedMs) <= rate.limit * rate.windowMs;

/**
 * Milliseconds from `elapsedMs` until the estimate is at most `target` calls, with no
 * further calls: the previous window's weight fades during the current one, and once the
 * current window ends its calls become the previous ones and fade in turn.
 */
export function msUntilEstimateAtMost(c: WindowCounts, windowMs: number, elapsedMs: number, target: number): number {
  if (scaledEstimate(c, windowMs, elapsedMs) <= target * windowMs) return 0;
  // Within this window: previous × (windowMs − t) ≤ (target − current) × windowMs.
  if (c.current <= target) return Math.ceil(windowMs - ((target - c.current) * windowMs) / c.previous) - elapsedMs;
  // In the next window (t from this window's start): current × (2 windowMs − t) ≤ target × windowMs.
  return Math.ceil(2 * windowMs - (target * windowMs) / c.current) - elapsedMs;
}

/**
 * What a take answers, given the counts before it and whether the database counted it.
 * Allowed: `remaining` calls fit now, `resetSeconds` until one more does. Refused: the
 * seconds until one call fits (at least 1: counts read on another node's heels may be a
 * moment old).
 */
export function windowDecision(before: WindowCounts, rate: RateLimit, elapsedMs: number, allowed: boolean): RateDecision {
  const { limit, windowMs } = rate;
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  if (!allowed) {
    return { allowed, limit, remaining: 0, resetSeconds: seconds(msUntilEstimateAtMost(before, windowMs, elapsedMs, limit - 1)) };
  }
  const after = { previous: before.previous, current: before.current + 1 };
  const used = Math.ceil(scaledEstimate(after, windowMs, elapsedMs) / windowMs);
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - used),
    resetSeconds: seconds(msUntilEstimateAtMost(after, windowMs, elapsedMs, used - 1)),
  };
}
