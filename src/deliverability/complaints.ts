// The spam complaint rate of an outbound account: complaints (ARF feedback reports to our
// bounce addresses) per delivered message over the last 24 hours. Gmail and Yahoo refuse
// bulk senders above 0.3 %; the dashboard warns above outbound.complaint_rate_warning.
// Pure: the counts come from the hourly stats (series outbound_account).
import { HOUR_MS, hourOf } from "../stats/hourly.ts";

export interface ComplaintRate {
  outboundId: string;
  deliveries: number;
  complaints: number;
  /** complaints / deliveries; complaints about mail delivered before the window can exceed them: then 1. */
  rate: number;
}

/** The first hour the last 24 hours' counts start at (the current hour is the 24th). */
export const complaintWindowStartMs = (nowMs: number): number => hourOf(nowMs) - 23 * HOUR_MS;

/** One rate per outbound account with deliveries or complaints in the window. */
export function complaintRates(rows: readonly { outboundId: string; key: string; count: number }[]): ComplaintRate[] {
  const by = new Map<string, { deliveries: number; complaints: number }>();
  for (const r of rows) {
    const c = by.get(r.outboundId) ?? { deliveries: 0, complaints: 0 };
    if (r.key === "delivery") c.deliveries += r.count;
    else if (r.key === "complaint") c.complaints += r.count;
    by.set(r.outboundId, c);
  }
  return [...by.entries()]
    .map(([outboundId, c]) => ({ outboundId, ...c, rate: c.complaints === 0 ? 0 : c.complaints / Math.max(c.deliveries, c.complaints) }))
    .sort((a, b) => (a.outboundId < b.outboundId ? -1 : 1));
}

const percent = (x: number) => `${(x * 100).toFixed(2).replace(/\.?0+$/, "")} %`;

/** The overview's sentence for each rate above `threshold` (a fraction). */
export function complaintWarnings(rates: readonly ComplaintRate[], threshold: number): string[] {
  return rates
    .filter((r) => r.complaints > 0 && r.rate > threshold)
    .map(
      (r) =>
        `outbound account ${r.outboundId}: ${r.complaints} spam complaint${r.complaints === 1 ? "" : "s"} for ${r.deliveries} delivered in 24 h (${percent(r.rate)}, above ${percent(threshold)}); Gmail and Yahoo refuse bulk mail above 0.3 %: send only to people who asked, and make unsubscribing easy`,
    );
}
