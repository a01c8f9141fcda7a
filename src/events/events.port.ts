// The port through which message events are recorded and read, whatever the engine:
// createEventRepo (events.repo.ts) implements it once for SQLite and PostgreSQL, and
// test/events/events-repo.contract.test.ts runs the same cases on both. The queue records
// events inside its own transaction instead, through QueueEventLog
// (src/outbound/queue/ports.ts): the recordEvents Script, on either engine.
import type { MessageEvent, NewEvent } from "./message-event.ts";

export interface EventRecordOptions {
  /** False when the outbound account has no webhook now: no outbox rows are written. */
  webhook?: boolean;
}

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface EventRepo {
  /** Records events (and their webhook outbox rows unless `webhook` is false) in one transaction; returns them with id and seq. */
  record(events: readonly NewEvent[], opts?: EventRecordOptions): Promise<MessageEvent[]>;
  /** Every event of these recipients, oldest (lowest seq) first. */
  ofRecipients(recipientIds: readonly string[]): Promise<MessageEvent[]>;
}
