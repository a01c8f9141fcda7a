// SQL for the webhook outbox: batches of pending events per target (an outbound account's
// config webhook, or one of its endpoints: outbox.port.ts), in event order, one batch at a
// time per target, retried as the same batch until acknowledged.
// The port is in outbox.port.ts; outbox.pg.repo.ts is the PostgreSQL side. Engine-specific
// for the claim: here one process claims a batch in a transaction that holds the one write
// lock; on PostgreSQL nodes claim at once and an advisory lock per target keeps
// its batches in event order.
import { newId16 } from "../lib/ids.ts";
import { rowidPurge, type Purge, type WindowRow } from "../store/purge-window.ts";
import type { Store } from "../store/store.ts";
import { type Batch, metadataOf, type OutboxEvent } from "./outbox-event.ts";
import type { OutboxRepo } from "./outbox.port.ts";

interface Row {
  event_id: string;
  kind: string;
  email: string;
  message_id: string;
  outbound_account_id: string;
  account_id: string;
  created_at: number;
  details_json: string;
  metadata_json: string | null;
  attempts: number;
  batch_id: string | null;
}

export type { OutboxRepo } from "./outbox.port.ts";

export function createOutboxRepo(store: Store): OutboxRepo {
  const { db } = store;
  const select = `SELECT o.event_id, e.kind, r.email, o.message_id, o.outbound_account_id, o.account_id, e.created_at, e.details_json, m.metadata_json, o.attempts, o.batch_id
    FROM webhook_outbox o JOIN message_events e ON e.id = o.event_id JOIN outbound_recipients r ON r.id = e.recipient_id
      LEFT JOIN outbound_messages m ON m.id = o.message_id`;
  const distinctPending = db.query(`WITH RECURSIVE accounts(id) AS (
      SELECT MIN(target) FROM webhook_outbox WHERE state = 'pending'
      UNION ALL
      SELECT (SELECT MIN(target) FROM webhook_outbox WHERE state = 'pending' AND target > accounts.id) FROM accounts WHERE accounts.id IS NOT NULL
    ) SELECT id FROM accounts WHERE id IS NOT NULL`);
  const firstPending = db.query(
    "SELECT next_attempt_at, batch_id, attempts FROM webhook_outbox WHERE state = 'pending' AND target = ? ORDER BY seq LIMIT 1",
  );
  const toEvent = (r: Row): OutboxEvent => ({
    id: r.event_id,
    kind: r.kind,
    recipient: r.email,
    messageId: r.message_id,
    outboundAccountId: r.outbound_account_id,
    accountId: r.account_id,
    createdAtMs: r.created_at,
    details: JSON.parse(r.details_json),
    ...metadataOf(r.metadata_json),
  });
  /** The target's batch due now (see claimBatch), in the caller's transaction; its rows are then due at `untilMs` (the lease). */
  const take = (target: string, nowMs: number, maxEvents: number, untilMs: number): Batch | null => {
    const head = firstPending.get(target) as { next_attempt_at: number; batch_id: string | null; attempts: number } | null;
    if (!head) return null;
    if (head.batch_id !== null) {
      if (head.next_attempt_at > nowMs) return null;
      db.query("UPDATE webhook_outbox SET next_attempt_at = ? WHERE batch_id = ? AND state = 'pending'").run(untilMs, head.batch_id);
      const retrying = db.query(`${select} WHERE o.batch_id = ? AND o.state = 'pending' ORDER BY o.seq`).all(head.batch_id) as Row[];
      return { id: head.batch_id, attempts: head.attempts, events: retrying.map(toEvent) };
    }
    const fresh = db
      .query(
        `${select} WHERE o.target = ? AND o.state = 'pending' AND o.batch_id IS NULL AND o.next_attempt_at <= ? ORDER BY o.seq LIMIT ?`,
      )
      .all(target, nowMs, maxEvents) as Row[];
    if (fresh.length === 0) return null;
    const id = `msg_${newId16()}${newId16()}`;
    const mark = db.query("UPDATE webhook_outbox SET batch_id = ?, next_attempt_at = ? WHERE event_id = ? AND target = ?");
    for (const r of fresh) mark.run(id, untilMs, r.event_id, target);
    return { id, attempts: 0, events: fresh.map(toEvent) };
  };
  return {
    // Every query below is an index lookup, never a scan of the pending rows: a receiver
    // that is down for days leaves a large backlog, and each event commit wakes the
    // dispatcher, so a scan here would make sending slower the longer the outage lasts.
    async pendingTargets() {
      // A loose index scan: one lookup per target with pending events.
      const targets = distinctPending.all() as { id: string }[];
      return targets.map(({ id }) => {
        // Batches are taken in seq order, so the first pending event belongs to the batch
        // being retried (if any) and carries the target's due time.
        const head = firstPending.get(id) as { next_attempt_at: number };
        return { target: id, dueMs: head.next_attempt_at };
      });
    },
    async claimBatch(target, nowMs, maxEvents, leaseMs) {
      const untilMs = nowMs + leaseMs;
      const batch = store.tx(() => take(target, nowMs, maxEvents, untilMs));
      return batch && { ...batch, lease: { batchId: batch.id, untilMs } };
    },
    async renewLeases(leases, nowMs, untilMs) {
      if (leases.length === 0) return [];
      // The (batch, end) pairs as a JSON array; held as finishSent says, and not yet
      // claimable (claimBatch: due > now). Through the batch index: the pending rows may be many.
      const rows = db
        .query(
          `UPDATE webhook_outbox INDEXED BY webhook_outbox_batch SET next_attempt_at = ?1
            WHERE state = 'pending' AND batch_id IS NOT NULL AND batch_id IN (SELECT value ->> 0 FROM json_each(?3)) AND next_attempt_at > ?2
              AND (batch_id, next_attempt_at) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?3)) RETURNING batch_id`,
        )
        .all(untilMs, nowMs, JSON.stringify(leases.map((l) => [l.batchId, l.untilMs]))) as { batch_id: string }[];
      return [...new Set(rows.map((r) => r.batch_id))];
    },
    async finishSent(lease) {
      return (
        db
          .query(
            "UPDATE webhook_outbox SET state = 'sent', attempts = attempts + 1 WHERE batch_id = ? AND state = 'pending' AND next_attempt_at = ?",
          )
          .run(lease.batchId, lease.untilMs).changes > 0
      );
    },
    async finishRetry(lease, atMs) {
      return (
        db
          .query(
            "UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE batch_id = ? AND state = 'pending' AND next_attempt_at = ?",
          )
          .run(atMs, lease.batchId, lease.untilMs).changes > 0
      );
    },
    async expire(nowMs, maxAgeMs) {
      return db
        .query(
          "UPDATE webhook_outbox INDEXED BY webhook_outbox_pending_age SET state = 'expired' WHERE state = 'pending' AND created_at < ?",
        )
        .run(nowMs - maxAgeMs).changes;
    },
    async drop(target) {
      return db.query("UPDATE webhook_outbox SET state = 'dropped' WHERE state = 'pending' AND target = ?").run(target).changes;
    },
    async countPending() {
      return (db.query("SELECT COUNT(*) AS n FROM webhook_outbox WHERE state = 'pending'").get() as { n: number }).n;
    },
    async dueNow(target, nowMs) {
      db.query("UPDATE webhook_outbox SET next_attempt_at = ? WHERE state = 'pending' AND target = ? AND next_attempt_at > ?").run(
        nowMs,
        target,
        nowMs,
      );
      return (
        db.query("SELECT COUNT(*) AS n FROM webhook_outbox WHERE state = 'pending' AND target = ?").get(target) as {
          n: number;
        }
      ).n;
    },
    async pendingOf(target) {
      const r = db
        .query(
          "SELECT COUNT(*) AS n, MIN(created_at) AS oldest, MIN(next_attempt_at) AS due FROM webhook_outbox WHERE state = 'pending' AND target = ?",
        )
        .get(target) as { n: number; oldest: number | null; due: number | null };
      return { events: r.n, oldestMs: r.oldest, dueMs: r.due };
    },
    async oldestPendingMs() {
      // The first entry of the partial index on pending rows' age (the planner picks the other one unless told).
      return (
        db
          .query("SELECT MIN(created_at) AS oldest FROM webhook_outbox INDEXED BY webhook_outbox_pending_age WHERE state = 'pending'")
          .get() as { oldest: number | null }
      ).oldest;
    },
  };
}

/**
 * The retention purge: forgets sent, expired and dropped events created before the cutoff
 * (the events themselves stay), a window at a time. Pending rows are the webhook's queue:
 * kept. Through the log connection: bookkeeping whose purge, lost in a power cut, is done
 * again at the next run.
 */
export function createOutboxPurge(store: Store): Purge {
  const db = store.logDb;
  const window = db.query<WindowRow, [number, number]>(
    "SELECT rowid, created_at AS at, state = 'pending' AS keep FROM webhook_outbox WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const remove = db.query("DELETE FROM webhook_outbox WHERE rowid IN (SELECT value FROM json_each(?))");
  return rowidPurge(db, window, (rowids) => remove.run(rowids));
}
