-- Raw outgoing messages in the database, written in the transaction that queues the message
-- (one commit instead of a file, its directory's fsync and a commit). Messages accepted
-- before this migration keep their file under data_dir/messages (blob_path); a message
-- stored here has blob_path = ''.
CREATE TABLE outbound_message_bodies (
  message_id TEXT PRIMARY KEY REFERENCES outbound_messages (id),
  raw BLOB NOT NULL
);
