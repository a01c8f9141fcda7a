// SQL for message events, written once for both engines. Inserts run inside the caller's
// transaction (the change of state they record commits with them): recordEvents is a
// Script the outgoing queue runs in its own transaction, synchronously on SQLite and
// awaited on PostgreSQL (src/outbound/queue/wiring.ts); createEventRepo is the EventRepo
// port (events.port.ts), each call its own transaction. Reads serve E12, E13 and the
// webhooks. The retention purges are src/jobs/purges*.repo.ts.
import { newId16 } from "../lib/ids.ts";
import type { Db } from "../store/db/db.ts";
import { toInt } from "../store/db/dialect.ts";
import { all, run, runOn, type Script } from "../store/db/script.ts";
import { inList, sql } from "../store/db/sql.ts";
import { countEventsOf, type MessageAccounts } from "../stats/stats.repo.ts";
import { nextSeq } from "./event-seq.ts";
import type { EventRecordOptions, EventRepo } from "./events.port.ts";
import { type EventKind, isInternalKind } from "./kinds.ts";
import type { MessageEvent, NewEvent } from "./message-event.ts";
import { endpointTarget } from "./outbox.port.ts";
import { filterTakes } from "./webhook-endpoint.ts";

interface Row {
  id: string;
  message_id: string;
  recipient_id: string;
  kind: EventKind;
  details_json: string;
  created_at: unknown;
  seq: unknown;
}

const fromRow = (r: Row): MessageEvent => ({
  id: r.id,
  messageId: r.message_id,
  recipientId: r.recipient_id,
  kind: r.kind,
  details: JSON.parse(r.details_json),
  createdAtMs: toInt(r.created_at, "message_events.created_at"),
  seq: toInt(r.seq, "message_events.seq"),
});

/**
 * Records events, and queues every one clients may see for the webhook and for each
 * endpoint whose filter takes it (one outbox row per receiver: outbox.port.ts), in the
 * caller's transaction: an event is never stored without its webhook deliveries, nor the
 * reverse. The outbox rows take their accounts from the event's message. `webhook: false`
 * says the outbound account has no config webhook now: the dispatcher would only mark its
 * row dropped, so none is written (events recorded later, once a webhook is configured,
 * are posted as usual); its endpoints' rows are written all the same.
 */
export function* recordEvents(events: readonly NewEvent[], opts: EventRecordOptions = {}): Script<MessageEvent[]> {
  const webhook = opts.webhook ?? true;
  const stored: MessageEvent[] = [];
  // Each message's accounts (for the hourly counts) and its outbound account's endpoints,
  // read together once per message of the call: a call records the events of one delivery
  // attempt, mostly of one message, so this is one statement where there were two.
  const accountsOf = new Map<string, MessageAccounts>();
  const endpointsOf = new Map<string, { id: string; events: string }[]>();
  for (const e of events) {
    if (!endpointsOf.has(e.messageId)) {
      const rows = yield* all<MessageAccounts & { endpoint_id: string | null; events: string | null }>(sql`SELECT m.account_id,
          m.outbound_account_id, w.id AS endpoint_id, w.events
        FROM outbound_messages m LEFT JOIN webhook_endpoints w ON w.outbound_account_id = m.outbound_account_id WHERE m.id = ${e.messageId}`);
      if (rows[0]) accountsOf.set(e.messageId, rows[0]);
      endpointsOf.set(
        e.messageId,
        rows.flatMap((r) => (r.endpoint_id === null ? [] : [{ id: r.endpoint_id, events: r.events ?? "" }])),
      );
    }
    const event: MessageEvent = { ...e, id: newId16(), seq: nextSeq(e.createdAtMs) };
    yield* run(sql`INSERT INTO message_events (id, message_id, recipient_id, kind, details_json, created_at, seq)
      VALUES (${event.id}, ${event.messageId}, ${event.recipientId}, ${event.kind}, ${JSON.stringify(event.details)}, ${event.createdAtMs}, ${event.seq})`);
    if (!isInternalKind(event.kind)) {
      if (webhook)
        yield* run(sql`INSERT INTO webhook_outbox (event_id, account_id, outbound_account_id, message_id, seq, state, attempts, next_attempt_at, created_at, target)
          SELECT ${event.id}, account_id, outbound_account_id, id, ${event.seq}, 'pending', 0, ${event.createdAtMs}, ${event.createdAtMs}, outbound_account_id
          FROM outbound_messages WHERE id = ${event.messageId}`);
      const endpoints = endpointsOf.get(event.messageId) ?? [];
      // One row more for each endpoint whose filter takes the kind (webhook-endpoint.ts).
      for (const endpoint of endpoints)
        if (filterTakes(endpoint.events, event.kind))
          yield* run(sql`INSERT INTO webhook_outbox (event_id, account_id, outbound_account_id, message_id, seq, state, attempts, next_attempt_at, created_at, target)
            SELECT ${event.id}, account_id, outbound_account_id, id, ${event.seq}, 'pending', 0, ${event.createdAtMs}, ${event.createdAtMs}, ${endpointTarget(endpoint.id)}
            FROM outbound_messages WHERE id = ${event.messageId}`);
    }
    stored.push(event);
  }
  yield* countEventsOf(stored, accountsOf);
  return stored;
}

/** Every event of the given recipients, oldest (lowest seq) first. */
export function* eventsOfRecipients(recipientIds: readonly string[]): Script<MessageEvent[]> {
  if (recipientIds.length === 0) return [];
  const rows = yield* all<Row>(sql`SELECT id, message_id, recipient_id, kind, details_json, created_at, seq
    FROM message_events WHERE ${inList("recipient_id", recipientIds)} ORDER BY seq`);
  return rows.map(fromRow);
}

export function createEventRepo(db: Db): EventRepo {
  return {
    record: (events, opts) => db.tx((tx) => runOn(tx, recordEvents(events, opts))),
    ofRecipients: (recipientIds) => runOn(db, eventsOfRecipients(recipientIds)),
  };
}
