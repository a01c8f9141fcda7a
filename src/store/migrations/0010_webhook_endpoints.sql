-- Webhook endpoints per outbound account, made through the account API (issue 33,
-- src/events/webhook-endpoints.repo.ts). An endpoint takes the event kinds its filter
-- names (`events`: ",delivery,bounce," or "" for every kind); its token and Standard
-- Webhooks signing secret are sealed (src/lib/secret-key.ts), never in clear.
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  token TEXT,
  signing_secret TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_by_outbound_account ON webhook_endpoints (outbound_account_id, created_at, id);
CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, created_at, id);

-- The outbox keeps one row per event and receiver: `target` is the outbound account's id
-- for the config's webhook (every row made before this migration) or "endpoint:<id>" for
-- an endpoint. Each target is its own lane: its batches, its order, its retries. SQLite
-- cannot change a primary key in place, so the table is made again.
CREATE TABLE webhook_outbox_new (
  event_id TEXT NOT NULL,
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
  created_at INTEGER NOT NULL,
  target TEXT NOT NULL,
  PRIMARY KEY (event_id, target)
);
INSERT INTO webhook_outbox_new (event_id, account_id, outbound_account_id, message_id, seq, state, batch_id, attempts, next_attempt_at, created_at, target)
  SELECT event_id, account_id, outbound_account_id, message_id, seq, state, batch_id, attempts, next_attempt_at, created_at, outbound_account_id
  FROM webhook_outbox ORDER BY rowid;
DROP TABLE webhook_outbox;
ALTER TABLE webhook_outbox_new RENAME TO webhook_outbox;
CREATE INDEX webhook_outbox_pending ON webhook_outbox (state, target, seq);
CREATE INDEX webhook_outbox_batch ON webhook_outbox (batch_id) WHERE state = 'pending' AND batch_id IS NOT NULL;
CREATE INDEX webhook_outbox_pending_age ON webhook_outbox (created_at) WHERE state = 'pending';
