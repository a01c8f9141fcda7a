// SQL for the outgoing queue: messages, their raw bytes, their recipients (leased by
// workers while an attempt runs, so a crash leaves nothing claimed for longer than the
// lease) and the events each change records, written in the same transaction as the change.
// Accepting a message and recording an attempt's outcome are durable, grouped commits
// (src/store/group-commit.ts); a lease is not: one lost in a crash is released at start-up anyway.
import type { MessageEvent, NewEvent } from "../../events/message-event.ts";
import type { LifecycleKind } from "../../events/kinds.ts";
import type { SearchTerm } from "../../lib/search-query.ts";
import type { ClaimedRecipient, OutboundMessage, OutboundRecipient, RecipientUpdate } from "./message.ts";
import { GroupCommit } from "../../store/group-commit.ts";
import type { KeyAnswer } from "../sending/idempotency.ts";
import type { SuppressionReason } from "../suppressions/suppression.ts";
import type { QueuePorts } from "./ports.ts";
import { newestFirst, prefixPattern, searchedPage, searchWindow, toPage, type Page, type PageRequest } from "../../store/paging.ts";
import type { Store } from "../../store/store.ts";
import { MESSAGE_COLUMNS, messageFromRow, RECIPIENT_COLUMNS, recipientFromRow, type MessageRow, type RecipientRow } from "./rows.ts";
import { MESSAGE_SEARCH_FIELDS, searchClause } from "./search.repo.ts";
import { LANES } from "./schedule.ts";

export { MESSAGE_SEARCH_FIELDS };

const inList = (n: number) => Array.from({ length: n }, () => "?").join(", ");

export interface EventOptions {
  /** False when the outbound account has no webhook: the events get no webhook outbox rows. */
  webhook?: boolean;
}

export interface OutboundRepo {
  /**
   * Message, its raw bytes (when given),
   * recipients and their first events, and the answer of the idempotency key it was sent
   * with (a replay then returns exactly that answer), all or nothing; resolves once on disk.
   */
  insert(message: OutboundMessage, recipients: OutboundRecipient[], events: NewEvent[], opts?: { raw?: Buffer; answer?: KeyAnswer } & EventOptions): Promise<void>;
  /** The raw message stored with it, or null once retention.bodies has deleted it. */
  rawMessage(messageId: string): Promise<Buffer | null>;
  /**
   * Leases up to `limit` due recipients to `workerId` until `leaseUntilMs`: lower lanes
   * first, then the longest waiting; none of the domains in `busyDomains`.
   */
  claimDue(workerId: string, nowMs: number, leaseUntilMs: number, limit: number, busyDomains: readonly string[]): Promise<ClaimedRecipient[]>;
  /** Releases every lease held by workers whose ID starts with `prefix` (this host's, at start-up). */
  releaseHeldBy(prefix: string): Promise<number>;
  /** Gives leased recipients back unattempted. */
  release(recipientIds: readonly string[]): Promise<void>;
  /** Records an attempt's outcome and its events, and releases the lease; resolves once on disk. */
  update(recipientId: string, update: RecipientUpdate, events: NewEvent[], opts?: EventOptions): Promise<MessageEvent[]>;
  /** Adds events that do not change the queue state (open, click, a late DSN). */
  addEvents(recipientId: string, status: LifecycleKind | null, events: NewEvent[]): Promise<MessageEvent[]>;
  /** The next time a queued recipient is due, or null when none waits. */
  nextDueMs(): Promise<number | null>;
  /** Recipients waiting for a delivery attempt, due at `nowMs` or later (the queue depth on /metrics). */
  queueDepth(nowMs: number): Promise<{ due: number; scheduled: number }>;
  getMessage(accountId: string, id: string): Promise<OutboundMessage | null>;
  getMessageById(id: string): Promise<OutboundMessage | null>;
  getRecipient(messageId: string, recipientId: string): Promise<OutboundRecipient | null>;
  listMessages(outboundAccountId: string, terms: readonly SearchTerm[], page: PageRequest, windowRows?: number): Promise<Page<OutboundMessage>>;
  recipientsOf(messageIds: readonly string[]): Promise<OutboundRecipient[]>;
  /** Every event of these recipients, oldest first. */
  eventsOf(recipientIds: readonly string[]): Promise<MessageEvent[]>;
  /** Commits the grouped writes waiting for their window now (at shutdown). */
  flush(): Promise<void>;
  /** Makes a message's queued recipients due at `nowMs` (the dashboard's "retry now"); returns how many. */
  dueNow(messageId: string, nowMs: number): Promise<number>;
  /**
   * Cancels a message's queued recipients that no worker holds now: each gets an `error`
   * event and leaves the queue. Returns how many were cancelled and how many are being
   * delivered at this moment (those finish their attempt).
   */
  cancelQueued(messageId: string, nowMs: number, opts?: EventOptions): Promise<{ cancelled: number; inDelivery: number }>;
}

/**
 * `ports` write the events, suppressions and idempotency answers in the queue's transactions
 * (wiring.ts, queuePorts); `onEvents` runs after a commit that recorded events (the webhook
 * dispatcher wakes up).
 */
export function createOutboundRepo(store: Store, ports: QueuePorts, onEvents: () => void = () => {}): OutboundRepo {
  const { db, logDb } = store;
  const { events: eventLog } = ports;
  const suppressionOf = db.query("SELECT m.account_id, m.outbound_account_id, LOWER(r.email) AS email FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id WHERE r.id = ?");
  /** Suppresses a recipient of a sent message, inside the caller's transaction. */
  const suppressRecipient = (recipientId: string, reason: SuppressionReason, details: Record<string, unknown>, nowMs: number) => {
    const row = suppressionOf.get(recipientId) as { account_id: string; outbound_account_id: string; email: string } | null;
    if (row) ports.suppressions.suppress({ accountId: row.account_id, outboundAccountId: row.outbound_account_id, email: row.email, reason, details, createdAtMs: nowMs });
  };
  const commits = new GroupCommit(db);
  const insertMessage = db.query(`INSERT INTO outbound_messages (${MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertBody = db.query("INSERT INTO outbound_message_bodies (message_id, raw) VALUES (?, ?)");
  const insertRecipient = db.query(`INSERT INTO outbound_recipients (${RECIPIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const messageJoin = MESSAGE_COLUMNS.split(", ").map((c) => `m.${c} AS m_${c}`).join(", ");
  const recipientCols = RECIPIENT_COLUMNS.split(", ").map((c) => `r.${c}`).join(", ");
  const laneMin = (lane: number) => `SELECT MIN(next_attempt_at) AS due FROM outbound_recipients WHERE state = 'queued' AND lane = ${lane}`;
  const nextDue = db.query(`SELECT MIN(due) AS due FROM (${Object.values(LANES).map(laneMin).join(" UNION ALL ")})`);

  return {
    async insert(m, recipients, events, opts = {}) {
      const raw = opts.raw;
      await commits.run(() => {
        insertMessage.run(m.id, m.accountId, m.outboundAccountId, m.from, m.subject, m.messageId, JSON.stringify(m.to), JSON.stringify(m.cc), JSON.stringify(m.tags), m.testMode ? 1 : 0, m.priority, m.sizeBytes, JSON.stringify(m.tracking), m.createdAtMs);
        if (raw) insertBody.run(m.id, raw);
        for (const r of recipients) insertRecipient.run(r.id, r.messageId, r.position, r.email, r.domain, r.type, r.status, r.state, r.lane, r.attempts, r.firstAttemptAtMs, r.nextAttemptAtMs);
        eventLog.record(events, { webhook: opts.webhook });
        if (opts.answer) ports.answers.record(opts.answer, m.createdAtMs);
      });
      if (opts.webhook !== false) onEvents();
    },

    async rawMessage(messageId) {
      const row = db.query("SELECT raw FROM outbound_message_bodies WHERE message_id = ?").get(messageId) as { raw: Uint8Array } | null;
      return row ? Buffer.from(row.raw.buffer, row.raw.byteOffset, row.raw.byteLength) : null;
    },

    async claimDue(workerId, nowMs, leaseUntilMs, limit, busyDomains) {
      // Through the log connection (synchronous=NORMAL): a lease needs no fsync (see the top
      // of this file). The next durable commit, on the same WAL, makes it durable too.
      // IMMEDIATE: it reads, then writes, and the purge thread may commit in between (store.ts, tx).
      const db = logDb;
      return db.transaction(() => {
        const params: unknown[] = [nowMs, nowMs];
        let exclude = "";
        if (busyDomains.length > 0) {
          exclude = ` AND domain NOT IN (${inList(busyDomains.length)})`;
          params.push(...busyDomains);
        }
        params.push(limit);
        const ids = (
          db
            .query(`SELECT id FROM outbound_recipients WHERE state = 'queued' AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until < ?)${exclude} ORDER BY lane, next_attempt_at LIMIT ?`)
            .all(...(params as never[])) as { id: string }[]
        ).map((r) => r.id);
        if (ids.length === 0) return [];
        db.query(`UPDATE outbound_recipients SET locked_by = ?, locked_until = ? WHERE id IN (${inList(ids.length)})`).run(workerId, leaseUntilMs, ...ids);
        const rows = db
          .query(`SELECT ${recipientCols}, ${messageJoin} FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id WHERE r.id IN (${inList(ids.length)}) ORDER BY r.lane, r.next_attempt_at`)
          .all(...ids) as (RecipientRow & Record<string, unknown>)[];
        return rows.map((row) => {
          const m = Object.fromEntries(Object.entries(row).filter(([k]) => k.startsWith("m_")).map(([k, v]) => [k.slice(2), v])) as unknown as MessageRow;
          return { recipient: recipientFromRow(row), message: messageFromRow(m) };
        });
      }).immediate();
    },

    async releaseHeldBy(prefix) {
      const res = db.query("UPDATE outbound_recipients SET locked_by = NULL, locked_until = NULL WHERE state = 'queued' AND locked_by LIKE ? ESCAPE '\\'").run(prefixPattern(prefix));
      return res.changes;
    },

    async release(ids) {
      if (ids.length === 0) return;
      logDb.query(`UPDATE outbound_recipients SET locked_by = NULL, locked_until = NULL WHERE id IN (${inList(ids.length)})`).run(...ids);
    },

    async update(recipientId, u, events, opts = {}) {
      const recorded = await commits.run(() => {
        db.query("UPDATE outbound_recipients SET status = ?, state = ?, attempts = ?, first_attempt_at = ?, next_attempt_at = ?, locked_by = NULL, locked_until = NULL WHERE id = ?").run(
          u.status,
          u.state,
          u.attempts,
          u.firstAttemptAtMs,
          u.nextAttemptAtMs,
          recipientId,
        );
        if (u.status === "bounce") suppressRecipient(recipientId, "bounce", events.at(-1)?.details ?? {}, events.at(-1)?.createdAtMs ?? 0);
        return eventLog.record(events, opts);
      });
      if (opts.webhook !== false) onEvents();
      return recorded;
    },

    async addEvents(recipientId, status, events) {
      const recorded = store.tx(() => {
        if (status) db.query("UPDATE outbound_recipients SET status = ? WHERE id = ?").run(status, recipientId);
        // A hard bounce reported later, or a complaint, suppresses the address too.
        for (const e of events) {
          if (e.kind === "bounce" || e.kind === "complaint") suppressRecipient(recipientId, e.kind, e.details, e.createdAtMs);
        }
        return eventLog.record(events);
      });
      onEvents();
      return recorded;
    },

    async nextDueMs() {
      // One MIN per lane, each the first entry of outbound_recipients_due (state, lane,
      // next_attempt_at); a MIN over all lanes at once reads every queued entry.
      return (nextDue.get() as { due: number | null }).due;
    },
    async queueDepth(nowMs) {
      // Counted on the covering index outbound_recipients_due: the queued entries only.
      const row = db.query("SELECT COUNT(*) AS queued, COALESCE(SUM(next_attempt_at <= ?), 0) AS due FROM outbound_recipients WHERE state = 'queued'").get(nowMs) as { queued: number; due: number };
      return { due: row.due, scheduled: row.queued - row.due };
    },

    async getMessage(accountId, id) {
      const row = db.query(`SELECT ${MESSAGE_COLUMNS} FROM outbound_messages WHERE id = ? AND account_id = ?`).get(id, accountId) as MessageRow | null;
      return row ? messageFromRow(row) : null;
    },

    async getMessageById(id) {
      const row = db.query(`SELECT ${MESSAGE_COLUMNS} FROM outbound_messages WHERE id = ?`).get(id) as MessageRow | null;
      return row ? messageFromRow(row) : null;
    },

    async getRecipient(messageId, recipientId) {
      const row = db.query(`SELECT ${RECIPIENT_COLUMNS} FROM outbound_recipients WHERE id = ? AND message_id = ?`).get(recipientId, messageId) as RecipientRow | null;
      return row ? recipientFromRow(row) : null;
    },

    async listMessages(outboundAccountId, terms, page, windowRows = Number.POSITIVE_INFINITY) {
      const params: unknown[] = [outboundAccountId];
      const from = "outbound_messages m WHERE m.outbound_account_id = ?";
      // A search reads at most windowRows messages per request (paging.ts, searchWindow).
      const window = terms.length > 0 && !page.offset && Number.isFinite(windowRows) ? searchWindow(db, from, params, page, windowRows, params, "m.") : null;
      const search = searchClause(terms, params);
      const { where, tail } = newestFirst(page, params, "m.");
      const rows = db
        .query(`SELECT ${MESSAGE_COLUMNS.split(", ").map((c) => `m.${c}`).join(", ")} FROM ${from}${window?.where ?? ""}${search}${where}${tail}`)
        .all(...(params as never[])) as MessageRow[];
      return window ? searchedPage(rows.map(messageFromRow), page.limit, window) : toPage(rows.map(messageFromRow), page.limit);
    },

    async eventsOf(recipientIds) {
      return eventLog.ofRecipients(recipientIds);
    },

    async flush() {
      commits.flush();
    },

    async dueNow(messageId, nowMs) {
      return db.query("UPDATE outbound_recipients SET next_attempt_at = ? WHERE message_id = ? AND state = 'queued' AND next_attempt_at > ?").run(nowMs, messageId, nowMs).changes;
    },

    async cancelQueued(messageId, nowMs, opts = {}) {
      const result = store.tx(() => {
        const rows = db.query("SELECT id, attempts, locked_until FROM outbound_recipients WHERE message_id = ? AND state = 'queued'").all(messageId) as { id: string; attempts: number; locked_until: number | null }[];
        const free = rows.filter((r) => r.locked_until === null || r.locked_until < nowMs);
        const done = db.query("UPDATE outbound_recipients SET status = 'error', state = 'done' WHERE id = ? AND state = 'queued'");
        for (const r of free) done.run(r.id);
        eventLog.record(free.map((r) => ({ messageId, recipientId: r.id, kind: "error" as const, details: { message: "cancelled from the dashboard", attempt: r.attempts, retried: false }, createdAtMs: nowMs })), opts);
        return { cancelled: free.length, inDelivery: rows.length - free.length };
      });
      if (result.cancelled > 0 && opts.webhook !== false) onEvents();
      return result;
    },

    async recipientsOf(messageIds) {
      if (messageIds.length === 0) return [];
      const rows = db.query(`SELECT ${RECIPIENT_COLUMNS} FROM outbound_recipients WHERE message_id IN (${inList(messageIds.length)}) ORDER BY message_id, position`).all(...messageIds) as RecipientRow[];
      return rows.map(recipientFromRow);
    },
  };
}
