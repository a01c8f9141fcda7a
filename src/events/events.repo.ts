// SQL for message events. Inserts run inside the caller's transaction (the change of
// state they record commits with them); reads serve E12, E13 and, later, webhooks.
import type { Database } from "bun:sqlite";
import { newId16 } from "../lib/ids.ts";
import { isInternalKind, type EventKind } from "./kinds.ts";

export interface MessageEvent {
  id: string;
  messageId: string;
  recipientId: string;
  kind: EventKind;
  details: Record<string, unknown>;
  createdAtMs: number;
  seq: number;
}

export type NewEvent = Pick<MessageEvent, "messageId" | "recipientId" | "kind" | "details" | "createdAtMs">;

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

let lastSeq = 0;
/** Strictly increasing within this process, and close to time order across restarts. */
function nextSeq(nowMs: number): number {
  lastSeq = Math.max(lastSeq + 1, nowMs * 1000);
  return lastSeq;
}

/**
 * Records events, and queues every one clients may see for the webhook, in the caller's
 * transaction: an event is never stored without its webhook delivery, nor the reverse.
 * `webhook: false` says the outbound account has no webhook now: the dispatcher would only
 * mark its rows dropped, so none are written (events recorded later, once a webhook is
 * configured, are posted as usual).
 */
export function insertEvents(db: Database, events: readonly NewEvent[], opts: { webhook?: boolean } = {}): MessageEvent[] {
  const webhook = opts.webhook ?? true;
  const stmt = db.query("INSERT INTO message_events (id, message_id, recipient_id, kind, details_json, created_at, seq) VALUES (?, ?, ?, ?, ?, ?, ?)");
  const outbox = db.query(
    "INSERT INTO webhook_outbox (event_id, account_id, outbound_account_id, message_id, seq, state, attempts, next_attempt_at, created_at) SELECT ?, account_id, outbound_account_id, id, ?, 'pending', 0, ?, ? FROM outbound_messages WHERE id = ?",
  );
  return events.map((e) => {
    const event: MessageEvent = { ...e, id: newId16(), seq: nextSeq(e.createdAtMs) };
    stmt.run(event.id, event.messageId, event.recipientId, event.kind, JSON.stringify(event.details), event.createdAtMs, event.seq);
    if (webhook && !isInternalKind(event.kind)) outbox.run(event.id, event.seq, event.createdAtMs, event.createdAtMs, event.messageId);
    return event;
  });
}

const inList = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** Every event of the given recipients, oldest first. */
export function eventsOfRecipients(db: Database, recipientIds: readonly string[]): MessageEvent[] {
  if (recipientIds.length === 0) return [];
  const rows = db
    .query(`SELECT id, message_id, recipient_id, kind, details_json, created_at, seq FROM message_events WHERE recipient_id IN (${inList(recipientIds.length)}) ORDER BY seq`)
    .all(...recipientIds) as Row[];
  return rows.map(fromRow);
}

/** The latest event of each given recipient, ignoring `exceptKinds`. */
export function lastEventOfRecipients(db: Database, recipientIds: readonly string[], exceptKinds: readonly string[]): Map<string, MessageEvent> {
  const last = new Map<string, MessageEvent>();
  for (const e of eventsOfRecipients(db, recipientIds)) if (!exceptKinds.includes(e.kind)) last.set(e.recipientId, e);
  return last;
}
