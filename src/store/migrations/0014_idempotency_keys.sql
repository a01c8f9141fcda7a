-- Idempotent sends (docs/sending.md): an E11 Idempotency-Key, or the Message-ID of a
-- submitted message, per outbound account. A row is claimed (answer NULL) when the request
-- starts, and gets its answer in the transaction that queues the message, so a replay
-- returns exactly what the first request got. Claims of a process that stopped are dropped
-- at start-up; answered rows go with the retention purge (retention.idempotency_keys).
CREATE TABLE idempotency_keys (
  outbound_account_id TEXT NOT NULL,
  scope TEXT NOT NULL,               -- 'api' (Idempotency-Key) or 'smtp' (Message-ID)
  key TEXT NOT NULL,
  request_sha256 TEXT,               -- hex SHA-256 of the E11 request body; NULL for SMTP and for a claim
  answer TEXT,                       -- E11: the 202 body; SMTP: the sent message's ID; NULL while in flight
  created_at INTEGER NOT NULL,
  PRIMARY KEY (outbound_account_id, scope, key)
);
