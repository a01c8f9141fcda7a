// SQL for the webhook outbox on PostgreSQL, for several nodes on one database: the leased
// claim and the outbox's reads and bulk changes (OutboxRepo, outbox.port.ts), with the
// same semantics as outbox.repo.ts on SQLite, and its retention purge. Engine-specific for
// the claim between nodes (see below); SQLite's is one process's transaction.
import type { SQL } from "bun";
import { newId16 } from "../lib/ids.ts";
import { pgInteger } from "../store/pg-values.ts";
import { metadataOf, type OutboxEvent } from "./outbox-event.ts";
import type { OutboxRepo } from "./outbox.port.ts";
import { pgTablePurge } from "../store/pg-purge-window.ts";
import type { Purge } from "../store/purge-window.ts";

interface Row {
  event_id: string;
  kind: string;
  email: string;
  message_id: string;
  outbound_account_id: string;
  account_id: string;
  /** BIGINT: a string from Bun's SQL client. */
  created_at: string | bigint;
  details_json: string;
  metadata_json: string | null;
}

const toEvent = (r: Row): OutboxEvent => ({
  id: r.event_id,
  kind: r.kind,
  recipient: r.email,
  messageId: r.message_id,
  outboundAccountId: r.outbound_account_id,
  accountId: r.account_id,
  createdAtMs: pgInteger(r.created_at, "message_events.created_at"),
  details: JSON.parse(r.details_json),
  ...metadataOf(r.metadata_json),
});

/** The first key of the advisory locks that serialize claims per target (the second is the target's hash). */
const CLAIM_LOCK_CLASS = 0x0b0e;

export function createPgOutboxRepo(sql: SQL): OutboxRepo {
  /** The leased batch's events (its pending rows), in event order. */
  const eventsOf = async (tx: SQL, batchId: string): Promise<OutboxEvent[]> => {
    const rows: Row[] =
      await tx`SELECT o.event_id, e.kind, r.email, o.message_id, o.outbound_account_id, o.account_id, e.created_at, e.details_json, m.metadata_json
      FROM webhook_outbox o JOIN message_events e ON e.id = o.event_id JOIN outbound_recipients r ON r.id = e.recipient_id
      LEFT JOIN outbound_messages m ON m.id = o.message_id
      WHERE o.batch_id = ${batchId} AND o.state = 'pending' ORDER BY o.seq`;
    return rows.map(toEvent);
  };
  return {
    async pendingTargets() {
      // A loose index scan over webhook_outbox_pending: one lookup per target.
      const rows: { id: string; due: string | bigint }[] = await sql`WITH RECURSIVE accounts(id) AS (
          SELECT MIN(target) FROM webhook_outbox WHERE state = 'pending'
          UNION ALL
          SELECT (SELECT MIN(target) FROM webhook_outbox WHERE state = 'pending' AND target > accounts.id) FROM accounts WHERE accounts.id IS NOT NULL
        ) SELECT a.id, (SELECT next_attempt_at FROM webhook_outbox WHERE state = 'pending' AND target = a.id ORDER BY seq LIMIT 1) AS due
        FROM accounts a WHERE a.id IS NOT NULL`;
      return rows.map((r) => ({ target: r.id, dueMs: pgInteger(r.due, "webhook_outbox.next_attempt_at") }));
    },

    // Order across nodes. SQLite keeps events of a message in order by having one batch
    // per target in flight, which the one dispatcher holds in memory. Here the
    // database holds it: a claimed batch's rows carry the batch id and are due at the
    // lease's end, so while a batch of the account is pending (leased, or waiting for its
    // retry) no other batch of that account is made, and the next one starts after it in
    // seq order. Claims of one account take a transaction-scoped advisory lock first, so
    // two nodes never both see "no batch in flight" and make two. Row locks cannot give
    // this: FOR UPDATE SKIP LOCKED on the account's rows would let a second node skip the
    // rows the first is claiming and take the ones after them, later events of the same
    // messages; the lock is per account, not per row, and short (a few statements), so a
    // second claimer waits for it and then finds the account's batch leased.
    async claimBatch(target, nowMs, maxEvents, leaseMs) {
      const untilMs = nowMs + leaseMs;
      return sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${CLAIM_LOCK_CLASS}::int4, hashtext(${target}))`;
        // The batch in flight, if any: the first pending row that has a batch (seq order,
        // so also one that an event with an earlier seq from a node whose clock is behind
        // has passed; that event then waits behind it).
        const [inFlight]: { batch_id: string; attempts: string | bigint; next_attempt_at: string | bigint }[] =
          await tx`SELECT batch_id, attempts, next_attempt_at
          FROM webhook_outbox WHERE state = 'pending' AND target = ${target} AND batch_id IS NOT NULL ORDER BY seq LIMIT 1`;
        if (inFlight) {
          if (pgInteger(inFlight.next_attempt_at, "webhook_outbox.next_attempt_at") > nowMs) return null;
          await tx`UPDATE webhook_outbox SET next_attempt_at = ${untilMs} WHERE batch_id = ${inFlight.batch_id} AND state = 'pending'`;
          const events = await eventsOf(tx, inFlight.batch_id);
          return {
            id: inFlight.batch_id,
            attempts: pgInteger(inFlight.attempts, "webhook_outbox.attempts"),
            events,
            lease: { batchId: inFlight.batch_id, untilMs },
          };
        }
        const id = `msg_${newId16()}${newId16()}`;
        // FOR UPDATE: the rows are the account's, whose claims the advisory lock serializes;
        // this waits only for a drop, expiry or "retry now" changing them at the same moment.
        const claimed: { event_id: string }[] = await tx`UPDATE webhook_outbox SET batch_id = ${id}, next_attempt_at = ${untilMs}
          WHERE rowid IN (SELECT rowid FROM webhook_outbox
            WHERE target = ${target} AND state = 'pending' AND batch_id IS NULL AND next_attempt_at <= ${nowMs}
            ORDER BY seq LIMIT ${maxEvents} FOR UPDATE)
          RETURNING event_id`;
        if (claimed.length === 0) return null;
        return { id, attempts: 0, events: await eventsOf(tx, id), lease: { batchId: id, untilMs } };
      });
    },
    async renewLeases(leases, nowMs, untilMs) {
      if (leases.length === 0) return [];
      // Held as finishSent says, and not yet claimable (claimBatch: due > now); the row
      // locks order it against a claim of the same batch, which then finds it renewed.
      const rows: { batch_id: string }[] = await sql`UPDATE webhook_outbox SET next_attempt_at = ${untilMs}
        WHERE state = 'pending' AND batch_id IS NOT NULL AND next_attempt_at > ${nowMs}
          AND (batch_id, next_attempt_at) IN (SELECT * FROM unnest(${sql.array(
            leases.map((l) => l.batchId),
            "TEXT",
          )}, ${sql.array(
            leases.map((l) => l.untilMs),
            "INT8",
          )}))
        RETURNING batch_id`;
      return [...new Set(rows.map((r) => r.batch_id))];
    },
    async finishSent(lease) {
      const done = await sql`UPDATE webhook_outbox SET state = 'sent', attempts = attempts + 1
        WHERE batch_id = ${lease.batchId} AND state = 'pending' AND next_attempt_at = ${lease.untilMs}`;
      return done.count > 0;
    },
    async finishRetry(lease, atMs) {
      const done = await sql`UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = ${atMs}
        WHERE batch_id = ${lease.batchId} AND state = 'pending' AND next_attempt_at = ${lease.untilMs}`;
      return done.count > 0;
    },

    async expire(nowMs, maxAgeMs) {
      const done = await sql`UPDATE webhook_outbox SET state = 'expired' WHERE state = 'pending' AND created_at < ${nowMs - maxAgeMs}`;
      return done.count;
    },
    async drop(target) {
      const done = await sql`UPDATE webhook_outbox SET state = 'dropped' WHERE state = 'pending' AND target = ${target}`;
      return done.count;
    },
    async countPending() {
      const [r]: { n: string | bigint }[] = await sql`SELECT COUNT(*) AS n FROM webhook_outbox WHERE state = 'pending'`;
      return pgInteger(r!.n, "count");
    },
    async oldestPendingMs() {
      const [r]: { oldest: string | bigint | null }[] =
        await sql`SELECT MIN(created_at) AS oldest FROM webhook_outbox WHERE state = 'pending'`;
      return r!.oldest === null ? null : pgInteger(r!.oldest, "webhook_outbox.created_at");
    },
    // Also cuts a running lease short (a leased batch's rows are due at its end, as a
    // retried one's are at its retry time): the batch is claimed again at once, the
    // holder's finish is refused, and the receiver may get the same batch id twice.
    async dueNow(target, nowMs) {
      await sql`UPDATE webhook_outbox SET next_attempt_at = ${nowMs} WHERE state = 'pending' AND target = ${target} AND next_attempt_at > ${nowMs}`;
      const [r]: { n: string | bigint }[] =
        await sql`SELECT COUNT(*) AS n FROM webhook_outbox WHERE state = 'pending' AND target = ${target}`;
      return pgInteger(r!.n, "count");
    },
    async pendingOf(target) {
      const [r]: { n: string | bigint; oldest: string | bigint | null; due: string | bigint | null }[] =
        await sql`SELECT COUNT(*) AS n, MIN(created_at) AS oldest, MIN(next_attempt_at) AS due
        FROM webhook_outbox WHERE state = 'pending' AND target = ${target}`;
      return {
        events: pgInteger(r!.n, "count"),
        oldestMs: r!.oldest === null ? null : pgInteger(r!.oldest, "webhook_outbox.created_at"),
        dueMs: r!.due === null ? null : pgInteger(r!.due, "webhook_outbox.next_attempt_at"),
      };
    },
  };
}

/** The retention purge (createOutboxPurge on SQLite): sent, expired and dropped rows created before the cutoff; pending rows are the webhook's queue. */
export const createPgOutboxPurge = (sql: SQL): Purge => pgTablePurge(sql, "webhook_outbox", "created_at", sql`state = 'pending'`);
