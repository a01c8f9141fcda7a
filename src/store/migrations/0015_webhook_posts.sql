-- Every POST made to a webhook receiver, with its answer (src/events/webhook-posts.repo.ts):
-- what the dashboard's webhook page shows, so that "why does my receiver get nothing" is
-- answered by the status and the first bytes the receiver gave back. Appended in time
-- order (rowid), purged by retention.webhook_posts.
CREATE TABLE webhook_posts (
  id TEXT NOT NULL,
  outbound_account_id TEXT NOT NULL,
  batch_id TEXT NOT NULL,
  events INTEGER NOT NULL,
  test INTEGER NOT NULL,
  status INTEGER,
  problem TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX webhook_posts_by_outbound_account ON webhook_posts (outbound_account_id, created_at, id);
