-- MTA-STS policies of recipient domains (RFC 8461), kept until max_age so a restart
-- cannot strip a domain's protection (section 5.1).
CREATE TABLE mta_sts_policies (
  domain TEXT PRIMARY KEY,
  policy_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  mx_json TEXT NOT NULL,
  max_age INTEGER NOT NULL,
  fetched_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

-- The webhook dispatcher looks pending events up by account (in seq order), by batch and
-- by age; without these a backlog (a receiver down for days) is scanned on every wake-up.
CREATE INDEX webhook_outbox_batch ON webhook_outbox (batch_id) WHERE state = 'pending' AND batch_id IS NOT NULL;
CREATE INDEX webhook_outbox_pending_age ON webhook_outbox (created_at) WHERE state = 'pending';
