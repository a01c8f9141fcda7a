-- One row per received message and address reached, including mail Postroom refused
-- itself. Read newest first per address (E6).
CREATE TABLE incoming_statuses (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  address_id TEXT NOT NULL,
  message_id TEXT,
  mail_from TEXT NOT NULL,
  rcpt_to TEXT NOT NULL,
  subject TEXT,
  status TEXT NOT NULL,
  status_category TEXT NOT NULL,
  tls TEXT,
  size INTEGER,
  remote_ip TEXT,
  response TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX incoming_statuses_by_address ON incoming_statuses (address_id, created_at, id);
