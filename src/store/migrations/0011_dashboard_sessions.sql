-- Dashboard sessions (src/dashboard/sessions.repo.ts): server-side rows behind the
-- HttpOnly cookie, so that they survive a restart and can be ended from here. The cookie
-- holds a random secret; only its SHA-256 is stored, like API tokens. token_hash is the
-- API token the session was opened with: the session ends when that token leaves the
-- config. An admin session (dashboard.admin_tokens) has no account of its own: it may
-- open every account's pages, and its token_hash is that of the operator token.
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
