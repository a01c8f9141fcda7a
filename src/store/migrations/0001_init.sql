-- Addresses, custom domains and the store's own health row.
-- Timestamps are integer milliseconds since the epoch (UTC). Deletion sets deleted_at:
-- the record leaves every read at once and the purge can come later.

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
  deleted_at INTEGER
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
-- A domain belongs to one live address across the whole server.
CREATE UNIQUE INDEX custom_domains_live_domain ON custom_domains (domain) WHERE deleted_at IS NULL;
