// The outgoing queue's repository opened on one engine for a contract test, with what a
// test reads beside it in the engine's own SQL: SQLite (createOutboundRepo) or PostgreSQL
// (createPgOutboundRepo), each with the real ports of the events, suppressions and
// idempotency features (wiring.ts).
import type { NewEvent } from "../../src/events/message-event.ts";
import type { OutboundMessage, OutboundRecipient, RecipientUpdate } from "../../src/outbound/queue/message.ts";
import { createPgOutboundRepo } from "../../src/outbound/queue/queue.pg.repo.ts";
import type { OutboundRepo } from "../../src/outbound/queue/queue.port.ts";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { pgQueuePorts, queuePorts } from "../../src/outbound/queue/wiring.ts";
import { pgInteger } from "../../src/store/pg-values.ts";
import type { EngineHandle, StoreEngine } from "../helpers/engines.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";

export interface OpenedQueue {
  repo: OutboundRepo;
  /** A recipient's row as stored (who holds it, its state), read with the engine's own SQL. */
  row(id: string): Promise<{ state: string; status: string; locked_by: string | null; attempts: number } | null>;
  /** How many rows of a table match `recipient_id` / `email` = value. */
  count(
    table: "message_events" | "suppressions" | "idempotency_keys",
    column: "recipient_id" | "email" | "answer",
    value: string,
  ): Promise<number>;
  handle: EngineHandle;
}

export async function openQueue(engine: StoreEngine): Promise<OpenedQueue> {
  const handle = await engine.open();
  if (handle.kind === "sqlite") {
    const db = handle.store.db;
    return {
      handle,
      repo: createOutboundRepo(handle.store, queuePorts(handle.store)),
      row: async (id) => db.query("SELECT state, status, locked_by, attempts FROM outbound_recipients WHERE id = ?").get(id) as never,
      count: async (table, column, value) =>
        (db.query(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ?`).get(value) as { n: number }).n,
    };
  }
  const sql = handle.sql;
  return {
    handle,
    repo: createPgOutboundRepo(sql, pgQueuePorts()),
    row: async (id) => {
      const rows = await sql`SELECT state, status, locked_by, attempts FROM outbound_recipients WHERE id = ${id}`;
      return rows[0] ? { ...rows[0], attempts: pgInteger(rows[0].attempts, "attempts") } : null;
    },
    count: async (table, column, value) => {
      const rows = await sql`SELECT COUNT(*) AS n FROM ${sql(table)} WHERE ${sql(column)} = ${value}`;
      return pgInteger(rows[0].n, "count");
    },
  };
}

// Past 2^32 ms, so a 32-bit column or binding would show.
export const NOW = 1_795_000_000_000;
export const LEASE_MS = 60_000;
/** Every table the queue writes, children first (EngineHandle.clear). */
export const QUEUE_TABLES = [
  "idempotency_keys",
  "suppressions",
  "webhook_outbox",
  "stats_hourly",
  "message_events",
  "outbound_message_bodies",
  "outbound_recipients",
  "outbound_messages",
];

export const ids = (claimed: { recipient: OutboundRecipient }[]) => claimed.map((c) => c.recipient.id);
export const delivered = (attempts: number): RecipientUpdate => ({
  status: "delivery",
  state: "done",
  attempts,
  firstAttemptAtMs: NOW,
  nextAttemptAtMs: NOW,
});
export const event = (messageId: string, recipientId: string, kind: NewEvent["kind"]): NewEvent => ({
  messageId,
  recipientId,
  kind,
  details: { attempt: 1 },
  createdAtMs: NOW,
});

/** Queues one message with one recipient per entry (id, then overrides), due at NOW unless told. */
export const queueIn = (
  repo: OutboundRepo,
  messageId: string,
  recipients: [string, Partial<OutboundRecipient>][],
  message: Partial<OutboundMessage> = {},
) =>
  repo.insert(
    queuedMessage(messageId, { createdAtMs: NOW, ...message }),
    recipients.map(([id, o], position) => queuedRecipient(id, messageId, { position, nextAttemptAtMs: NOW, ...o })),
    [],
    { webhook: false },
  );
