// SQL for the hourly counts on PostgreSQL: the StatsRepo port (stats.port.ts) and the
// counting itself, the same semantics as stats.repo.ts on SQLite. Several nodes count
// into one row at once, so a count is added in the upsert itself (count = stats_hourly.count
// + EXCLUDED.count, under the row's lock), never read and written back.
import type { SQL } from "bun";
import { pgInteger } from "../store/pg-values.ts";
import { tally, type Count, type Series } from "./hourly.ts";
import type { StatsRepo } from "./stats.port.ts";
import { pgTablePurge } from "../store/pg-purge-window.ts";
import type { Purge } from "../store/purge-window.ts";

/** What is counted: one happening of an account's series key at a time. */
type Happening = { accountId: string; atMs: number; series: Series; key: string };

const rowKey = (c: Count): string => `${c.accountId}\u0000${c.hour}\u0000${c.series}\u0000${c.key}`;

/**
 * Adds the counts of `items` (countInto on SQLite), in `tx`: the caller's transaction that
 * stores what is counted. Rows are upserted in one order (account, hour, series, key) so
 * two nodes counting the same rows lock them in the same order and never deadlock.
 */
export async function pgCountInto(tx: SQL, items: Iterable<Happening>): Promise<void> {
  for (const c of tally(items).sort((x, y) => (rowKey(x) < rowKey(y) ? -1 : 1))) {
    await tx`INSERT INTO stats_hourly (account_id, hour, series, key, count) VALUES (${c.accountId}, ${c.hour}, ${c.series}, ${c.key}, ${c.count})
      ON CONFLICT (account_id, hour, series, key) DO UPDATE SET count = stats_hourly.count + EXCLUDED.count`;
  }
}

/** Adds outbound events to the counts (countEvents on SQLite), the account read from each event's message. */
export async function pgCountEvents(tx: SQL, events: readonly { messageId: string; kind: string; createdAtMs: number }[]): Promise<void> {
  if (events.length === 0) return;
  const ids = [...new Set(events.map((e) => e.messageId))];
  const rows: { id: string; account_id: string }[] = await tx`SELECT id, account_id FROM outbound_messages WHERE id = ANY(${ids})`;
  const accountOf = new Map(rows.map((r) => [r.id, r.account_id]));
  const items: Happening[] = [];
  for (const e of events) {
    const accountId = accountOf.get(e.messageId);
    if (accountId !== undefined) items.push({ accountId, atMs: e.createdAtMs, series: "outbound", key: e.kind });
  }
  await pgCountInto(tx, items);
}

// These read other features' tables (a read model for the overview); they write nothing.
export function createPgStatsRepo(sql: SQL): StatsRepo {
  return {
    async hourly(accountId, series, fromMs) {
      const rows: { hour: string; key: string; count: string }[] = await sql`SELECT hour, key, count FROM stats_hourly
        WHERE account_id = ${accountId} AND series = ${series} AND hour >= ${fromMs}`;
      return rows.map((r) => ({
        hour: pgInteger(r.hour, "stats_hourly.hour"),
        key: r.key,
        count: pgInteger(r.count, "stats_hourly.count"),
      }));
    },
    async queuedRecipients(accountId) {
      const [r]: { n: string }[] = await sql`SELECT COUNT(*) AS n FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id
        WHERE r.state = 'queued' AND m.account_id = ${accountId}`;
      return pgInteger(r!.n, "queued recipients");
    },
    async webhookBacklog(outboundIds) {
      const [r]: { n: string; oldest: string | null }[] = await sql`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_outbox
        WHERE state = 'pending' AND outbound_account_id = ANY(${[...outboundIds]})`;
      return {
        events: pgInteger(r!.n, "webhook backlog"),
        oldestMs: r!.oldest === null ? null : pgInteger(r!.oldest, "webhook_outbox.created_at"),
      };
    },
    async domainsNeedingCare(accountId) {
      const [r]: { unverified: string; failing: string }[] = await sql`SELECT
          COUNT(*) FILTER (WHERE verified_at IS NULL) AS unverified,
          COUNT(*) FILTER (WHERE verified_at IS NOT NULL AND failing_since IS NOT NULL) AS failing
        FROM sending_domains WHERE account_id = ${accountId} AND deleted_at IS NULL`;
      return { unverified: pgInteger(r!.unverified, "unverified domains"), failing: pgInteger(r!.failing, "failing domains") };
    },
  };
}

/** The retention purge (retention.stats): rows of hours older than the cutoff. Upserts keep no time order: the walk covers the table. */
export const createPgStatsPurge = (sql: SQL): Purge => pgTablePurge(sql, "stats_hourly", "hour", undefined, false);
