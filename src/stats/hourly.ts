// The dashboard's charts: counts per hour, summed into buckets. Pure: what the store keeps
// (stats.repo.ts) and what the API answers (api/stats.ts) meet here.

export const HOUR_MS = 3_600_000;

/** The series counted, and the keys each chart shows (in this order). */
export const SERIES = {
  inbound: ["successful", "rejected", "delayed"],
  outbound: ["delivery", "bounce", "deferral", "open", "click"],
  // Per outbound account (its ID in account_id), for the complaint rate (src/deliverability/).
  outbound_account: ["delivery", "complaint"],
} as const;
export type Series = keyof typeof SERIES;

export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;

export interface Count {
  accountId: string;
  hour: number;
  series: Series;
  key: string;
  count: number;
}

/** Sums happenings into one Count per (account, hour, series, key): one upsert each. */
export function tally(items: Iterable<{ accountId: string; atMs: number; series: Series; key: string }>): Count[] {
  const byKey = new Map<string, Count>();
  for (const i of items) {
    const hour = hourOf(i.atMs);
    const k = `${i.accountId}\u0000${hour}\u0000${i.series}\u0000${i.key}`;
    const c = byKey.get(k);
    if (c) c.count++;
    else byKey.set(k, { accountId: i.accountId, hour, series: i.series, key: i.key, count: 1 });
  }
  return [...byKey.values()];
}

export interface Period {
  /** How far back the chart goes. */
  spanMs: number;
  /** One bar per bucket. */
  bucketMs: number;
}

/** The periods the overview shows: the last 24 hours by hour, the last 7 days by 6 hours. */
export const PERIODS = {
  "24h": { spanMs: 24 * HOUR_MS, bucketMs: HOUR_MS },
  "7d": { spanMs: 7 * 24 * HOUR_MS, bucketMs: 6 * HOUR_MS },
} satisfies Record<string, Period>;
export type PeriodName = keyof typeof PERIODS;

export interface Bucket {
  atMs: number;
  counts: Record<string, number>;
}

/**
 * The buckets of `period` ending with the one that holds `nowMs` (aligned to whole buckets
 * in UTC), each with a count for every key of `series` (0 when none), from hourly rows.
 */
export function buckets(rows: readonly Pick<Count, "hour" | "key" | "count">[], series: Series, period: Period, nowMs: number): Bucket[] {
  const last = Math.floor(nowMs / period.bucketMs) * period.bucketMs;
  const n = Math.round(period.spanMs / period.bucketMs);
  const first = last - (n - 1) * period.bucketMs;
  const out: Bucket[] = Array.from({ length: n }, (_, i) => ({
    atMs: first + i * period.bucketMs,
    counts: Object.fromEntries(SERIES[series].map((k) => [k, 0])),
  }));
  for (const r of rows) {
    const i = Math.floor((r.hour - first) / period.bucketMs);
    if (i < 0 || i >= n || !(r.key in out[i]!.counts)) continue;
    out[i]!.counts[r.key]! += r.count;
  }
  return out;
}

/** When the rows a period needs start: the first hour of its first bucket. */
export const periodStartMs = (period: Period, nowMs: number): number =>
  Math.floor(nowMs / period.bucketMs) * period.bucketMs - (Math.round(period.spanMs / period.bucketMs) - 1) * period.bucketMs;
