-- Accounts made through the operator API (issue 33; src/auth/tenants.repo.ts), beside the
-- ones the config declares: the account, its API tokens (SHA-256 only, with their scopes),
-- its outbound accounts and their keys (SHA-256 only, at most two live). A deleted account
-- keeps its row (deleted_at) so its ID is never given again and a second DELETE is a 404;
-- its tokens and keys are deleted with it. tenant_version counts every write so that each
-- node reloads its account registry within a second (src/auth/tenant-sync.ts);
-- operator_audit records who did what to which account (GET /api/v0.1/operator/audit).
CREATE TABLE tenant_accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  rate_limit TEXT NOT NULL,
  test_mode INTEGER NOT NULL DEFAULT 0,
  markdown INTEGER NOT NULL DEFAULT 0,
  domain_targets INTEGER NOT NULL DEFAULT 0,
  suspended INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  deleted_at BIGINT
);

CREATE TABLE tenant_api_tokens (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES tenant_accounts (id),
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  read_only INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT
);

CREATE INDEX tenant_api_tokens_account ON tenant_api_tokens (account_id);

CREATE TABLE tenant_outbound_accounts (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES tenant_accounts (id),
  name TEXT NOT NULL,
  send_rate_limit TEXT NOT NULL,
  ip_pool TEXT,
  test_mode INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL
);

CREATE INDEX tenant_outbound_accounts_account ON tenant_outbound_accounts (account_id);

CREATE TABLE tenant_outbound_keys (
  id TEXT PRIMARY KEY,
  outbound_account_id TEXT NOT NULL REFERENCES tenant_outbound_accounts (id),
  key_hash TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL
);

CREATE INDEX tenant_outbound_keys_outbound ON tenant_outbound_keys (outbound_account_id);

CREATE TABLE tenant_version (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);

INSERT INTO tenant_version (id, version) VALUES (1, 0);

CREATE TABLE operator_audit (
  id TEXT PRIMARY KEY,
  created_at BIGINT NOT NULL,
  operator TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  details_json TEXT NOT NULL
);

CREATE INDEX operator_audit_created_at ON operator_audit (created_at);
