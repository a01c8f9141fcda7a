// SQL for the outgoing queue on SQLite: messages, their raw bytes, their recipients (leased
// by workers while an attempt runs, so a crash leaves nothing claimed for longer than the
// lease) and the events each change records, written in the same transaction as the change.
// Engine-specific, as queue.pg.repo.ts is on PostgreSQL, because the mechanics differ: here
// accepting a message and recording an attempt's outcome are synchronous writes grouped
// into one commit (src/store/group-commit.ts: one fsync for many, the inbound and outbound
// hot path), and one process claims, so a claim is a transaction on the log connection (a
// lease needs no fsync: one lost in a crash is released at start-up anyway); on PostgreSQL
// nodes claim with FOR UPDATE SKIP LOCKED and each write commits on its own. The reads are
// in queue-read.repo.ts.
import type { NewEvent } from "../../events/message-event.ts";
import type { RecipientUpdate } from "./message.ts";
import { GroupCommit } from "../../store/group-commit.ts";
import { type SuppressionOrder, suppressionEntry } from "../suppressions/suppression.ts";
import type { QueuePorts } from "./ports.ts";
import type { EventOptions, OutboundRepo } from "./queue.port.ts";
import { messageWriter, rescheduleSqlite } from "./queue-write.repo.ts";
import { localSearch, type SearchRunner } from "../../search/search-thread.ts";
import { createQueueReads } from "./queue-read.repo.ts";
import { prefixPattern } from "../../store/paging.ts";
import type { Store } from "../../store/store.ts";
import { MESSAGE_COLUMNS, messageFromRow, RECIPIENT_COLUMNS, recipientFromRow, type MessageRow, type RecipientRow } from "./rows.ts";
import { MESSAGE_SEARCH_FIELDS, messageReaderOf } from "./search.repo.ts";

export { MESSAGE_SEARCH_FIELDS };

const inList = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/**
 * `ports` write the events, suppressions and idempotency answers in the queue's transactions
 * (wiring.ts, queuePorts); `onEvents` runs after a commit that recorded events (the webhook
 * dispatcher wakes up); `search` runs E12's searches (the search thread in the server; here
 * on `store.db` by default).
 */
export function createOutboundRepo(
  store: Store,
  ports: QueuePorts,
  onEvents: () => void = () => {},
  search: SearchRunner = localSearch(store.db, messageReaderOf),
): OutboundRepo {
  const { db, logDb } = store;
  const { events: eventLog } = ports;
  const suppressionOf = db.query(
    "SELECT m.account_id, m.outbound_account_id, LOWER(r.email) AS email FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id WHERE r.id = ?",
  );
  /** Suppresses a recipient of a sent message, inside the caller's transaction. */
  const suppressRecipient = (recipientId: string, order: SuppressionOrder, details: Record<string, unknown>, nowMs: number) => {
    const row = suppressionOf.get(recipientId) as { account_id: string; outbound_account_id: string; email: string } | null;
    if (row) ports.suppressions.suppress(suppressionEntry(row, order, details, nowMs));
  };
  const commits = new GroupCommit(db);
  const messageJoin = MESSAGE_COLUMNS.split(", ")
    .map((c) => `m.${c} AS m_${c}`)
    .join(", ");
  const recipientCols = RECIPIENT_COLUMNS.split(", ")
    .map((c) => `r.${c}`)
    .join(", ");
  const setOutcome =
    "UPDATE outbound_recipients SET status = ?, state = ?, attempts = ?, first_attempt_at = ?, next_attempt_at = ?, locked_by = NULL, locked_until = NULL WHERE id = ?";
  // Held: claimDue leaves a lease alone while locked_until >= now, so that is when it is still ours.
  const setOutcomeIfHeld = db.query(`${setOutcome} AND locked_by = ? AND locked_until >= ?`);
  const setOutcomeAnyway = db.query(setOutcome);
  // Held as setOutcomeIfHeld says; the primary key finds each recipient (+state: not the
  // queue's index, which would read every queued recipient).
  const renew = logDb.query(
    "UPDATE outbound_recipients SET locked_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND +state = 'queued' AND locked_by = ? AND locked_until >= ? RETURNING id",
  );

  /** An attempt's outcome; with `holder`, only while that worker holds the lease (else null, nothing written). */
  const recordOutcome = async (
    recipientId: string,
    u: RecipientUpdate,
    events: NewEvent[],
    opts: EventOptions,
    holder: { workerId: string; nowMs: number } | null,
  ) => {
    const recorded = await commits.run(() => {
      const values = [u.status, u.state, u.attempts, u.firstAttemptAtMs, u.nextAttemptAtMs, recipientId] as const;
      if (holder) {
        if (setOutcomeIfHeld.run(...values, holder.workerId, holder.nowMs).changes === 0) return null;
      } else setOutcomeAnyway.run(...values);
      if (u.suppress) suppressRecipient(recipientId, u.suppress, events.at(-1)?.details ?? {}, events.at(-1)?.createdAtMs ?? 0);
      return eventLog.record(events, opts);
    });
    if (recorded && opts.webhook !== false) onEvents();
    return recorded;
  };

  const writeMessage = messageWriter(db, eventLog);

  return {
    ...createQueueReads(store, search),
    eventsOf: async (recipientIds) => eventLog.ofRecipients(recipientIds),

    async insert(m, recipients, events, opts = {}) {
      await commits.run(() => {
        writeMessage({ message: m, recipients, events, raw: opts.raw }, opts.webhook);
        if (opts.answer) ports.answers.record(opts.answer, m.createdAtMs);
      });
      if (opts.webhook !== false) onEvents();
    },

    async insertMany(queued, opts = {}) {
      // One commit for the whole batch (grouped with whatever else is committing).
      await commits.run(() => {
        for (const q of queued) writeMessage(q, opts.webhook);
        if (opts.answer) ports.answers.record(opts.answer, queued[0]?.message.createdAtMs ?? Date.now());
      });
      if (opts.webhook !== false && queued.length > 0) onEvents();
    },

    async claimDue(workerId, nowMs, leaseUntilMs, limit, busyDomains) {
      // Through the log connection (synchronous=NORMAL): a lease needs no fsync (see the top
      // of this file). The next durable commit, on the same WAL, makes it durable too.
      // IMMEDIATE: it reads, then writes, and the purge thread may commit in between (store.ts, tx).
      const db = logDb;
      return db
        .transaction(() => {
          const params: unknown[] = [nowMs, nowMs];
          let exclude = "";
          if (busyDomains.length > 0) {
            exclude = ` AND domain NOT IN (${inList(busyDomains.length)})`;
            params.push(...busyDomains);
          }
          params.push(limit);
          const ids = (
            db
              .query(
                `SELECT id FROM outbound_recipients WHERE state = 'queued' AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until < ?)${exclude} ORDER BY lane, next_attempt_at LIMIT ?`,
              )
              .all(...(params as never[])) as { id: string }[]
          ).map((r) => r.id);
          if (ids.length === 0) return [];
          db.query(`UPDATE outbound_recipients SET locked_by = ?, locked_until = ? WHERE id IN (${inList(ids.length)})`).run(
            workerId,
            leaseUntilMs,
            ...ids,
          );
          const rows = db
            .query(
              `SELECT ${recipientCols}, ${messageJoin} FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id WHERE r.id IN (${inList(ids.length)}) ORDER BY r.lane, r.next_attempt_at`,
            )
            .all(...ids) as (RecipientRow & Record<string, unknown>)[];
          return rows.map((row) => {
            const m = Object.fromEntries(
              Object.entries(row)
                .filter(([k]) => k.startsWith("m_"))
                .map(([k, v]) => [k.slice(2), v]),
            ) as unknown as MessageRow;
            return { recipient: recipientFromRow(row), message: messageFromRow(m) };
          });
        })
        .immediate();
    },

    async renewLeases(workerId, recipientIds, nowMs, leaseUntilMs) {
      if (recipientIds.length === 0) return [];
      // One statement for the worker's whole hand (a JSON array: no limit on bound
      // parameters), through the log connection as the claim is (no fsync: a lease).
      const rows = renew.all(leaseUntilMs, JSON.stringify(recipientIds), workerId, nowMs) as { id: string }[];
      return rows.map((r) => r.id);
    },

    async releaseHeldBy(prefix) {
      const res = db
        .query(
          "UPDATE outbound_recipients SET locked_by = NULL, locked_until = NULL WHERE state = 'queued' AND locked_by LIKE ? ESCAPE '\\'",
        )
        .run(prefixPattern(prefix));
      return res.changes;
    },

    async release(ids, workerId, dueAtMs) {
      if (ids.length === 0) return;
      const sql = `UPDATE outbound_recipients SET locked_by = NULL, locked_until = NULL, next_attempt_at = COALESCE(?, next_attempt_at)
        WHERE id IN (${inList(ids.length)})`;
      const due = dueAtMs ?? null;
      if (workerId === undefined) logDb.query(sql).run(due, ...ids);
      else logDb.query(`${sql} AND locked_by = ?`).run(due, ...ids, workerId);
    },

    async update(recipientId, u, events, opts = {}) {
      return (await recordOutcome(recipientId, u, events, opts, null))!;
    },

    finishAttempt: (workerId, recipientId, u, events, nowMs, opts = {}) => recordOutcome(recipientId, u, events, opts, { workerId, nowMs }),

    async addEvents(recipientId, status, events, suppress) {
      const recorded = store.tx(() => {
        if (status) db.query("UPDATE outbound_recipients SET status = ? WHERE id = ?").run(status, recipientId);
        // A hard bounce reported later, or a complaint, suppresses the address too.
        const last = events.at(-1);
        if (suppress && last) suppressRecipient(recipientId, suppress, last.details, last.createdAtMs);
        return eventLog.record(events);
      });
      onEvents();
      return recorded;
    },

    async flush() {
      commits.flush();
    },

    async dueNow(messageId, nowMs) {
      return db
        .query("UPDATE outbound_recipients SET next_attempt_at = ? WHERE message_id = ? AND state = 'queued' AND next_attempt_at > ?")
        .run(nowMs, messageId, nowMs).changes;
    },

    reschedule: async (messageId, sendAtMs, nowMs) => rescheduleSqlite(store, messageId, sendAtMs, nowMs),

    async cancelQueued(messageId, nowMs, opts = {}) {
      const result = store.tx(() => {
        const rows = db
          .query("SELECT id, attempts, locked_until FROM outbound_recipients WHERE message_id = ? AND state IN ('queued', 'held')")
          .all(messageId) as { id: string; attempts: number; locked_until: number | null }[];
        const free = rows.filter((r) => r.locked_until === null || r.locked_until < nowMs);
        // Held ones too: an operator's hold does not keep the account from cancelling its mail.
        const done = db.query(
          "UPDATE outbound_recipients SET status = 'error', state = 'done' WHERE id = ? AND state IN ('queued', 'held')",
        );
        for (const r of free) done.run(r.id);
        eventLog.record(
          free.map((r) => ({
            messageId,
            recipientId: r.id,
            kind: "error" as const,
            details: { message: "cancelled from the dashboard", attempt: r.attempts, retried: false },
            createdAtMs: nowMs,
          })),
          opts,
        );
        return { cancelled: free.length, inDelivery: rows.length - free.length };
      });
      if (result.cancelled > 0 && opts.webhook !== false) onEvents();
      return result;
    },
  };
}
