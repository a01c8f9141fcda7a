// The outgoing queue's writes of a message's rows and of issue 34's reschedule on SQLite,
// apart from queue.repo.ts (which runs them in its grouped commits).
import type { Database } from "bun:sqlite";
import type { NewEvent } from "../../events/message-event.ts";
import type { Store } from "../../store/store.ts";
import type { OutboundMessage, OutboundRecipient } from "./message.ts";
import type { QueueEventLog } from "./ports.ts";
import { type RescheduleResult, rescheduleRefusal } from "./queue.port.ts";
import { MESSAGE_COLUMNS, RECIPIENT_COLUMNS } from "./rows.ts";

/** Writes a message's rows (the message, its bytes, its recipients, their events) in the caller's transaction. */
export function messageWriter(db: Database, eventLog: QueueEventLog) {
  const insertMessage = db.query(
    `INSERT INTO outbound_messages (${MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertBody = db.query("INSERT INTO outbound_message_bodies (message_id, raw) VALUES (?, ?)");
  const insertRecipient = db.query(`INSERT INTO outbound_recipients (${RECIPIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  return (q: { message: OutboundMessage; recipients: OutboundRecipient[]; events: NewEvent[]; raw?: Buffer }, webhook?: boolean) => {
    const m = q.message;
    insertMessage.run(
      m.id,
      m.accountId,
      m.outboundAccountId,
      m.from,
      m.subject,
      m.messageId,
      JSON.stringify(m.to),
      JSON.stringify(m.cc),
      JSON.stringify(m.tags),
      m.testMode ? 1 : 0,
      m.priority,
      m.sizeBytes,
      JSON.stringify(m.tracking),
      m.createdAtMs,
      m.sendAtMs ?? null,
      JSON.stringify(m.metadata ?? {}),
    );
    if (q.raw) insertBody.run(m.id, q.raw);
    for (const r of q.recipients)
      insertRecipient.run(
        r.id,
        r.messageId,
        r.position,
        r.email,
        r.domain,
        r.type,
        r.status,
        r.state,
        r.lane,
        r.attempts,
        r.firstAttemptAtMs,
        r.nextAttemptAtMs,
      );
    eventLog.record(q.events, { webhook });
  };
}

/** Moves a message's first attempt (OutboundRepo.reschedule) in one transaction. */
export function rescheduleSqlite(store: Store, messageId: string, sendAtMs: number, nowMs: number): RescheduleResult {
  const { db } = store;
  return store.tx(() => {
    const rows = (
      db.query("SELECT state, attempts, locked_until FROM outbound_recipients WHERE message_id = ?").all(messageId) as {
        state: string;
        attempts: number;
        locked_until: number | null;
      }[]
    ).map((r) => ({ state: r.state, attempts: r.attempts, lockedUntilMs: r.locked_until }));
    const refused = rescheduleRefusal(rows, nowMs);
    if (refused) return { refused };
    db.query("UPDATE outbound_messages SET send_at = ? WHERE id = ?").run(sendAtMs, messageId);
    const moved = db
      .query("UPDATE outbound_recipients SET next_attempt_at = ? WHERE message_id = ? AND state = 'queued' AND attempts = 0")
      .run(sendAtMs, messageId).changes;
    return { rescheduled: moved };
  });
}
