// The events side of the sent messages' purge (src/outbound/queue/purge.repo.ts), on
// SQLite and on the purge's own connection: which messages still have an event waiting for
// its webhook POST (they are kept), and the deletion of a message's events with it. Here,
// not in the queue, because the tables are the events feature's.
import type { Database } from "bun:sqlite";

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
