// SQL for message events, written once for both engines. Inserts run inside the caller's
// transaction (the change of state they record commits with them): recordEvents is a
// Script the outgoing queue runs in its own transaction, synchronously on SQLite and
// awaited on PostgreSQL (src/outbound/queue/wiring.ts); createEventRepo is the EventRepo
// port (events.port.ts), each call its own transaction. Reads serve E12, E13 and the
// webhooks. The retention purges are src/jobs/purges*.repo.ts.
import { newId16 } from "../lib/ids.ts";
import type { Db } from "../store/db/db.ts";
import { toInt } from "../store/db/dialect.ts";
import { all, runEach, runOn, type Script } from "../store/db/script.ts";
import { inList, join, type Sql, sql } from "../store/db/sql.ts";
import { eventCountStatements, type MessageAccounts } from "../stats/stats.repo.ts";
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

/** Rows per multi-row statement (at most 10 values a row): far below either engine's bound on parameters. */
const ROWS_PER_STATEMENT = 500;

/** `pieces` in multi-row statements of ROWS_PER_STATEMENT rows at most, each made by `statement` from the joined rows. */
function inChunks(pieces: readonly Sql[], statement: (rows: Sql) => Sql): Sql[] {
  const statements: Sql[] = [];
  for (let i = 0; i < pieces.length; i += ROWS_PER_STATEMENT)
    statements.push(statement(join(pieces.slice(i, i + ROWS_PER_STATEMENT), ", ")));
  return statements;
}

/**
 * Records events, and queues every one clients may see for the webhook and for each
 * endpoint whose filter takes it (one outbox row per receiver: outbox.port.ts), in the
 * caller's transaction: an event is never stored without its webhook deliveries, nor the
 * reverse. The outbox rows take their accounts from the event's message (none for an event
 * whose message is not stored). `webhook: false` says the outbound account has no config
 * webhook now: the dispatcher would only mark its row dropped, so none is written (events
 * recorded later, once a webhook is configured, are posted as usual); its endpoints' rows
 * are written all the same. A few statements per call whatever its size (issue 38): the
 * messages' accounts and endpoints in one SELECT, the events in one multi-row INSERT, the
 * outbox rows in another, the hourly counts in one upsert, these three sent together; a
 * batch of sends on PostgreSQL records all its messages' events in one call.
 */
export function* recordEvents(events: readonly NewEvent[], opts: EventRecordOptions = {}): Script<MessageEvent[]> {
  if (events.length === 0) return [];
  const webhook = opts.webhook ?? true;
  // Each message's accounts (for the hourly counts and the outbox rows) and its outbound
  // account's endpoints, read together for every message of the call.
  const accountsOf = new Map<string, MessageAccounts>();
  const endpointsOf = new Map<string, { id: string; events: string }[]>();
  const messageIds = [...new Set(events.map((e) => e.messageId))];
  for (let i = 0; i < messageIds.length; i += ROWS_PER_STATEMENT) {
    const rows = yield* all<MessageAccounts & { id: string; endpoint_id: string | null; events: string | null }>(sql`SELECT m.id,
        m.account_id, m.outbound_account_id, w.id AS endpoint_id, w.events
      FROM outbound_messages m LEFT JOIN webhook_endpoints w ON w.outbound_account_id = m.outbound_account_id
      WHERE ${inList("m.id", messageIds.slice(i, i + ROWS_PER_STATEMENT))}`);
    for (const r of rows) {
      accountsOf.set(r.id, r);
      const endpoints = endpointsOf.get(r.id) ?? [];
      if (r.endpoint_id !== null) endpoints.push({ id: r.endpoint_id, events: r.events ?? "" });
      endpointsOf.set(r.id, endpoints);
    }
  }
  const stored = events.map((e): MessageEvent => ({ ...e, id: newId16(), seq: nextSeq(e.createdAtMs) }));
  const eventRows = inChunks(
    stored.map(
      (e) => sql`(${e.id}, ${e.messageId}, ${e.recipientId}, ${e.kind}, ${JSON.stringify(e.details)}, ${e.createdAtMs}, ${e.seq})`,
    ),
    (rows) => sql`INSERT INTO message_events (id, message_id, recipient_id, kind, details_json, created_at, seq) VALUES ${rows}`,
  );
  const outbox: Sql[] = [];
  for (const e of stored) {
    const m = accountsOf.get(e.messageId);
    if (isInternalKind(e.kind) || m === undefined) continue;
    const row = (target: string) =>
      sql`(${e.id}, ${m.account_id}, ${m.outbound_account_id}, ${e.messageId}, ${e.seq}, 'pending', 0, ${e.createdAtMs}, ${e.createdAtMs}, ${target})`;
    if (webhook) outbox.push(row(m.outbound_account_id));
    // One row more for each endpoint whose filter takes the kind (webhook-endpoint.ts).
    for (const endpoint of endpointsOf.get(e.messageId) ?? [])
      if (filterTakes(endpoint.events, e.kind)) outbox.push(row(endpointTarget(endpoint.id)));
  }
  const outboxRows = inChunks(
    outbox,
    (rows) =>
      sql`INSERT INTO webhook_outbox (event_id, account_id, outbound_account_id, message_id, seq, state, attempts, next_attempt_at, created_at, target) VALUES ${rows}`,
  );
  // The events, their outbox rows and their counts in one round trip (runEach).
  yield* runEach([...eventRows, ...outboxRows, ...eventCountStatements(stored, accountsOf)]);
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
