-- Issue 34: a message may name when it goes out (E11's send_at: its recipients' first
-- attempt waits for it; null: at once), and carries its sender's metadata (a JSON object of
-- at most 20 strings), returned by E12/E13 and put into each of its webhook events.
ALTER TABLE outbound_messages ADD COLUMN send_at INTEGER;
ALTER TABLE outbound_messages ADD COLUMN metadata_json TEXT NOT NULL DEFAULT '{}';
