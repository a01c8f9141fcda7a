-- The webhook outbox: one row per event to post, written in the same transaction as the
-- event, batched per outbound account in event order, retried until acknowledged or
-- expired. Suppressions: recipients an outbound account no longer sends to.
CREATE TABLE webhook_outbox (
  event_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  -- pending, sent, expired, or dropped (no webhook configured when it was due)
  state TEXT NOT NULL,
  -- Set when the event is first posted; a retry posts the same batch again.
  batch_id TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX webhook_outbox_pending ON webhook_outbox (state, outbound_account_id, seq);

CREATE TABLE suppressions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  email TEXT NOT NULL,
  reason TEXT NOT NULL,
  details_json TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX suppressions_by_address ON suppressions (outbound_account_id, email);
CREATE INDEX suppressions_by_account ON suppressions (account_id, created_at, id);

-- Open and click tracking chosen when the message was accepted (the account's setting then).
ALTER TABLE outbound_messages ADD COLUMN tracking_json TEXT NOT NULL DEFAULT '{}';
