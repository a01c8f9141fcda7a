-- ACME's state in the store instead of files under data_dir/tls (issue 21), so every node
-- on one database serves the same certificate and answers any HTTP-01 challenge.
-- tls_state: one row per named value (the account key, the account's URL, the certificate
-- with its key, the last order failure); private keys are sealed with the store's SecretBox.
CREATE TABLE tls_state (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);

-- HTTP-01 answers while an order runs; expires_at bounds a row an interrupted order left.
CREATE TABLE acme_challenges (
  token TEXT PRIMARY KEY,
  key_authorization TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
