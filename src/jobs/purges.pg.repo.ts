// The retention purges of the tables whose repositories are written once for both engines,
// on PostgreSQL (purges.repo.ts says why a purge is engine mechanics): the walk goes by the
// table's identity column `rowid` on the event loop, and each window is deleted in one
// statement that checks the age and `keep` again (pg-purge-window.ts).
import type { SQL } from "bun";
import { pgRowidPurge, pgTablePurge } from "../store/pg-purge-window.ts";
import { pgInteger } from "../store/pg-values.ts";
import type { Purge } from "../store/purge-window.ts";

/** createStsPurge on PostgreSQL; the delete checks the expiry again, so a policy refreshed meanwhile stays. */
export const createPgStsPurge = (sql: SQL): Purge => pgTablePurge(sql, "mta_sts_policies", "expires_at", undefined, false);

/** createIdempotencyPurge on PostgreSQL. */
export const createPgIdempotencyPurge = (sql: SQL): Purge => pgTablePurge(sql, "idempotency_keys", "created_at", sql`answer IS NULL`);

/** createWebhookPostPurge on PostgreSQL. */
export const createPgWebhookPostPurge = (sql: SQL): Purge => pgTablePurge(sql, "webhook_posts", "created_at");

/** createDomainEventPurge on PostgreSQL. */
export const createPgDomainEventPurge = (sql: SQL): Purge => pgTablePurge(sql, "sending_domain_events", "created_at");

/** createStatsPurge on PostgreSQL. */
export const createPgStatsPurge = (sql: SQL): Purge => pgTablePurge(sql, "stats_hourly", "hour", undefined, false);

// ---------------------------------------------------------------- message events

/**
 * The events retention (createEventPurge on SQLite): events created before the cutoff go
 * with their webhook bookkeeping, but never one still waiting to be posted nor one of a
 * recipient still queued. One statement per window, which checks that again on the rows
 * it deletes (pg-purge-window.ts).
 */
export function createPgEventPurge(sql: SQL): Purge {
  const needed = sql`EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.event_id = e.id AND o.state = 'pending') OR EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.id = e.recipient_id AND r.state IN ('queued', 'held'))`;
  return pgRowidPurge("message_events", {
    window: (afterRowid, limit) =>
      sql`SELECT e.rowid, e.created_at AS at, (${needed}) AS keep FROM message_events e WHERE e.rowid > ${afterRowid} ORDER BY e.rowid LIMIT ${limit}`,
    async remove(rowids, beforeMs) {
      const [row] =
        await sql`WITH gone AS (DELETE FROM message_events e WHERE e.rowid = ANY(${rowids}) AND e.created_at < ${beforeMs} AND NOT (${needed}) RETURNING e.id),
        bookkeeping AS (DELETE FROM webhook_outbox WHERE event_id IN (SELECT id FROM gone))
        SELECT COUNT(*) AS n FROM gone`;
      return pgInteger(row.n, "deleted");
    },
  });
}

/** The events feature's side of the sent messages' purge on PostgreSQL (PgPurgeEvents, src/outbound/queue/ports.ts), in the purge's transaction. */
export const pgEventRetention = {
  async pendingAmong(tx: SQL, messageIds: readonly string[]): Promise<Set<string>> {
    const rows: { id: string }[] =
      await tx`SELECT DISTINCT e.message_id AS id FROM message_events e JOIN webhook_outbox o ON o.event_id = e.id
      WHERE e.message_id = ANY(${[...messageIds]}) AND o.state = 'pending'`;
    return new Set(rows.map((r) => r.id));
  },
  async deleteOfMessages(tx: SQL, messageIds: readonly string[]): Promise<void> {
    const ids = [...messageIds];
    await tx`DELETE FROM webhook_outbox WHERE event_id IN (SELECT id FROM message_events WHERE message_id = ANY(${ids}))`;
    await tx`DELETE FROM message_events WHERE message_id = ANY(${ids})`;
  },
};
