// The outgoing queue's writes of issue 34 on PostgreSQL, apart from queue.pg.repo.ts: a
// batch of messages in multi-row INSERTs (POST /messages/batch), and a scheduled message
// moved to another send_at (PATCH /outbound_messages/{id}).
import type { SQL, TransactionSQL } from "bun";
import type { NewEvent } from "../../events/message-event.ts";
import { pgInteger } from "../../store/pg-values.ts";
import type { PgQueuePorts } from "./ports.ts";
import type { OutboundMessage, OutboundRecipient } from "./message.ts";
import { type RescheduleResult, rescheduleRefusal } from "./queue.port.ts";
import type { Big } from "./queue-read.pg.repo.ts";

/** Rows per multi-row INSERT: under PostgreSQL's 65,535 bound parameters at 16 columns a row. */
const PG_ROWS_PER_INSERT = 2000;

/** Messages' rows in `tx`: one multi-row INSERT per table, whatever their number, sent together. */
export async function writeMessages(
  tx: TransactionSQL,
  ports: PgQueuePorts,
  queued: readonly { message: OutboundMessage; recipients: OutboundRecipient[]; events: NewEvent[]; raw?: Buffer }[],
  webhook: boolean | undefined,
): Promise<void> {
  if (queued.length === 0) return;
  const messages = queued.map(({ message: m }) => ({
    id: m.id,
    account_id: m.accountId,
    outbound_account_id: m.outboundAccountId,
    mail_from: m.from,
    subject: m.subject,
    message_id: m.messageId,
    to_json: JSON.stringify(m.to),
    cc_json: JSON.stringify(m.cc),
    tags_json: JSON.stringify(m.tags),
    test_mode: m.testMode ? 1 : 0,
    priority: m.priority,
    size: m.sizeBytes,
    tracking_json: JSON.stringify(m.tracking),
    created_at: m.createdAtMs,
    send_at: m.sendAtMs ?? null,
    metadata_json: JSON.stringify(m.metadata ?? {}),
  }));
  // The INSERTs go together, in this order (a recipient after its message): one round trip.
  const inserts: PromiseLike<unknown>[] = [];
  for (let i = 0; i < messages.length; i += PG_ROWS_PER_INSERT)
    inserts.push(tx`INSERT INTO outbound_messages ${tx(messages.slice(i, i + PG_ROWS_PER_INSERT))}`);
  const bodies = queued.flatMap((q) => (q.raw ? [{ message_id: q.message.id, raw: q.raw }] : []));
  if (bodies.length > 0) inserts.push(tx`INSERT INTO outbound_message_bodies ${tx(bodies)}`);
  // The row's columns: the recipient's fields, three of them renamed (rows.ts).
  const rows = queued.flatMap((q) =>
    q.recipients.map(({ messageId, firstAttemptAtMs, nextAttemptAtMs, ...named }) => ({
      ...named,
      message_id: messageId,
      first_attempt_at: firstAttemptAtMs,
      next_attempt_at: nextAttemptAtMs,
    })),
  );
  // PostgreSQL binds at most 65,535 parameters per statement: 12 a row, so 2,000 rows at a time.
  for (let i = 0; i < rows.length; i += PG_ROWS_PER_INSERT)
    inserts.push(tx`INSERT INTO outbound_recipients ${tx(rows.slice(i, i + PG_ROWS_PER_INSERT))}`);
  await Promise.all(inserts);
  await ports.events.record(
    tx,
    queued.flatMap((q) => q.events),
    { webhook },
  );
}

/** Moves a message's first attempt (OutboundRepo.reschedule), its recipients locked against a claim meanwhile. */
export async function reschedulePg(sql: SQL, messageId: string, sendAtMs: number, nowMs: number): Promise<RescheduleResult> {
  return sql.begin(async (tx) => {
    // FOR UPDATE: a node claiming meanwhile either skips these rows (SKIP LOCKED) or has
    // leased them already, which this reads as being delivered.
    const rows: { state: string; attempts: Big; locked_until: Big | null }[] =
      await tx`SELECT state, attempts, locked_until FROM outbound_recipients WHERE message_id = ${messageId} FOR UPDATE`;
    const refused = rescheduleRefusal(
      rows.map((r) => ({
        state: r.state,
        attempts: pgInteger(r.attempts, "outbound_recipients.attempts"),
        lockedUntilMs: r.locked_until === null ? null : pgInteger(r.locked_until, "outbound_recipients.locked_until"),
      })),
      nowMs,
    );
    if (refused) return { refused };
    await tx`UPDATE outbound_messages SET send_at = ${sendAtMs} WHERE id = ${messageId}`;
    const moved: { count: number } =
      await tx`UPDATE outbound_recipients SET next_attempt_at = ${sendAtMs} WHERE message_id = ${messageId} AND state = 'queued' AND attempts = 0`;
    return { rescheduled: moved.count };
  });
}
