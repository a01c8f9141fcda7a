-- Rate limits counted in the database, for several nodes on one PostgreSQL (issue 21;
-- src/auth/rate-limit.pg.repo.ts). One row per key (an account, an outbound account, a
-- dashboard session or client IP), window length and fixed window: how many calls it
-- allowed in that window. A row is needed while its window is the current or the previous
-- one, so until expires_at (window_start + 2 window lengths, ms); the limiter deletes the
-- rows past it. SQLite counts in memory and never writes here: the table exists so that
-- both engines have one schema.
CREATE TABLE rate_counters (
  key TEXT NOT NULL,
  window_ms BIGINT NOT NULL,
  window_start BIGINT NOT NULL,
  count BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (key, window_ms, window_start)
);
CREATE INDEX rate_counters_expires ON rate_counters (expires_at);
