// Sent messages and their recipients for the events and outbox contract tests, on either
// engine: the outbox row takes its accounts from the event's message and its address from
// the event's recipient, so a test stores those first (the columns the events feature does
// not read get fixed values).
import type { EngineHandle } from "../helpers/engines.ts";

export interface SentMessage {
  id: string;
  accountId: string;
  outboundAccountId: string;
  /** Recipient IDs and addresses. */
  recipients: { id: string; email: string }[];
}

export const EVENT_TABLES = ["webhook_outbox", "message_events", "stats_hourly", "outbound_recipients", "outbound_messages"] as const;

export async function addMessage(h: EngineHandle, m: SentMessage): Promise<void> {
  const domain = (email: string) => email.slice(email.indexOf("@") + 1);
  if (h.kind === "sqlite") {
    h.store.db
      .query("INSERT INTO outbound_messages (id, account_id, outbound_account_id, mail_from, subject, message_id, to_json, cc_json, tags_json, test_mode, priority, size, created_at) VALUES (?, ?, ?, 'a@b.c', NULL, ?, '[]', '[]', '[]', 0, 'standard', 1, 0)")
      .run(m.id, m.accountId, m.outboundAccountId, `<${m.id}@x>`);
    m.recipients.forEach((r, position) =>
      h.store.db
        .query("INSERT INTO outbound_recipients (id, message_id, position, email, domain, type, status, state, lane, attempts, next_attempt_at) VALUES (?, ?, ?, ?, ?, 'to', 'registration', 'queued', 1, 0, 0)")
        .run(r.id, m.id, position, r.email, domain(r.email)),
    );
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
