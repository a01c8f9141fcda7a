-- The schema of Postroom's PostgreSQL store: the same tables, columns, primary keys and
-- indexes as the SQLite history's 0001_initial.sql (test/store/schema-parity.test.ts fails
-- when the two drift; change both together). Translated types: milliseconds since the
-- epoch, sizes and counters are BIGINT; 0/1 flags stay INTEGER, so repository SQL that
-- writes and compares 0 and 1 can be shared; blobs are BYTEA.
--
-- rowid: SQLite gives every table a hidden rowid, and the retention purge walks the tables
-- that grow with traffic in rowid order (src/store/purge-window.ts, the repositories'
-- `WHERE rowid > ? ORDER BY rowid LIMIT ?`). PostgreSQL has no stable row number (ctid
-- moves on UPDATE and VACUUM FULL), so each of those tables has an explicit column named
-- rowid, BIGINT GENERATED ALWAYS AS IDENTITY, with a unique index <table>_rowid so the
-- walk reads windows from an index. It grows with inserts, as SQLite's does; concurrent
-- transactions may commit their numbers out of order, which the purge already tolerates
-- (a young row among old ones does not end its walk).

CREATE TABLE store_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE addresses (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  -- The target URL with its user name; the password apart (see the SQLite history).
  target TEXT NOT NULL,
  target_password TEXT,
  target_format TEXT NOT NULL,
  nickname TEXT,
  attachments_json TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  deleted_at BIGINT,
  signing_secret TEXT,
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
  mx_checked_at BIGINT,
  created_at BIGINT NOT NULL,
  deleted_at BIGINT
);

CREATE INDEX custom_domains_by_address ON custom_domains (address_id, created_at, id);

CREATE UNIQUE INDEX custom_domains_live_domain ON custom_domains (domain) WHERE deleted_at IS NULL;

CREATE TABLE outbound_messages (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
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
  size BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  tracking_json TEXT NOT NULL DEFAULT '{}'
);

CREATE UNIQUE INDEX outbound_messages_rowid ON outbound_messages (rowid);

CREATE INDEX outbound_messages_by_outbound_account ON outbound_messages (outbound_account_id, created_at, id);

CREATE TABLE outbound_recipients (
  id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL REFERENCES outbound_messages (id),
  position BIGINT NOT NULL,
  email TEXT NOT NULL,
  domain TEXT NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  state TEXT NOT NULL,
  lane INTEGER NOT NULL,
  attempts BIGINT NOT NULL,
  first_attempt_at BIGINT,
  next_attempt_at BIGINT NOT NULL,
  locked_by TEXT,
  locked_until BIGINT
);

CREATE INDEX outbound_recipients_due ON outbound_recipients (state, lane, next_attempt_at);

CREATE INDEX outbound_recipients_by_message ON outbound_recipients (message_id);

CREATE TABLE message_events (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  details_json TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  seq BIGINT NOT NULL
);

CREATE UNIQUE INDEX message_events_rowid ON message_events (rowid);

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
  reasons_json TEXT NOT NULL DEFAULT '{}',
  verified_at BIGINT,
  failing_since BIGINT,
  checked_at BIGINT,
  next_check_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  deleted_at BIGINT
);

CREATE INDEX sending_domains_by_account ON sending_domains (account_id, created_at, id);

CREATE INDEX sending_domains_due ON sending_domains (next_check_at);

CREATE UNIQUE INDEX sending_domains_live_domain ON sending_domains (account_id, domain) WHERE deleted_at IS NULL;

CREATE TABLE sending_domain_events (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT PRIMARY KEY,
  domain_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  details_json TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX sending_domain_events_rowid ON sending_domain_events (rowid);

CREATE INDEX sending_domain_events_by_domain ON sending_domain_events (domain_id, created_at);

CREATE TABLE webhook_outbox (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  event_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  -- pending, sent, expired, or dropped (no webhook configured when it was due)
  state TEXT NOT NULL,
  batch_id TEXT,
  attempts BIGINT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX webhook_outbox_rowid ON webhook_outbox (rowid);

CREATE INDEX webhook_outbox_pending ON webhook_outbox (state, outbound_account_id, seq);

CREATE INDEX webhook_outbox_batch ON webhook_outbox (batch_id) WHERE state = 'pending' AND batch_id IS NOT NULL;

CREATE INDEX webhook_outbox_pending_age ON webhook_outbox (created_at) WHERE state = 'pending';

CREATE TABLE suppressions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  email TEXT NOT NULL,
  reason TEXT NOT NULL,
  details_json TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX suppressions_by_address ON suppressions (outbound_account_id, email);

CREATE INDEX suppressions_by_account ON suppressions (account_id, created_at, id);

CREATE TABLE mta_sts_policies (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  domain TEXT PRIMARY KEY,
  policy_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  mx_json TEXT NOT NULL,
  max_age BIGINT NOT NULL,
  fetched_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX mta_sts_policies_rowid ON mta_sts_policies (rowid);

CREATE TABLE outbound_message_bodies (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  message_id TEXT PRIMARY KEY REFERENCES outbound_messages (id),
  raw BYTEA NOT NULL
);

CREATE UNIQUE INDEX outbound_message_bodies_rowid ON outbound_message_bodies (rowid);

CREATE TABLE incoming_statuses (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
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
  size BIGINT,
  remote_ip TEXT,
  response TEXT,
  created_at BIGINT NOT NULL,
  x_postroom_message_id TEXT,
  store_url TEXT,
  envelope TEXT
);

CREATE UNIQUE INDEX incoming_statuses_rowid ON incoming_statuses (rowid);

CREATE INDEX incoming_statuses_by_address ON incoming_statuses (address_id, created_at, id);

-- No rowid: SQLite's table is WITHOUT ROWID, and sessions are purged by expires_at.
CREATE TABLE dashboard_sessions (
  id_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  admin INTEGER NOT NULL DEFAULT 0,
  token_hash TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL
);

CREATE INDEX dashboard_sessions_expires_at ON dashboard_sessions (expires_at);

CREATE TABLE stats_hourly (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  account_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  series TEXT NOT NULL,
  key TEXT NOT NULL,
  count BIGINT NOT NULL,
  UNIQUE (account_id, hour, series, key)
);

CREATE UNIQUE INDEX stats_hourly_rowid ON stats_hourly (rowid);

CREATE TABLE idempotency_keys (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  outbound_account_id TEXT NOT NULL,
  scope TEXT NOT NULL,               -- 'api' (Idempotency-Key) or 'smtp' (Message-ID)
  key TEXT NOT NULL,
  request_sha256 TEXT,               -- hex SHA-256 of the E11 request body; NULL for SMTP and for a claim
  answer TEXT,                       -- E11: the 202 body; SMTP: the sent message's ID; NULL while in flight
  created_at BIGINT NOT NULL,
  PRIMARY KEY (outbound_account_id, scope, key)
);

CREATE UNIQUE INDEX idempotency_keys_rowid ON idempotency_keys (rowid);

CREATE TABLE webhook_posts (
  rowid BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  batch_id TEXT NOT NULL,
  events BIGINT NOT NULL,
  test INTEGER NOT NULL,
  status INTEGER,
  problem TEXT NOT NULL,
  duration_ms BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX webhook_posts_rowid ON webhook_posts (rowid);

CREATE INDEX webhook_posts_by_outbound_account ON webhook_posts (outbound_account_id, created_at, id);
