// SQL for inbound mail waiting for its target: the InboundQueueRepo port
// (inbound-queue.port.ts), written once for both engines against a Db. The claim is one
// UPDATE whose WHERE checks the lease again: PostgreSQL re-evaluates it on the row a
// racing node has just leased (and skips it), SQLite has one writer at a time.
import type { Db } from "../../store/db/db.ts";
import { forUpdateSkipLocked, toInt, toIntOrNull } from "../../store/db/dialect.ts";
import { sql } from "../../store/db/sql.ts";
import type { InboundQueueRepo, QueuedEntry, QueuedFacts } from "./inbound-queue.port.ts";

interface Row {
  id: string;
  account_id: string;
  address_id: string;
  status_ids: string;
  facts: string;
  trace_bytes: unknown;
  size: unknown;
  attempts: unknown;
  created_at: unknown;
  next_attempt_at: unknown;
  last_response: string | null;
}

const COLUMNS = sql`id, account_id, address_id, status_ids, facts, trace_bytes, size, attempts, created_at, next_attempt_at, last_response`;

const fromRow = (r: Row): QueuedEntry => ({
  id: r.id,
  accountId: r.account_id,
  addressId: r.address_id,
  statusIds: JSON.parse(r.status_ids) as string[],
  facts: JSON.parse(r.facts) as QueuedFacts,
  traceBytes: toInt(r.trace_bytes, "inbound_queue.trace_bytes"),
  sizeBytes: toInt(r.size, "inbound_queue.size"),
  attempts: toInt(r.attempts, "inbound_queue.attempts"),
  createdAtMs: toInt(r.created_at, "inbound_queue.created_at"),
  nextAttemptAtMs: toInt(r.next_attempt_at, "inbound_queue.next_attempt_at"),
  lastResponse: r.last_response,
});

export function createInboundQueueRepo(db: Db): InboundQueueRepo {
  return {
    async insert(m) {
      await db.run(sql`INSERT INTO inbound_queue (id, account_id, address_id, status_ids, facts, message, trace_bytes, size, attempts, created_at, next_attempt_at, last_response)
        VALUES (${m.id}, ${m.accountId}, ${m.addressId}, ${JSON.stringify(m.statusIds)}, ${JSON.stringify(m.facts)}, ${m.message}, ${m.traceBytes},
        ${m.sizeBytes}, ${m.attempts}, ${m.createdAtMs}, ${m.nextAttemptAtMs}, ${m.lastResponse})`);
    },
    async queuedBytes(accountId) {
      const row = await db.get<{ n: unknown }>(sql`SELECT COALESCE(SUM(size), 0) AS n FROM inbound_queue WHERE account_id = ${accountId}`);
      return toInt(row?.n ?? 0, "inbound_queue.size");
    },
    async claimDue(holder, nowMs, leaseMs, limit) {
      const free = sql`next_attempt_at <= ${nowMs} AND (lease_until IS NULL OR lease_until <= ${nowMs})`;
      const rows = await db.all<Row>(sql`UPDATE inbound_queue SET leased_by = ${holder}, lease_until = ${nowMs + leaseMs}
        WHERE id IN (SELECT id FROM inbound_queue WHERE ${free} ORDER BY next_attempt_at LIMIT ${limit} ${forUpdateSkipLocked}) AND ${free}
        RETURNING ${COLUMNS}`);
      return rows.map(fromRow).sort((a, b) => a.nextAttemptAtMs - b.nextAttemptAtMs);
    },
    async message(id) {
      const row = await db.get<{ message: Uint8Array }>(sql`SELECT message FROM inbound_queue WHERE id = ${id}`);
      return row ? row.message : null;
    },
    async finish(id, holder) {
      return (await db.run(sql`DELETE FROM inbound_queue WHERE id = ${id} AND leased_by = ${holder}`)).changes === 1;
    },
    async reschedule(id, holder, attempts, nextAttemptAtMs, lastResponse) {
      const res = await db.run(sql`UPDATE inbound_queue SET attempts = ${attempts}, next_attempt_at = ${nextAttemptAtMs},
        last_response = ${lastResponse}, leased_by = NULL, lease_until = NULL WHERE id = ${id} AND leased_by = ${holder}`);
      return res.changes === 1;
    },
    async releaseHeld(holder) {
      return (await db.run(sql`UPDATE inbound_queue SET leased_by = NULL, lease_until = NULL WHERE leased_by = ${holder}`)).changes;
    },
    async tryNow(accountId, id, nowMs) {
      const res = await db.run(sql`UPDATE inbound_queue SET next_attempt_at = ${nowMs} WHERE id = ${id} AND account_id = ${accountId}`);
      return res.changes === 1;
    },
    async list(accountId, limit) {
      const rows = await db.all<Row>(
        sql`SELECT ${COLUMNS} FROM inbound_queue WHERE account_id = ${accountId} ORDER BY created_at, id LIMIT ${limit}`,
      );
      return rows.map(fromRow);
    },
    async depth() {
      const row = await db.get<{ n: unknown; oldest: unknown }>(sql`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM inbound_queue`);
      return {
        count: toInt(row?.n ?? 0, "inbound_queue count"),
        oldestCreatedAtMs: toIntOrNull(row?.oldest ?? null, "inbound_queue.created_at"),
      };
    },
  };
}
