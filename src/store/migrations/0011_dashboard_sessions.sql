-- Dashboard sessions (src/dashboard/sessions.repo.ts): server-side rows behind the
-- HttpOnly cookie, so that they survive a restart and can be ended from here. The cookie
-- holds a random secret; only its SHA-256 is stored, like API tokens. token_hash is the
-- API token the session was opened with: the session ends when that token leaves the
-- config.
CREATE TABLE dashboard_sessions (
  id_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX dashboard_sessions_expires_at ON dashboard_sessions (expires_at);
