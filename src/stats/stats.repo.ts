// SQL for the hourly counts on SQLite. Counting runs inside the caller's
// transaction, the one that stores the statuses or events counted: a chart never counts
// what was not stored, nor misses what was. createStatsRepo is the StatsRepo port
// (stats.port.ts), async only to share it with PostgreSQL (stats.pg.repo.ts); countInto
// and countEvents are called in the statuses' and events' synchronous SQLite transactions
// (pgCountInto/pgCountEvents, and createPgStatsPurge, are their PostgreSQL half).
import type { Database } from "bun:sqlite";
import { rowidPurge, type Purge, type WindowRow } from "../store/purge-window.ts";
import type { Store } from "../store/store.ts";
import { tally, type Series } from "./hourly.ts";
import type { HourlyCount, StatsRepo } from "./stats.port.ts";

const UPSERT =
  "INSERT INTO stats_hourly (account_id, hour, series, key, count) VALUES (?, ?, ?, ?, ?) ON CONFLICT (account_id, hour, series, key) DO UPDATE SET count = count + excluded.count";

/** Adds the counts of `items` (grouped by hour first: one statement per group, not per item). */
export function countInto(db: Database, items: Iterable<{ accountId: string; atMs: number; series: Series; key: string }>): void {
  const upsert = db.query(UPSERT);
  for (const c of tally(items)) upsert.run(c.accountId, c.hour, c.series, c.key, c.count);
}

/**
 * Adds outbound events to the counts; the account is read from each event's message.
 * Kinds outside the chart (registration, dispatch...) are left out by the reader, not here:
 * they are few and may be charted later.
 */
export function countEvents(db: Database, events: readonly { messageId: string; kind: string; createdAtMs: number }[]): void {
  if (events.length === 0) return;
  const accountOf = db.query<{ account_id: string }, [string]>("SELECT account_id FROM outbound_messages WHERE id = ?");
  const items: { accountId: string; atMs: number; series: Series; key: string }[] = [];
  for (const e of events) {
    const m = accountOf.get(e.messageId);
    if (m) items.push({ accountId: m.account_id, atMs: e.createdAtMs, series: "outbound", key: e.kind });
  }
  countInto(db, items);
}

// These read other features' tables (a read model for the overview); they write nothing.
export function createStatsRepo(store: Store): StatsRepo {
  const { db } = store;
  const select = db.query<HourlyCount, [string, string, number]>(
    "SELECT hour, key, count FROM stats_hourly WHERE account_id = ? AND series = ? AND hour >= ?",
  );
  // From the queued entries of the due index to their messages: the queue is short next to the messages kept.
  const queued = db.query<{ n: number }, [string]>(
    "SELECT COUNT(*) AS n FROM outbound_recipients r CROSS JOIN outbound_messages m ON m.id = r.message_id WHERE r.state = 'queued' AND m.account_id = ?",
  );
  const backlog = db.query<{ n: number; oldest: number | null }, [string]>(
    "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_outbox WHERE state = 'pending' AND outbound_account_id IN (SELECT value FROM json_each(?))",
  );
  const domains = db.query<{ unverified: number; failing: number }, [string]>(
    "SELECT COALESCE(SUM(verified_at IS NULL), 0) AS unverified, COALESCE(SUM(verified_at IS NOT NULL AND failing_since IS NOT NULL), 0) AS failing FROM sending_domains WHERE account_id = ? AND deleted_at IS NULL",
  );
  return {
    hourly: async (accountId, series, fromMs) => select.all(accountId, series, fromMs),
    queuedRecipients: async (accountId) => queued.get(accountId)!.n,
    webhookBacklog: async (outboundIds) => {
      const r = backlog.get(JSON.stringify(outboundIds))!;
      return { events: r.n, oldestMs: r.oldest };
    },
    domainsNeedingCare: async (accountId) => domains.get(accountId)!,
  };
}

/** The retention purge (retention.stats): rows of hours older than the cutoff. Upserts keep no time order: the walk covers the table. */
export function createStatsPurge(store: Store): Purge {
  const db = store.logDb;
  const window = db.query<WindowRow, [number, number]>(
    "SELECT rowid, hour AS at, 0 AS keep FROM stats_hourly WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const remove = db.query("DELETE FROM stats_hourly WHERE rowid IN (SELECT value FROM json_each(?))");
  return rowidPurge(db, window, (rowids) => remove.run(rowids), false);
}
