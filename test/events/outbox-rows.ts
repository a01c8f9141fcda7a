// Sent messages and their recipients for the events and outbox contract tests, on either
// engine: the outbox row takes its accounts from the event's message and its address from
// the event's recipient, so a test stores those first (the columns the events feature does
// not read get fixed values).
import type { EventRepo } from "../../src/events/events.port.ts";
import { createEventRepo } from "../../src/events/events.repo.ts";
import { createPgOutboxRepo } from "../../src/events/outbox.pg.repo.ts";
import type { OutboxRepo } from "../../src/events/outbox.port.ts";
import { createOutboxRepo } from "../../src/events/outbox.repo.ts";
import { afterAll, beforeAll, beforeEach } from "bun:test";
import type { EngineHandle, StoreEngine } from "../helpers/engines.ts";

export interface SentMessage {
  id: string;
  accountId: string;
  outboundAccountId: string;
  /** Recipient IDs and addresses. */
  recipients: { id: string; email: string }[];
}

export const EVENT_TABLES = ["webhook_outbox", "message_events", "stats_hourly", "outbound_recipients", "outbound_messages"] as const;

export interface OpenedEvents {
  handle: EngineHandle;
  events: EventRepo;
  outbox: OutboxRepo;
}

/** An engine with its events and outbox repositories. */
export async function openEvents(engine: StoreEngine): Promise<OpenedEvents> {
  const handle = await engine.open();
  return handle.kind === "sqlite"
    ? { handle, events: createEventRepo(handle.db), outbox: createOutboxRepo(handle.store) }
    : { handle, events: createEventRepo(handle.db), outbox: createPgOutboxRepo(handle.sql) };
}

export async function addMessage(h: EngineHandle, m: SentMessage): Promise<void> {
  const domain = (email: string) => email.slice(email.indexOf("@") + 1);
  if (h.kind === "sqlite") {
    h.store.db
      .query(
        "INSERT INTO outbound_messages (id, account_id, outbound_account_id, mail_from, subject, message_id, to_json, cc_json, tags_json, test_mode, priority, size, created_at) VALUES (?, ?, ?, 'a@b.c', NULL, ?, '[]', '[]', '[]', 0, 'standard', 1, 0)",
      )
      .run(m.id, m.accountId, m.outboundAccountId, `<${m.id}@x>`);
    for (const [position, r] of m.recipients.entries())
      h.store.db
        .query(
          "INSERT INTO outbound_recipients (id, message_id, position, email, domain, type, status, state, lane, attempts, next_attempt_at) VALUES (?, ?, ?, ?, ?, 'to', 'registration', 'queued', 1, 0, 0)",
        )
        .run(r.id, m.id, position, r.email, domain(r.email));
    return;
  }
  const { sql } = h;
  await sql`INSERT INTO outbound_messages (id, account_id, outbound_account_id, mail_from, subject, message_id, to_json, cc_json, tags_json, test_mode, priority, size, created_at)
    VALUES (${m.id}, ${m.accountId}, ${m.outboundAccountId}, 'a@b.c', NULL, ${`<${m.id}@x>`}, '[]', '[]', '[]', 0, 'standard', 1, 0)`;
  for (const [position, r] of m.recipients.entries()) {
    await sql`INSERT INTO outbound_recipients (id, message_id, position, email, domain, type, status, state, lane, attempts, next_attempt_at)
      VALUES (${r.id}, ${m.id}, ${position}, ${r.email}, ${domain(r.email)}, 'to', 'registration', 'queued', 1, 0, 0)`;
  }
}

/**
 * Opens the engine for a describe block (once) and before each case empties the events'
 * tables and stores `messages`; the returned object's repositories are set by then.
 */
export function eventEngine(engine: StoreEngine, messages: readonly SentMessage[]): OpenedEvents {
  const opened = {} as OpenedEvents;
  beforeAll(async () => {
    if (engine.available()) Object.assign(opened, await openEvents(engine));
  });
  afterAll(async () => opened.handle?.close());
  beforeEach(async () => {
    if (!opened.handle) return;
    await opened.handle.clear(EVENT_TABLES);
    for (const m of messages) await addMessage(opened.handle, m);
  });
  return opened;
}
