-- Sending domains: the DKIM keys (private keys encrypted at rest), the three DNS checks
-- with their human reasons, and when they were last and will next be checked.
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

-- Changes of a domain's verification, kept for the operator (and the log).
CREATE TABLE sending_domain_events (
  id TEXT PRIMARY KEY,
  domain_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  details_json TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX sending_domain_events_by_domain ON sending_domain_events (domain_id, created_at);
