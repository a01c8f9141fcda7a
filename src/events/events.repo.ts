// SQL for message events. Inserts run inside the caller's transaction (the change of
// state they record commits with them); reads serve E12, E13 and, later, webhooks; the
// retention purge deletes old ones, never one still waiting for its webhook.
import type { Database } from "bun:sqlite";
import { newId16 } from "../lib/ids.ts";
import { rowidPurge, type Purge, type WindowRow } from "../store/purge-window.ts";
import type { Store } from "../store/store.ts";
import { countEvents } from "../stats/stats.repo.ts";
import { nextSeq } from "./event-seq.ts";
import type { EventRecordOptions, EventRepo } from "./events.port.ts";
import { isInternalKind, type EventKind } from "./kinds.ts";
import type { MessageEvent, NewEvent } from "./message-event.ts";

interface Row {
  id: string;
  message_id: string;
  recipient_id: string;
  kind: EventKind;
  details_json: string;
  created_at: number;
  seq: number;
}

const fromRow = (r: Row): MessageEvent => ({
  id: r.id,
  messageId: r.message_id,
  recipientId: r.recipient_id,
  kind: r.kind,
  details: JSON.parse(r.details_json),
  createdAtMs: r.created_at,
  seq: r.seq,
});

/**
 * Records events, and queues every one clients may see for the webhook, in the caller's
 * transaction: an event is never stored without its webhook delivery, nor the reverse.
 * `webhook: false` says the outbound account has no webhook now: the dispatcher would only
 * mark its rows dropped, so none are written (events recorded later, once a webhook is
 * configured, are posted as usual).
 */
export function insertEvents(db: Database, events: readonly NewEvent[], opts: EventRecordOptions = {}): MessageEvent[] {
  const webhook = opts.webhook ?? true;
  const stmt = db.query(
    "INSERT INTO message_events (id, message_id, recipient_id, kind, details_json, created_at, seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const outbox = db.query(
    "INSERT INTO webhook_outbox (event_id, account_id, outbound_account_id, message_id, seq, state, attempts, next_attempt_at, created_at) SELECT ?, account_id, outbound_account_id, id, ?, 'pending', 0, ?, ? FROM outbound_messages WHERE id = ?",
  );
  const stored = events.map((e) => {
    const event: MessageEvent = { ...e, id: newId16(), seq: nextSeq(e.createdAtMs) };
    stmt.run(event.id, event.messageId, event.recipientId, event.kind, JSON.stringify(event.details), event.createdAtMs, event.seq);
    if (webhook && !isInternalKind(event.kind)) outbox.run(event.id, event.seq, event.createdAtMs, event.createdAtMs, event.messageId);
    return event;
  });
  countEvents(db, stored);
  return stored;
}

const inList = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** Every event of the given recipients, oldest first. */
export function eventsOfRecipients(db: Database, recipientIds: readonly string[]): MessageEvent[] {
  if (recipientIds.length === 0) return [];
  const rows = db
    .query(
      `SELECT id, message_id, recipient_id, kind, details_json, created_at, seq FROM message_events WHERE recipient_id IN (${inList(recipientIds.length)}) ORDER BY seq`,
    )
    .all(...recipientIds) as Row[];
  return rows.map(fromRow);
}

/** The events feature's side of the outgoing queue's event log (src/outbound/queue/ports.ts), on `db`: the connection of the caller's transaction. */
export function eventLog(db: Database) {
  return {
    record: (events: readonly NewEvent[], opts?: { webhook?: boolean }) => insertEvents(db, events, opts),
    ofRecipients: (recipientIds: readonly string[]) => eventsOfRecipients(db, recipientIds),
  };
}

/** The EventRepo port (events.port.ts) on SQLite: each call its own transaction. */
export function createEventRepo(store: Store): EventRepo {
  return {
    record: async (events, opts) => store.tx(() => insertEvents(store.db, events, opts)),
    ofRecipients: async (recipientIds) => eventsOfRecipients(store.db, recipientIds),
  };
}

// ---------------------------------------------------------------- retention

/** The messages among `messageIds` (a JSON array) with an event still waiting for its webhook POST. */
export function messagesWithPendingEvents(db: Database, messageIds: string): Set<string> {
  // CROSS JOIN fixes the order: from the few messages to their events, not from every
  // pending event (a webhook outage leaves days of them) to the messages.
  const rows = db
    .query(
      "SELECT DISTINCT e.message_id AS id FROM json_each(?) j CROSS JOIN message_events e ON e.message_id = j.value CROSS JOIN webhook_outbox o ON o.event_id = e.id WHERE o.state = 'pending'",
    )
    .all(messageIds) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}

/** Deletes every event of the messages (a JSON array of IDs) and their webhook bookkeeping, in the caller's transaction. */
export function deleteEventsOfMessages(db: Database, messageIds: string): void {
  db.query(
    "DELETE FROM webhook_outbox WHERE event_id IN (SELECT id FROM message_events WHERE message_id IN (SELECT value FROM json_each(?)))",
  ).run(messageIds);
  db.query("DELETE FROM message_events WHERE message_id IN (SELECT value FROM json_each(?))").run(messageIds);
}

/** The events feature's side of the sent messages' purge (src/outbound/queue/ports.ts), on the purge's connection. */
export function eventRetention(db: Database) {
  return {
    pendingAmong: (messageIds: string) => messagesWithPendingEvents(db, messageIds),
    deleteOfMessages: (messageIds: string) => deleteEventsOfMessages(db, messageIds),
  };
}

/**
 * The events retention: deletes events created before the cutoff, with their webhook
 * bookkeeping, but never one still waiting to be posted (the dispatcher reads the event
 * when it posts) nor one of a recipient still queued (its delivery is not over). Through
 * the log connection: a purge lost in a power cut is done again at the next run.
 */
export function createEventPurge(store: Store): Purge {
  const db = store.logDb;
  const needed =
    "EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.event_id = e.id AND o.state = 'pending') OR EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.id = e.recipient_id AND r.state = 'queued')";
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
