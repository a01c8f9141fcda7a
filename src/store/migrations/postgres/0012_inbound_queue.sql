-- Issue 35: inbound mail that waits for a target that is down, and spam refused at the door.
-- addresses.on_target_failure: "defer" (a 5xx, timeout or unreachable target gets 451, the
-- sender retries) or "queue" (Postroom accepts, keeps the message in inbound_queue and
-- posts it again itself). addresses.spam_threshold: a SpamAssassin score above which mail
-- is refused with 550 5.7.1; NULL = never.
ALTER TABLE addresses ADD COLUMN on_target_failure TEXT NOT NULL DEFAULT 'defer';
ALTER TABLE addresses ADD COLUMN spam_threshold DOUBLE PRECISION;

-- An incoming status's delivery state (delivered, rejected, deferred, queued, expired),
-- the POSTs made so far and when the next one is due; NULL on statuses written before.
ALTER TABLE incoming_statuses ADD COLUMN state TEXT;
ALTER TABLE incoming_statuses ADD COLUMN attempts BIGINT;
ALTER TABLE incoming_statuses ADD COLUMN next_attempt_at BIGINT;

-- A received message accepted for an address whose target failed: the bytes as sent,
-- our trace lines and what the payload's envelope said (facts, JSON), the transaction's
-- facts needed to post it again, and the statuses it updates. One node at a time posts a
-- row: the one whose lease (leased_by, lease_until) runs.
CREATE TABLE inbound_queue (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  address_id TEXT NOT NULL,
  status_ids TEXT NOT NULL,
  facts TEXT NOT NULL,
  message BYTEA NOT NULL,
  trace_bytes BIGINT NOT NULL,
  size BIGINT NOT NULL,
  attempts BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  next_attempt_at BIGINT NOT NULL,
  last_response TEXT,
  leased_by TEXT,
  lease_until BIGINT
);
CREATE INDEX inbound_queue_due ON inbound_queue (next_attempt_at);
CREATE INDEX inbound_queue_by_account ON inbound_queue (account_id, created_at);
