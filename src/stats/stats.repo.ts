// SQL for the hourly counts, written once for both engines. Counting runs inside the
// caller's transaction, the one that stores the statuses or events counted (countInto and
// countEvents are Scripts: synchronous in SQLite's transactions, awaited in PostgreSQL's):
// a chart never counts what was not stored, nor misses what was. Several nodes may count
// into one row at once, so a count is added in the upsert itself (count = count +
// excluded.count, under the row's lock), never read and written back. createStatsRepo is
// the StatsRepo port (stats.port.ts); its retention purge is src/jobs/purges.repo.ts's.
import type { Db } from "../store/db/db.ts";
import { orderedJoin, toInt, toIntOrNull } from "../store/db/dialect.ts";
import { all, runEach, type Script } from "../store/db/script.ts";
import { inList, join, type Sql, sql } from "../store/db/sql.ts";
import { type Count, type Series, tally } from "./hourly.ts";
import type { StatsRepo } from "./stats.port.ts";

/** What is counted: one happening of an account's series key at a time. */
type Happening = { accountId: string; atMs: number; series: Series; key: string };

const rowKey = (c: Count): string => `${c.accountId}\u0000${c.hour}\u0000${c.series}\u0000${c.key}`;

/**
 * Adds the counts of `items`, grouped by hour first (one statement per group, not per
 * item). Rows are upserted in one order (account, hour, series, key) so two nodes counting
 * the same rows lock them in the same order and never deadlock.
 */
export function* countInto(items: Iterable<Happening>): Script<void> {
  yield* runEach(countStatements(items));
}

/** countInto's statements, for a caller that sends them with its own (runEach). */
export function countStatements(items: Iterable<Happening>): Sql[] {
  const counts = tally(items).sort((x, y) => (rowKey(x) < rowKey(y) ? -1 : 1));
  // One multi-row upsert per UPSERT_ROWS counts (a delivery's two counts in one statement);
  // rows are locked in VALUES order, so the order above holds.
  const statements: Sql[] = [];
  for (let i = 0; i < counts.length; i += UPSERT_ROWS) {
    const rows = counts.slice(i, i + UPSERT_ROWS).map((c) => sql`(${c.accountId}, ${c.hour}, ${c.series}, ${c.key}, ${c.count})`);
    statements.push(sql`INSERT INTO stats_hourly (account_id, hour, series, key, count) VALUES ${join(rows, ", ")}
      ON CONFLICT (account_id, hour, series, key) DO UPDATE SET count = stats_hourly.count + excluded.count`);
  }
  return statements;
}

/** Counts per upsert statement: 5 parameters each, far below SQLite's and PostgreSQL's limits on parameters. */
const UPSERT_ROWS = 500;

/**
 * Adds outbound events to the counts; the account is read from each event's message.
 * Kinds outside the chart (registration, dispatch...) are left out by the reader, not here:
 * they are few and may be charted later.
 */
export function* countEvents(events: readonly { messageId: string; kind: string; createdAtMs: number }[]): Script<void> {
  if (events.length === 0) return;
  const ids = [...new Set(events.map((e) => e.messageId))];
  const rows = yield* all<{ id: string } & MessageAccounts>(
    sql`SELECT id, account_id, outbound_account_id FROM outbound_messages WHERE ${inList("id", ids)}`,
  );
  yield* runEach(eventCountStatements(events, new Map(rows.map((r) => [r.id, r]))));
}

/** The accounts of an event's message, as eventCountStatements needs them. */
export interface MessageAccounts {
  account_id: string;
  outbound_account_id: string;
}

/**
 * The upserts that add outbound events to the counts, each event's accounts read from
 * `messageOf` (recordEvents reads them with the messages' webhook endpoints): for a caller
 * that sends them with its own (runEach). An event whose message is not in it is not counted.
 */
export function eventCountStatements(
  events: readonly { messageId: string; kind: string; createdAtMs: number }[],
  messageOf: ReadonlyMap<string, MessageAccounts>,
): Sql[] {
  const items: Happening[] = [];
  for (const e of events) {
    const m = messageOf.get(e.messageId);
    if (m === undefined) continue;
    items.push({ accountId: m.account_id, atMs: e.createdAtMs, series: "outbound", key: e.kind });
    // The complaint rate's two counts, per outbound account.
    if (e.kind === "delivery" || e.kind === "complaint")
      items.push({ accountId: m.outbound_account_id, atMs: e.createdAtMs, series: "outbound_account", key: e.kind });
  }
  return countStatements(items);
}

// These read other features' tables (a read model for the overview); they write nothing.
export function createStatsRepo(db: Db): StatsRepo {
  return {
    async hourly(accountId, series, fromMs) {
      const rows = await db.all<{ hour: unknown; key: string; count: unknown }>(sql`SELECT hour, key, count FROM stats_hourly
        WHERE account_id = ${accountId} AND series = ${series} AND hour >= ${fromMs}`);
      return rows.map((r) => ({ hour: toInt(r.hour, "stats_hourly.hour"), key: r.key, count: toInt(r.count, "stats_hourly.count") }));
    },
    async outboundAccountCounts(outboundIds, fromMs) {
      if (outboundIds.length === 0) return [];
      const rows = await db.all<{ account_id: string; key: string; n: unknown }>(sql`SELECT account_id, key, SUM(count) AS n
        FROM stats_hourly WHERE ${inList("account_id", outboundIds)} AND series = 'outbound_account' AND hour >= ${fromMs}
        GROUP BY account_id, key`);
      return rows.map((r) => ({ outboundId: r.account_id, key: r.key, count: toInt(r.n, "stats_hourly.count") }));
    },
    async queuedRecipients(accountId) {
      // From the queued entries of the due index to their messages: the queue is short next to the messages kept.
      const r = await db.get<{
        n: unknown;
      }>(sql`SELECT COUNT(*) AS n FROM outbound_recipients r ${orderedJoin} outbound_messages m ON m.id = r.message_id
        WHERE r.state = 'queued' AND m.account_id = ${accountId}`);
      return toInt(r!.n, "queued recipients");
    },
    async webhookBacklog(outboundIds) {
      const r = await db.get<{ n: unknown; oldest: unknown }>(sql`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_outbox
        WHERE state = 'pending' AND ${inList("outbound_account_id", outboundIds)}`);
      return { events: toInt(r!.n, "webhook backlog"), oldestMs: toIntOrNull(r!.oldest, "webhook_outbox.created_at") };
    },
    async domainsNeedingCare(accountId) {
      const r = await db.get<{ unverified: unknown; failing: unknown }>(sql`SELECT
          COUNT(*) FILTER (WHERE verified_at IS NULL) AS unverified,
          COUNT(*) FILTER (WHERE verified_at IS NOT NULL AND failing_since IS NOT NULL) AS failing
        FROM sending_domains WHERE account_id = ${accountId} AND deleted_at IS NULL`);
      return { unverified: toInt(r!.unverified, "unverified domains"), failing: toInt(r!.failing, "failing domains") };
    },
  };
}
