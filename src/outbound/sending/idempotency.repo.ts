// SQL for idempotent sends (idempotency.ts) on SQLite: a key is claimed when its request
// starts, answered in the transaction that queues its message (recordAnswer, called by the
// outgoing queue's insert), released when the request fails, and purged by retention.
// createIdempotencyRepo is the IdempotencyRepo port (idempotency.port.ts); its statements
// run synchronously, the methods are async only to share the port with PostgreSQL
// (idempotency.pg.repo.ts). recordAnswer/answerRecorder run inside the outgoing queue's
// own synchronous SQLite transaction (pgRecordAnswer, and createPgIdempotencyPurge for the
// purge, are their PostgreSQL half).
import type { Database } from "bun:sqlite";
import { rowidPurge, type Purge, type WindowRow } from "../../store/purge-window.ts";
import type { Store } from "../../store/store.ts";
import { findKey, type KeyAnswer, type KeyFinding, type KeyRef, type StoredKey } from "./idempotency.ts";
import type { IdempotencyRepo } from "./idempotency.port.ts";

interface Row {
  request_sha256: string | null;
  answer: string | null;
  created_at: number;
}

export function createIdempotencyRepo(store: Store): IdempotencyRepo {
  // Claims need no fsync: one lost in a crash would be dropped at start-up anyway. The
  // answer is durable: it is committed with the message (recordAnswer).
  const db = store.logDb;
  const select = db.query<Row, [string, string, string]>(
    "SELECT request_sha256, answer, created_at FROM idempotency_keys WHERE outbound_account_id = ? AND scope = ? AND key = ?",
  );
  const insert = db.query(
    "INSERT OR REPLACE INTO idempotency_keys (outbound_account_id, scope, key, request_sha256, answer, created_at) VALUES (?, ?, ?, NULL, NULL, ?)",
  );
  const remove = db.query("DELETE FROM idempotency_keys WHERE outbound_account_id = ? AND scope = ? AND key = ? AND answer IS NULL");
  // IMMEDIATE: read then written, and the purge thread commits from its own connection.
  const claim = db.transaction((ref: KeyRef, nowMs: number, keepMs: number | null): KeyFinding => {
    const row = select.get(ref.outboundAccountId, ref.scope, ref.key);
    const stored: StoredKey | null = row ? { requestSha256: row.request_sha256, answer: row.answer, createdAtMs: row.created_at } : null;
    const found = findKey(stored, nowMs, keepMs);
    if (found.kind === "claim") insert.run(ref.outboundAccountId, ref.scope, ref.key, nowMs);
    return found;
  });
  return {
    claim: async (ref, nowMs, keepMs) => claim.immediate(ref, nowMs, keepMs),
    release: async (ref) => void remove.run(ref.outboundAccountId, ref.scope, ref.key),
    dropUnanswered: async () => dropUnansweredKeys(db),
  };
}

const dropUnansweredKeys = (db: Database): number => db.query("DELETE FROM idempotency_keys WHERE answer IS NULL").run().changes;

/**
 * The repository as the appliance starts: one process holds the data dir, so a claim without
 * an answer belongs to a request that is gone, and is dropped (its key is free again). The
 * drop runs synchronously, before anything can claim a key: the app's start-up is synchronous.
 */
export function idempotencyAtStart(store: Store): IdempotencyRepo {
  dropUnansweredKeys(store.logDb);
  return createIdempotencyRepo(store);
}

/** Stores a claimed key's answer; run inside the transaction that queues its message. */
export function recordAnswer(db: Database, a: KeyAnswer, nowMs: number): void {
  db.query(
    `INSERT INTO idempotency_keys (outbound_account_id, scope, key, request_sha256, answer, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (outbound_account_id, scope, key) DO UPDATE SET request_sha256 = excluded.request_sha256, answer = excluded.answer`,
  ).run(a.outboundAccountId, a.scope, a.key, a.requestSha256, a.answer, nowMs);
}

/** The idempotency side of the outgoing queue's ports (src/outbound/queue/ports.ts), on the queue's connection. */
export function answerRecorder(db: Database) {
  return { record: (answer: KeyAnswer, nowMs: number) => recordAnswer(db, answer, nowMs) };
}

/** The retention purge: answered keys created before the cutoff; a claim in flight is kept. */
export function createIdempotencyPurge(store: Store): Purge {
  const db = store.logDb;
  const window = db.query<WindowRow, [number, number]>(
    "SELECT rowid, created_at AS at, answer IS NULL AS keep FROM idempotency_keys WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const remove = db.query("DELETE FROM idempotency_keys WHERE rowid IN (SELECT value FROM json_each(?))");
  return rowidPurge(db, window, (rowids) => remove.run(rowids));
}
