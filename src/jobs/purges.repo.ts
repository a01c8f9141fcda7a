// The retention purges of the tables whose repositories are written once for both engines
// (MTA-STS policies, idempotency keys, webhook POSTs, hourly counts, message events), on
// SQLite. A purge is engine
// mechanics, not a noun's SQL: here it walks a table in rowid order on the purge thread's
// own connection (purge-worker.ts) and deletes a window's rows by rowid as a JSON array,
// while PostgreSQL (purges.pg.repo.ts) walks its identity column on the event loop and
// deletes in one statement that checks each row again. purge-window.ts has the walk.
import { rowidPurge, type Purge, type WindowRow } from "../store/purge-window.ts";
import type { Store } from "../store/store.ts";

/**
 * The purge of a table whose rows need nothing else: a row goes once its `at` column is
 * older than the cutoff, unless `keep` (an SQL expression over the row's own columns, from
 * the code) holds. Through the log connection: a purge lost in a power cut is done again.
 */
function tablePurge(store: Store, table: string, at: string, keep = "0", timeOrdered = true): Purge {
  const db = store.logDb;
  const window = db.query<WindowRow, [number, number]>(
    `SELECT rowid, ${at} AS at, ${keep} AS keep FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?`,
  );
  const remove = db.query(`DELETE FROM ${table} WHERE rowid IN (SELECT value FROM json_each(?))`);
  return rowidPurge(db, window, (rowids) => remove.run(rowids), timeOrdered);
}

/**
 * MTA-STS policies that expired before the cutoff (one that expired is never applied; a
 * domain that still publishes one gets it fetched again). A refresh rewrites a row in
 * place, so the table is not in expiry order: the walk covers all of it.
 */
export const createStsPurge = (store: Store): Purge => tablePurge(store, "mta_sts_policies", "expires_at", "0", false);

/** Answered idempotency keys created before the cutoff; a claim in flight is kept. */
export const createIdempotencyPurge = (store: Store): Purge => tablePurge(store, "idempotency_keys", "created_at", "answer IS NULL");

/** Webhook POSTs made before the cutoff (retention.webhook_posts). */
export const createWebhookPostPurge = (store: Store): Purge => tablePurge(store, "webhook_posts", "created_at");

/** Sending domains' verification events created before the cutoff (history: a purge lost in a power cut is done again). */
export const createDomainEventPurge = (store: Store): Purge => tablePurge(store, "sending_domain_events", "created_at");

/** Hourly counts of hours older than the cutoff (retention.stats). Upserts keep no time order: the walk covers the table. */
export const createStatsPurge = (store: Store): Purge => tablePurge(store, "stats_hourly", "hour", "0", false);

/**
 * The events retention: deletes events created before the cutoff, with their webhook
 * bookkeeping, but never one still waiting to be posted (the dispatcher reads the event
 * when it posts) nor one of a recipient still queued (its delivery is not over). Through
 * the log connection: a purge lost in a power cut is done again at the next run.
 */
export function createEventPurge(store: Store): Purge {
  const db = store.logDb;
  const needed =
    "EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.event_id = e.id AND o.state = 'pending') OR EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.id = e.recipient_id AND r.state IN ('queued', 'held'))";
  const window = db.query<WindowRow, [number, number]>(
    `SELECT e.rowid AS rowid, e.created_at AS at, (${needed}) AS keep FROM message_events e WHERE e.rowid > ? ORDER BY e.rowid LIMIT ?`,
  );
  const removeOutbox = db.query(
    "DELETE FROM webhook_outbox WHERE event_id IN (SELECT id FROM message_events WHERE rowid IN (SELECT value FROM json_each(?)))",
  );
  const removeEvents = db.query("DELETE FROM message_events WHERE rowid IN (SELECT value FROM json_each(?))");
  return rowidPurge(db, window, (rowids) => {
    removeOutbox.run(rowids);
    removeEvents.run(rowids);
  });
}
