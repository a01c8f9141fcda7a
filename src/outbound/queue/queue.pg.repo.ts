// SQL for the outgoing queue on PostgreSQL, several nodes sharing one queue, with the same
// semantics as queue.repo.ts on SQLite: createPgQueueLeases is the part the delivery worker
// needs (QueueLeases, queue.port.ts), createPgOutboundRepo the whole OutboundRepo (the
// reads are in queue-read.pg.repo.ts). Engine-specific because the mechanics differ: here
// nodes claim and lease rows against each other and every write commits on its own; on
// SQLite one process claims, and writes are synchronous and grouped into one commit.
//
// Leases between nodes:
// - a claim is one statement: UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED
//   LIMIT n) RETURNING. Two nodes claiming at once lock disjoint rows (each skips what the
//   other has locked), and a row the other committed meanwhile is re-read and fails
//   `locked_until < now`, so no recipient is leased to two workers;
// - an outcome is written only by the lease's holder: its UPDATE has `locked_by = me AND
//   locked_until >= now`. A node whose lease ran out (it hung, lost the network) and was
//   claimed by another finds the row no longer matching, writes nothing (no events, no
//   suppression) and gets null; its late answer cannot overwrite the new holder's work;
// - times are the callers' clocks (nowMs, leaseUntilMs), as on SQLite: nodes need clocks in
//   step to well under a lease time.
import type { SQL } from "bun";
import { prefixPattern } from "../../store/paging.ts";
import { pgInteger } from "../../store/pg-values.ts";
import type { PgQueuePorts } from "./ports.ts";
import type { MessageEvent, NewEvent } from "../../events/message-event.ts";
import type { RecipientUpdate } from "./message.ts";
import type { EventOptions, OutboundRepo, QueueLeases } from "./queue.port.ts";
import { PgSharedTransactions } from "../../store/pg-shared-tx.ts";
import { PgInsertBatcher } from "./pg-insert-batch.ts";
import { pgOutcomeWriter, suppressIn } from "./outcome-batch.pg.repo.ts";
import { CLAIMED_BODY_MAX_BYTES, ClaimedBodies } from "./claimed-bodies.ts";
import { reschedulePg, writeMessages } from "./queue-write.pg.repo.ts";
import { createPgQueueReads, type Big, type PgRecipientRow, pgMessageOf, recipientOf } from "./queue-read.pg.repo.ts";
import type { MessageRow } from "./rows.ts";
import { LANES } from "./schedule.ts";

/** A claimed recipient with its message's columns (m_*; the message's ID is the recipient's message_id). */
interface PgClaimRow extends PgRecipientRow {
  m_account_id: string;
  m_outbound_account_id: string;
  m_mail_from: string;
  m_subject: string | null;
  m_message_id: string;
  m_to_json: string;
  m_cc_json: string;
  m_tags_json: string;
  m_test_mode: number;
  m_priority: MessageRow["priority"];
  m_size: Big;
  m_tracking_json: string;
  m_created_at: Big;
  m_send_at: Big | null;
  m_metadata_json: string;
  /** The message's bytes on its first claimed recipient, when at most CLAIMED_BODY_MAX_BYTES (claimed-bodies.ts). */
  m_raw: Uint8Array | null;
}

const messageOf = (r: PgClaimRow) =>
  pgMessageOf({
    id: r.message_id,
    account_id: r.m_account_id,
    outbound_account_id: r.m_outbound_account_id,
    mail_from: r.m_mail_from,
    subject: r.m_subject,
    message_id: r.m_message_id,
    to_json: r.m_to_json,
    cc_json: r.m_cc_json,
    tags_json: r.m_tags_json,
    test_mode: r.m_test_mode,
    priority: r.m_priority,
    size: r.m_size,
    tracking_json: r.m_tracking_json,
    created_at: r.m_created_at,
    send_at: r.m_send_at,
    metadata_json: r.m_metadata_json,
  });

/**
 * An outcome with its events written by the API or the bounce handler, whoever holds the
 * lease (finishAttempt, the lease holder's, is outcome-batch.pg.repo.ts's).
 */
async function recordOutcome(
  shared: PgSharedTransactions,
  ports: PgQueuePorts,
  onEvents: () => void,
  recipientId: string,
  u: RecipientUpdate,
  events: NewEvent[],
  opts: EventOptions,
): Promise<MessageEvent[]> {
  // With the outcomes of other changes that end meanwhile, in one transaction (pg-shared-tx.ts).
  const recorded = await shared.run(async (tx) => {
    await tx`UPDATE outbound_recipients
      SET status = ${u.status}, state = ${u.state}, attempts = ${u.attempts}, first_attempt_at = ${u.firstAttemptAtMs}, next_attempt_at = ${u.nextAttemptAtMs},
        locked_by = NULL, locked_until = NULL
      WHERE id = ${recipientId}`;
    if (u.suppress) await suppressIn(tx, ports, recipientId, u.suppress, events.at(-1)?.details ?? {}, events.at(-1)?.createdAtMs ?? 0);
    return ports.events.record(tx, events, opts);
  });
  if (opts.webhook !== false) onEvents();
  return recorded;
}

/**
 * `ports` write the events, suppressions and idempotency answers in the queue's
 * transactions; `onEvents` runs after a commit that recorded events (the webhook dispatcher
 * wakes up). `leaseSql`: where claims, renewals and releases commit, a pool whose commits
 * need not wait for the WAL flush (the engine's logSql): a lease lost with a crash of the
 * server only lets the row be claimed again, as an expired one would be, and the outcome's
 * commit, which waits, flushes the claim's WAL before it.
 */
export function createPgQueueLeases(sql: SQL, ports: PgQueuePorts, onEvents: () => void = () => {}, leaseSql: SQL = sql): QueueLeases {
  const lanes = Object.values(LANES);
  // Outcomes that end together are written together (outcome-batch.pg.repo.ts).
  const finish = pgOutcomeWriter(sql, ports, onEvents);
  // Sends that arrive together share a transaction (pg-insert-batch.ts).
  const inserts = new PgInsertBatcher(sql, ports);
  const bodies = new ClaimedBodies();
  return {
    async insert(m, recipients, events, opts = {}) {
      bodies.forget(m.id);
      await inserts.insert({ queued: { message: m, recipients, events, raw: opts.raw }, answer: opts.answer, webhook: opts.webhook });
      if (opts.webhook !== false) onEvents();
    },

    async insertMany(queued, opts = {}) {
      for (const q of queued) bodies.forget(q.message.id);
      await sql.begin(async (tx) => {
        await writeMessages(tx, ports, queued, opts.webhook);
        if (opts.answer) await ports.answers.record(tx, opts.answer, queued[0]?.message.createdAtMs ?? Date.now());
      });
      if (opts.webhook !== false && queued.length > 0) onEvents();
    },

    async rawMessage(messageId) {
      const claimed = bodies.take(messageId);
      if (claimed) return claimed;
      const rows: { raw: Uint8Array }[] = await sql`SELECT raw FROM outbound_message_bodies WHERE message_id = ${messageId}`;
      const raw = rows[0]?.raw;
      return raw ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength) : null;
    },

    async claimDue(workerId, nowMs, leaseUntilMs, limit, busyDomains) {
      if (limit <= 0) return [];
      const notBusy = busyDomains.length > 0 ? leaseSql`AND domain NOT IN ${leaseSql(busyDomains as string[])}` : leaseSql``;
      // The ORDER BY inside picks which rows; RETURNING has no order, so the outer query
      // sorts what was claimed the same way.
      const rows: PgClaimRow[] = await leaseSql`WITH claimed AS (
          UPDATE outbound_recipients SET locked_by = ${workerId}, locked_until = ${leaseUntilMs}
          WHERE id IN (
            SELECT id FROM outbound_recipients
            WHERE state = 'queued' AND next_attempt_at <= ${nowMs} AND (locked_until IS NULL OR locked_until < ${nowMs}) ${notBusy}
            ORDER BY lane, next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          RETURNING id, message_id, position, email, domain, type, status, state, lane, attempts, first_attempt_at, next_attempt_at)
        SELECT c.*, m.account_id AS m_account_id, m.outbound_account_id AS m_outbound_account_id, m.mail_from AS m_mail_from, m.subject AS m_subject,
          m.message_id AS m_message_id, m.to_json AS m_to_json, m.cc_json AS m_cc_json, m.tags_json AS m_tags_json, m.test_mode AS m_test_mode,
          m.priority AS m_priority, m.size AS m_size, m.tracking_json AS m_tracking_json, m.created_at AS m_created_at,
          m.send_at AS m_send_at, m.metadata_json AS m_metadata_json,
          CASE WHEN row_number() OVER (PARTITION BY c.message_id ORDER BY c.position) = 1 THEN
            (SELECT raw FROM outbound_message_bodies WHERE message_id = c.message_id AND octet_length(raw) <= ${CLAIMED_BODY_MAX_BYTES}) END AS m_raw
        FROM claimed c JOIN outbound_messages m ON m.id = c.message_id
        ORDER BY c.lane, c.next_attempt_at`;
      // The bodies, once per message, for rawMessage: no round trip per delivery to read them.
      // (A subquery per first row: each body found by its key, and read only once per message.)
      for (const r of rows) if (r.m_raw) bodies.keep(r.message_id, Buffer.from(r.m_raw.buffer, r.m_raw.byteOffset, r.m_raw.byteLength));
      return rows.map((r) => ({ recipient: recipientOf(r), message: messageOf(r) }));
    },

    async renewLeases(workerId, recipientIds, nowMs, leaseUntilMs) {
      if (recipientIds.length === 0) return [];
      // One statement for the worker's whole hand, each row found by its primary key; held
      // as recordOutcome says. Row locks order it against a claim of the same row: either
      // the claim finds the lease renewed, or this finds the row another worker's.
      const rows: { id: string }[] = await leaseSql`UPDATE outbound_recipients SET locked_until = ${leaseUntilMs}
        WHERE id = ANY(${leaseSql.array(recipientIds as string[], "TEXT")}) AND state = 'queued' AND locked_by = ${workerId} AND locked_until >= ${nowMs}
        RETURNING id`;
      return rows.map((r) => r.id);
    },

    async releaseHeldBy(prefix) {
      // ILIKE in "C": SQLite's LIKE, which ignores the case of ASCII letters only.
      const result: { count: number } = await sql`UPDATE outbound_recipients SET locked_by = NULL, locked_until = NULL
        WHERE state = 'queued' AND locked_by COLLATE "C" ILIKE ${prefixPattern(prefix)} ESCAPE '\\'`;
      return result.count;
    },

    async release(ids, workerId, dueAtMs) {
      if (ids.length === 0) return;
      const ours = workerId === undefined ? leaseSql`` : leaseSql`AND locked_by = ${workerId}`;
      const due = dueAtMs === undefined ? leaseSql`` : leaseSql`, next_attempt_at = ${Math.trunc(dueAtMs)}`;
      await leaseSql`UPDATE outbound_recipients SET locked_by = NULL, locked_until = NULL ${due} WHERE id IN ${leaseSql(ids as string[])} ${ours}`;
    },

    finishAttempt: (workerId, recipientId, u, events, nowMs, opts = {}) =>
      finish({ recipientId, update: u, events, opts, holder: { workerId, nowMs } }),

    async nextDueMs() {
      // One MIN per lane, each the first entry of outbound_recipients_due (state, lane,
      // next_attempt_at), as on SQLite; a MIN over all lanes at once reads every queued entry.
      const rows: { due: Big | null }[] = await sql`SELECT MIN(d.due) AS due FROM unnest(${lanes}::int[]) AS l(lane),
        LATERAL (SELECT MIN(next_attempt_at) AS due FROM outbound_recipients WHERE state = 'queued' AND lane = l.lane) d`;
      const due = rows[0]?.due ?? null;
      return due === null ? null : pgInteger(due, "outbound_recipients.next_attempt_at");
    },
  };
}

/**
 * The whole OutboundRepo on PostgreSQL: the leases above, the reads (queue-read.pg.repo.ts)
 * and the changes the API and the bounce handler make. Every write commits before it
 * resolves (no grouped commits as on SQLite), so flush has nothing to wait for.
 */
export function createPgOutboundRepo(sql: SQL, ports: PgQueuePorts, onEvents: () => void = () => {}, leaseSql: SQL = sql): OutboundRepo {
  const updates = new PgSharedTransactions(sql);
  return {
    ...createPgQueueLeases(sql, ports, onEvents, leaseSql),
    ...createPgQueueReads(sql),

    update: (recipientId, u, events, opts = {}) => recordOutcome(updates, ports, onEvents, recipientId, u, events, opts),

    async addEvents(recipientId, status, events, suppress) {
      const recorded = await sql.begin(async (tx) => {
        if (status) await tx`UPDATE outbound_recipients SET status = ${status} WHERE id = ${recipientId}`;
        // A hard bounce reported later, or a complaint, suppresses the address too.
        const last = events.at(-1);
        if (suppress && last) await suppressIn(tx, ports, recipientId, suppress, last.details, last.createdAtMs);
        return ports.events.record(tx, events);
      });
      onEvents();
      return recorded;
    },

    async flush() {},

    async dueNow(messageId, nowMs) {
      const result: { count: number } = await sql`UPDATE outbound_recipients SET next_attempt_at = ${nowMs}
        WHERE message_id = ${messageId} AND state = 'queued' AND next_attempt_at > ${nowMs}`;
      return result.count;
    },

    reschedule: (messageId, sendAtMs, nowMs) => reschedulePg(sql, messageId, sendAtMs, nowMs),

    async cancelQueued(messageId, nowMs, opts = {}) {
      const result = await sql.begin(async (tx) => {
        // One UPDATE: a recipient a node claims meanwhile is either locked by this statement
        // (the claim skips it) or already leased (this statement leaves it to its attempt).
        const cancelled: { id: string; attempts: Big }[] = await tx`UPDATE outbound_recipients SET status = 'error', state = 'done'
          WHERE message_id = ${messageId} AND state IN ('queued', 'held') AND (locked_until IS NULL OR locked_until < ${nowMs}) RETURNING id, attempts`;
        const [held]: { n: Big }[] =
          await tx`SELECT COUNT(*) AS n FROM outbound_recipients WHERE message_id = ${messageId} AND state = 'queued'`;
        const events = cancelled.map((r) => ({
          messageId,
          recipientId: r.id,
          kind: "error" as const,
          details: {
            message: "cancelled from the dashboard",
            attempt: pgInteger(r.attempts, "outbound_recipients.attempts"),
            retried: false,
          },
          createdAtMs: nowMs,
        }));
        await ports.events.record(tx, events, opts);
        return { cancelled: cancelled.length, inDelivery: pgInteger(held!.n, "count") };
      });
      if (result.cancelled > 0 && opts.webhook !== false) onEvents();
      return result;
    },
  };
}
