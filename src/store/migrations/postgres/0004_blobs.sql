-- Shared state for several nodes on one database (issue 21). SQLite, one node, keeps both
-- tables empty: its local attachments stay files under data_dir/attachments, and it has no
-- other node to compare keys with. The tables are here so both histories stay alike.
-- blobs: local attachments and kept messages ({"store": "local"}, store_messages) on
-- PostgreSQL, served at signed URLs by any node; purged by expires_at.
CREATE TABLE blobs (
  id TEXT PRIMARY KEY,
  file_name TEXT NOT NULL,
  content_type TEXT NOT NULL,
  content BYTEA NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX blobs_expires_at ON blobs (expires_at);

-- key_fingerprints: an HMAC under each key in data_dir/keys, recorded by the first node, so
-- a node with other keys refuses to start; the keys themselves never enter the database.
CREATE TABLE key_fingerprints (
  name TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
