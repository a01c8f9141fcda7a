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
  created_at BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_by_outbound_account ON webhook_endpoints (outbound_account_id, created_at, id);
CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, created_at, id);

-- The outbox keeps one row per event and receiver: `target` is the outbound account's id
-- for the config's webhook (every row made before this migration) or "endpoint:<id>" for
-- an endpoint. Each target is its own lane: its batches, its order, its retries.
ALTER TABLE webhook_outbox ADD COLUMN target TEXT;
UPDATE webhook_outbox SET target = outbound_account_id;
ALTER TABLE webhook_outbox ALTER COLUMN target SET NOT NULL;
ALTER TABLE webhook_outbox DROP CONSTRAINT webhook_outbox_pkey;
ALTER TABLE webhook_outbox ADD PRIMARY KEY (event_id, target);
DROP INDEX webhook_outbox_pending;
CREATE INDEX webhook_outbox_pending ON webhook_outbox (state, target, seq);
