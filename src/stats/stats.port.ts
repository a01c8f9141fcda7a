// The port through which the dashboard's overview (api/stats.ts) reads the hourly counts
// and the other features' tables it sums up, whatever the engine: stats.repo.ts implements
// it once for SQLite and PostgreSQL, and one contract test
// (test/stats/stats-repo.contract.test.ts) runs the same cases on both. The counts are
// written inside the transaction that stores what they count (countInto, a Script), not
// through this port.
import type { Count, Series } from "./hourly.ts";

/** One hour's count of a series' key. */
export type HourlyCount = Pick<Count, "hour" | "key" | "count">;

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface StatsRepo {
  /** The hourly rows of an account's series from `fromMs` on, in no particular order. */
  hourly(accountId: string, series: Series, fromMs: number): Promise<HourlyCount[]>;
  /** Deliveries and complaints of these outbound accounts since `fromMs` (whole hours), summed per account and key. */
  outboundAccountCounts(
    outboundIds: readonly string[],
    fromMs: number,
  ): Promise<{ outboundId: string; key: "delivery" | "complaint" | string; count: number }[]>;
  /** Recipients of the account's messages waiting for a delivery attempt. */
  queuedRecipients(accountId: string): Promise<number>;
  /** Events of these outbound accounts waiting for their webhook receiver, and the time of the oldest. */
  webhookBacklog(outboundIds: readonly string[]): Promise<{ events: number; oldestMs: number | null }>;
  /** The account's sending domains that are not verified, and those whose records fail (grace period). */
  domainsNeedingCare(accountId: string): Promise<{ unverified: number; failing: number }>;
}
