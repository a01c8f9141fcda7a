-- Outgoing mail: one row per message (the raw message itself is a file under
-- data_dir/messages), one per recipient (the queue: leased by workers), and the events of
-- every recipient's delivery.
CREATE TABLE outbound_messages (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  mail_from TEXT NOT NULL,
  subject TEXT,
  message_id TEXT NOT NULL,
  to_json TEXT NOT NULL,
  cc_json TEXT NOT NULL,
  tags_json TEXT NOT NULL,
  test_mode INTEGER NOT NULL,
  priority TEXT NOT NULL,
  size INTEGER NOT NULL,
  blob_path TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX outbound_messages_by_outbound_account ON outbound_messages (outbound_account_id, created_at, id);

CREATE TABLE outbound_recipients (
  -- Random, and part of the bounce address, so a bounce names its recipient unforgeably.
  id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL REFERENCES outbound_messages (id),
  -- Order of the recipient in the message (to, then cc, then bcc).
  position INTEGER NOT NULL,
  email TEXT NOT NULL,
  domain TEXT NOT NULL,
  type TEXT NOT NULL,
  -- The kind of the latest lifecycle event (registration, dispatch, delivery, ...).
  status TEXT NOT NULL,
  -- queued: waiting for an attempt; done: delivered, bounced, suppressed or test mode.
  state TEXT NOT NULL,
  -- 0 priority, 1 standard, 2 digest: lower lanes are served first.
  lane INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  first_attempt_at INTEGER,
  next_attempt_at INTEGER NOT NULL,
  locked_by TEXT,
  locked_until INTEGER
);
CREATE INDEX outbound_recipients_due ON outbound_recipients (state, lane, next_attempt_at);
CREATE INDEX outbound_recipients_by_message ON outbound_recipients (message_id);

CREATE TABLE message_events (
  id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  details_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  -- Strictly increasing, so events of one recipient keep their order within a millisecond.
  seq INTEGER NOT NULL
);
CREATE INDEX message_events_by_recipient ON message_events (recipient_id, seq);
CREATE INDEX message_events_by_message ON message_events (message_id, seq);
