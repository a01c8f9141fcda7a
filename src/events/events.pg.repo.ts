// SQL for message events on PostgreSQL: the EventRepo port (events.port.ts), the same
// semantics as events.repo.ts on SQLite. pgRecordEvents and pgEventsOfRecipients take the
// caller's transaction: they are the PostgreSQL form of the queue's event log
// (QueueEventLog in src/outbound/queue/ports.ts), wired when the queue moves. The
// retention purges are createPgEventPurge and pgEventRetention (the sent messages' side).
import type { SQL } from "bun";
import { newId16 } from "../lib/ids.ts";
import { pgRowidPurge } from "../store/pg-purge-window.ts";
import { pgInteger } from "../store/pg-values.ts";
import type { Purge } from "../store/purge-window.ts";
import { pgCountEvents } from "../stats/stats.pg.repo.ts";
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
  /** BIGINT: a string from Bun's SQL client. */
  created_at: string | bigint;
  seq: string | bigint;
}

const fromRow = (r: Row): MessageEvent => ({
  id: r.id,
  messageId: r.message_id,
  recipientId: r.recipient_id,
  kind: r.kind,
  details: JSON.parse(r.details_json),
  createdAtMs: pgInteger(r.created_at, "message_events.created_at"),
  seq: pgInteger(r.seq, "message_events.seq"),
});

/**
 * Records events, and queues every one clients may see for the webhook, in the caller's
 * transaction `tx` (insertEvents on SQLite): an event is never stored without its webhook
 * delivery, nor the reverse. The outbox row takes its accounts from the event's message.
 */
export async function pgRecordEvents(tx: SQL, events: readonly NewEvent[], opts: EventRecordOptions = {}): Promise<MessageEvent[]> {
  const webhook = opts.webhook ?? true;
  const stored: MessageEvent[] = [];
  for (const e of events) {
    const event: MessageEvent = { ...e, id: newId16(), seq: nextSeq(e.createdAtMs) };
    await tx`INSERT INTO message_events (id, message_id, recipient_id, kind, details_json, created_at, seq)
      VALUES (${event.id}, ${event.messageId}, ${event.recipientId}, ${event.kind}, ${JSON.stringify(event.details)}, ${event.createdAtMs}, ${event.seq})`;
    if (webhook && !isInternalKind(event.kind)) {
      await tx`INSERT INTO webhook_outbox (event_id, account_id, outbound_account_id, message_id, seq, state, attempts, next_attempt_at, created_at)
        SELECT ${event.id}, account_id, outbound_account_id, id, ${event.seq}, 'pending', 0, ${event.createdAtMs}, ${event.createdAtMs}
        FROM outbound_messages WHERE id = ${event.messageId}`;
    }
    stored.push(event);
  }
  await pgCountEvents(tx, stored);
  return stored;
}

/** Every event of the given recipients, oldest first (eventsOfRecipients on SQLite). */
export async function pgEventsOfRecipients(tx: SQL, recipientIds: readonly string[]): Promise<MessageEvent[]> {
  if (recipientIds.length === 0) return [];
  const rows: Row[] = await tx`SELECT id, message_id, recipient_id, kind, details_json, created_at, seq
    FROM message_events WHERE recipient_id = ANY(${[...recipientIds]}) ORDER BY seq`;
  return rows.map(fromRow);
}

export function createPgEventRepo(sql: SQL): EventRepo {
  return {
    record: (events, opts) => sql.begin((tx) => pgRecordEvents(tx, events, opts)),
    ofRecipients: (recipientIds) => pgEventsOfRecipients(sql, recipientIds),
  };
}

// ---------------------------------------------------------------- retention

/**
 * The events retention (createEventPurge on SQLite): events created before the cutoff go
 * with their webhook bookkeeping, but never one still waiting to be posted nor one of a
 * recipient still queued. One statement per window, which checks that again on the rows
 * it deletes (pg-purge-window.ts).
 */
export function createPgEventPurge(sql: SQL): Purge {
  const needed = sql`EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.event_id = e.id AND o.state = 'pending') OR EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.id = e.recipient_id AND r.state = 'queued')`;
  return pgRowidPurge("message_events", {
    window: (afterRowid, limit) =>
      sql`SELECT e.rowid, e.created_at AS at, (${needed}) AS keep FROM message_events e WHERE e.rowid > ${afterRowid} ORDER BY e.rowid LIMIT ${limit}`,
    async remove(rowids, beforeMs) {
      const [row] =
        await sql`WITH gone AS (DELETE FROM message_events e WHERE e.rowid = ANY(${rowids}) AND e.created_at < ${beforeMs} AND NOT (${needed}) RETURNING e.id),
        bookkeeping AS (DELETE FROM webhook_outbox WHERE event_id IN (SELECT id FROM gone))
        SELECT COUNT(*) AS n FROM gone`;
      return pgInteger(row.n, "deleted");
    },
  });
}

/** The events feature's side of the sent messages' purge on PostgreSQL (PgPurgeEvents, src/outbound/queue/ports.ts), in the purge's transaction. */
export const pgEventRetention = {
  async pendingAmong(tx: SQL, messageIds: readonly string[]): Promise<Set<string>> {
    const rows: { id: string }[] =
      await tx`SELECT DISTINCT e.message_id AS id FROM message_events e JOIN webhook_outbox o ON o.event_id = e.id
      WHERE e.message_id = ANY(${[...messageIds]}) AND o.state = 'pending'`;
    return new Set(rows.map((r) => r.id));
  },
  async deleteOfMessages(tx: SQL, messageIds: readonly string[]): Promise<void> {
    const ids = [...messageIds];
    await tx`DELETE FROM webhook_outbox WHERE event_id IN (SELECT id FROM message_events WHERE message_id = ANY(${ids}))`;
    await tx`DELETE FROM message_events WHERE message_id = ANY(${ids})`;
  },
};
