// Delivery outcomes on PostgreSQL that end together, written together (issue 38): one
// transaction (pg-batch-writer.ts) and, for all of them, one UPDATE of the recipients, one
// recordEvents call (one SELECT, one multi-row INSERT of the events, the outbox rows, one
// counts upsert) where each outcome cost its UPDATE, SELECT, INSERT and upsert, four round
// trips. The lease rule of queue.pg.repo.ts holds per row: a recipient is changed only while
// the worker that reports it holds its lease (locked_by, locked_until >= now); an outcome
// whose lease moved on writes nothing (no events, no suppression) and is answered null.
import type { SQL, TransactionSQL } from "bun";
import type { MessageEvent, NewEvent } from "../../events/message-event.ts";
import { PgBatchWriter } from "../../store/pg-batch-writer.ts";
import { type SuppressionOrder, suppressionEntry } from "../suppressions/suppression.ts";
import type { RecipientUpdate } from "./message.ts";
import type { PgQueuePorts } from "./ports.ts";
import type { EventOptions } from "./queue.port.ts";

export interface PgOutcome {
  recipientId: string;
  update: RecipientUpdate;
  events: NewEvent[];
  opts: EventOptions;
  /** The lease's holder and the time it is checked at. */
  holder: { workerId: string; nowMs: number };
}

/** Suppresses a recipient of a sent message, in `tx` (suppressRecipient on SQLite). */
export async function suppressIn(
  tx: TransactionSQL,
  ports: PgQueuePorts,
  recipientId: string,
  order: SuppressionOrder,
  details: Record<string, unknown>,
  nowMs: number,
): Promise<void> {
  // LOWER in "C": ASCII letters only, as SQLite's LOWER.
  const rows: { account_id: string; outbound_account_id: string; email: string }[] =
    await tx`SELECT m.account_id, m.outbound_account_id, LOWER(r.email COLLATE "C") AS email FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id WHERE r.id = ${recipientId}`;
  const row = rows[0];
  if (row) await ports.suppressions.suppress(tx, suppressionEntry(row, order, details, nowMs));
}

/** The outcomes in `tx`; each one's recorded events, or null where its lease had moved on. */
async function writeOutcomes(tx: TransactionSQL, ports: PgQueuePorts, items: readonly PgOutcome[]): Promise<(MessageEvent[] | null)[]> {
  // A recipient twice in one batch (never from one worker's hand): one statement cannot
  // change a row twice, so each goes alone, in order, as they did before batching.
  if (new Set(items.map((o) => o.recipientId)).size < items.length) {
    const out: (MessageEvent[] | null)[] = [];
    for (const o of items) out.push(...(await writeOutcomes(tx, ports, [o])));
    return out;
  }
  const rows = items.map(({ recipientId, update: u, holder }) => ({
    id: recipientId,
    status: u.status,
    state: u.state,
    attempts: u.attempts,
    first_attempt_at: u.firstAttemptAtMs,
    next_attempt_at: u.nextAttemptAtMs,
    holder: holder.workerId,
    now: holder.nowMs,
  }));
  // One JSON parameter for every row (bound as text: as jsonb the client would encode the
  // string as a JSON string), its columns typed by jsonb_to_recordset. The IDs again as an
  // array: without it the planner, which cannot see into the JSON, joins by a hash over a
  // sequential scan of every recipient, a cost that grows with the table; with it each row
  // is found by the primary key. The row lock
  // this UPDATE takes keeps a claim from moving a recipient until the commit.
  const changed: { id: string }[] = await tx`UPDATE outbound_recipients r
    SET status = v.status, state = v.state, attempts = v.attempts, first_attempt_at = v.first_attempt_at,
      next_attempt_at = v.next_attempt_at, locked_by = NULL, locked_until = NULL
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
      AS v(id TEXT, status TEXT, state TEXT, attempts BIGINT, first_attempt_at BIGINT, next_attempt_at BIGINT, holder TEXT, now BIGINT)
    WHERE r.id = ANY(${tx.array(
      rows.map((r) => r.id),
      "TEXT",
    )}) AND r.id = v.id AND r.locked_by = v.holder AND r.locked_until >= v.now
    RETURNING r.id`;
  const held = new Set(changed.map((r) => r.id));
  for (const o of items) {
    const last = o.events.at(-1);
    if (held.has(o.recipientId) && o.update.suppress)
      await suppressIn(tx, ports, o.recipientId, o.update.suppress, last?.details ?? {}, last?.createdAtMs ?? 0);
  }
  // One recordEvents call per webhook setting (it takes one for all its events).
  const results = new Map<PgOutcome, MessageEvent[]>();
  for (const webhook of [undefined, true, false]) {
    const group = items.filter((o) => held.has(o.recipientId) && o.opts.webhook === webhook);
    if (group.length === 0) continue;
    const stored = await ports.events.record(
      tx,
      group.flatMap((o) => o.events),
      { webhook },
    );
    // recordEvents answers its events in the order given: each outcome takes its own.
    let at = 0;
    for (const o of group) {
      results.set(o, stored.slice(at, at + o.events.length));
      at += o.events.length;
    }
  }
  return items.map((o) => results.get(o) ?? null);
}

/**
 * finishAttempt's writer: outcomes reported while a batch commits go together in the next.
 * `onEvents` runs after a commit that recorded events for a webhook (the dispatcher wakes).
 */
export function pgOutcomeWriter(sql: SQL, ports: PgQueuePorts, onEvents: () => void) {
  const batches = new PgBatchWriter<PgOutcome, MessageEvent[] | null>(sql, (tx, items) => writeOutcomes(tx, ports, items));
  return async (outcome: PgOutcome): Promise<MessageEvent[] | null> => {
    const recorded = await batches.write(outcome);
    if (recorded && outcome.opts.webhook !== false) onEvents();
    return recorded;
  };
}
