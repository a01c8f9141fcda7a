-- The schema of Postroom's SQLite store, as the first release has it. The migrations
-- written while Postroom was built (0001-0016, never released) are squashed into this
-- one; later changes are new files with the next number (index.ts).

CREATE TABLE store_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE addresses (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  -- The target URL with its user name; the password apart, so searches and logs of the
  -- URL never touch it. Both are sent as Basic auth; the password is masked on read.
  target TEXT NOT NULL,
  target_password TEXT,
  target_format TEXT NOT NULL,
  nickname TEXT,
  attachments_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER,
  -- (beyond) Standard Webhooks signing of the POSTs to the target: the secret (whsec_...,
  -- encrypted) or NULL when the address does not sign.
  signing_secret TEXT,
  -- (beyond) Keep each received message (in the attachment store, local when there is
  -- none) and send its signed URL as envelope.store_url.
  store_messages INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX addresses_by_account ON addresses (account_id, created_at, id);

CREATE TABLE custom_domains (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  address_id TEXT NOT NULL REFERENCES addresses (id),
  domain TEXT NOT NULL,
  auth_regex TEXT,
  domain_target TEXT,
  domain_target_password TEXT,
  mx_verified INTEGER NOT NULL DEFAULT 0,
  mx_checked_at INTEGER,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER
);

CREATE INDEX custom_domains_by_address ON custom_domains (address_id, created_at, id);

CREATE UNIQUE INDEX custom_domains_live_domain ON custom_domains (domain) WHERE deleted_at IS NULL;

CREATE TABLE outbound_messages (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  mail_from TEXT NOT NULL,
  subject TEXT,
  message_id TEXT NOT NULL,
  to_json TEXT NOT NULL,
  cc_json TEXT NOT NULL,
  tags_json TEXT NOT NULL,
  test_mode INTEGER NOT NULL,
  priority TEXT NOT NULL,
  size INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  -- Open and click tracking chosen when the message was accepted (the account's setting then).
  tracking_json TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX outbound_messages_by_outbound_account ON outbound_messages (outbound_account_id, created_at, id);

CREATE TABLE outbound_recipients (
  -- Random, and part of the bounce address, so a bounce names its recipient unforgeably.
  id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL REFERENCES outbound_messages (id),
  -- Order of the recipient in the message (to, then cc, then bcc).
  position INTEGER NOT NULL,
  email TEXT NOT NULL,
  domain TEXT NOT NULL,
  type TEXT NOT NULL,
  -- The kind of the latest lifecycle event (registration, dispatch, delivery, ...).
  status TEXT NOT NULL,
  -- queued: waiting for an attempt; done: delivered, bounced, suppressed or test mode.
  state TEXT NOT NULL,
  -- 0 priority, 1 standard, 2 digest: lower lanes are served first.
  lane INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  first_attempt_at INTEGER,
  next_attempt_at INTEGER NOT NULL,
  locked_by TEXT,
  locked_until INTEGER
);

CREATE INDEX outbound_recipients_due ON outbound_recipients (state, lane, next_attempt_at);

CREATE INDEX outbound_recipients_by_message ON outbound_recipients (message_id);

CREATE TABLE message_events (
  id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  details_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  -- Strictly increasing, so events of one recipient keep their order within a millisecond.
  seq INTEGER NOT NULL
);

CREATE INDEX message_events_by_recipient ON message_events (recipient_id, seq);

CREATE INDEX message_events_by_message ON message_events (message_id, seq);

CREATE TABLE sending_domains (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  domain TEXT NOT NULL,
  dkim_selector TEXT NOT NULL,
  dkim_public_key TEXT NOT NULL,
  dkim_private_key_enc TEXT NOT NULL,
  ed25519_selector TEXT NOT NULL,
  ed25519_public_key TEXT NOT NULL,
  ed25519_private_key_enc TEXT NOT NULL,
  dkim_verified INTEGER NOT NULL DEFAULT 0,
  ed25519_verified INTEGER NOT NULL DEFAULT 0,
  return_path_verified INTEGER NOT NULL DEFAULT 0,
  spf_verified INTEGER NOT NULL DEFAULT 0,
  -- Why each check failed at the last look (JSON object by check), for dns_records.
  reasons_json TEXT NOT NULL DEFAULT '{}',
  verified_at INTEGER,
  -- Set when a verified domain's checks start failing; sending stops after the grace period.
  failing_since INTEGER,
  checked_at INTEGER,
  next_check_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER
);

CREATE INDEX sending_domains_by_account ON sending_domains (account_id, created_at, id);

CREATE INDEX sending_domains_due ON sending_domains (next_check_at);

CREATE UNIQUE INDEX sending_domains_live_domain ON sending_domains (account_id, domain) WHERE deleted_at IS NULL;

CREATE TABLE sending_domain_events (
  id TEXT PRIMARY KEY,
  domain_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  details_json TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE INDEX sending_domain_events_by_domain ON sending_domain_events (domain_id, created_at);

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

CREATE TABLE mta_sts_policies (
  domain TEXT PRIMARY KEY,
  policy_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  mx_json TEXT NOT NULL,
  max_age INTEGER NOT NULL,
  fetched_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

CREATE INDEX webhook_outbox_batch ON webhook_outbox (batch_id) WHERE state = 'pending' AND batch_id IS NOT NULL;

CREATE INDEX webhook_outbox_pending_age ON webhook_outbox (created_at) WHERE state = 'pending';

CREATE TABLE outbound_message_bodies (
  message_id TEXT PRIMARY KEY REFERENCES outbound_messages (id),
  raw BLOB NOT NULL
);

CREATE TABLE "incoming_statuses" (
  id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  address_id TEXT NOT NULL,
  message_id TEXT,
  mail_from TEXT NOT NULL,
  rcpt_to TEXT NOT NULL,
  subject TEXT,
  status TEXT NOT NULL,
  status_category TEXT NOT NULL,
  tls TEXT,
  size INTEGER,
  remote_ip TEXT,
  response TEXT,
  created_at INTEGER NOT NULL,
  -- The X-Postroom-Message-Id the status's POST carried (stable for the message and the
  -- address, so a target can drop a redelivery); NULL for Postroom's own refusals.
  x_postroom_message_id TEXT,
  -- (beyond) For a kept message: its signed URL (envelope.store_url) and the envelope
  -- posted (JSON), so the dashboard can show the payload again.
  store_url TEXT,
  envelope TEXT
);

CREATE INDEX incoming_statuses_by_address ON incoming_statuses (address_id, created_at, id);

CREATE TABLE dashboard_sessions (
  id_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  admin INTEGER NOT NULL DEFAULT 0,
  token_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX dashboard_sessions_expires_at ON dashboard_sessions (expires_at);

CREATE TABLE stats_hourly (
  account_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  series TEXT NOT NULL,
  key TEXT NOT NULL,
  count INTEGER NOT NULL,
  UNIQUE (account_id, hour, series, key)
);

CREATE TABLE idempotency_keys (
  outbound_account_id TEXT NOT NULL,
  scope TEXT NOT NULL,               -- 'api' (Idempotency-Key) or 'smtp' (Message-ID)
  key TEXT NOT NULL,
  request_sha256 TEXT,               -- hex SHA-256 of the E11 request body; NULL for SMTP and for a claim
  answer TEXT,                       -- E11: the 202 body; SMTP: the sent message's ID; NULL while in flight
  created_at INTEGER NOT NULL,
  PRIMARY KEY (outbound_account_id, scope, key)
);

CREATE TABLE webhook_posts (
  id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  batch_id TEXT NOT NULL,
  events INTEGER NOT NULL,
  test INTEGER NOT NULL,
  status INTEGER,
  problem TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE INDEX webhook_posts_by_outbound_account ON webhook_posts (outbound_account_id, created_at, id);
