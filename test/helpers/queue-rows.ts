// Rows for tests that drive the outgoing queue's repository directly: one message to
// x@y.z and its recipient, with what each test is about given as overrides.
import { NO_TRACKING, type OutboundMessage, type OutboundRecipient } from "../../src/outbound/queue/message.ts";

export const queuedMessage = (id: string, overrides: Partial<OutboundMessage> = {}): OutboundMessage => ({
  id,
  accountId: "a",
  outboundAccountId: "o",
  from: "a@b.c",
  subject: null,
  messageId: `<${id}@x>`,
  to: ["x@y.z"],
  cc: [],
  tags: [],
  testMode: false,
  priority: "standard",
  sizeBytes: 1,
  tracking: NO_TRACKING,
  createdAtMs: 0,
  ...overrides,
});

export const queuedRecipient = (id: string, messageId: string, overrides: Partial<OutboundRecipient> = {}): OutboundRecipient => ({
  id,
  messageId,
  position: 0,
  email: "x@y.z",
  domain: "y.z",
  type: "to",
  status: "registration",
  state: "queued",
  lane: 1,
  attempts: 0,
  firstAttemptAtMs: null,
  nextAttemptAtMs: 0,
  ...overrides,
});
