// How the outgoing queue's rows map to the objects the rest of the code uses.
import { NO_TRACKING, type OutboundMessage, type OutboundRecipient, type Priority } from "./message.ts";

export interface MessageRow {
  id: string;
  account_id: string;
  outbound_account_id: string;
  mail_from: string;
  subject: string | null;
  message_id: string;
  to_json: string;
  cc_json: string;
  tags_json: string;
  test_mode: number;
  priority: Priority;
  size: number;
  tracking_json: string;
  created_at: number;
  send_at: number | null;
  metadata_json: string;
}

/** The columns named as the recipient's fields are; the others in snake case. */
export type RecipientRow = Omit<OutboundRecipient, "messageId" | "firstAttemptAtMs" | "nextAttemptAtMs"> & {
  message_id: string;
  first_attempt_at: number | null;
  next_attempt_at: number;
};

export const MESSAGE_COLUMNS =
  "id, account_id, outbound_account_id, mail_from, subject, message_id, to_json, cc_json, tags_json, test_mode, priority, size, tracking_json, created_at, send_at, metadata_json";
export const RECIPIENT_COLUMNS =
  "id, message_id, position, email, domain, type, status, state, lane, attempts, first_attempt_at, next_attempt_at";

export const messageFromRow = (r: MessageRow): OutboundMessage => ({
  id: r.id,
  accountId: r.account_id,
  outboundAccountId: r.outbound_account_id,
  from: r.mail_from,
  subject: r.subject,
  messageId: r.message_id,
  to: JSON.parse(r.to_json),
  cc: JSON.parse(r.cc_json),
  tags: JSON.parse(r.tags_json),
  testMode: r.test_mode === 1,
  priority: r.priority,
  sizeBytes: r.size,
  tracking: { ...NO_TRACKING, ...JSON.parse(r.tracking_json) },
  createdAtMs: r.created_at,
  sendAtMs: r.send_at ?? null,
  metadata: r.metadata_json ? JSON.parse(r.metadata_json) : {},
});

export const recipientFromRow = (r: RecipientRow): OutboundRecipient => ({
  id: r.id,
  messageId: r.message_id,
  position: r.position,
  email: r.email,
  domain: r.domain,
  type: r.type,
  status: r.status,
  state: r.state,
  lane: r.lane,
  attempts: r.attempts,
  firstAttemptAtMs: r.first_attempt_at,
  nextAttemptAtMs: r.next_attempt_at,
});
