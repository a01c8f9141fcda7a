-- Hourly counts behind the dashboard's charts (src/stats/): inbound messages by outcome
-- and outbound events by kind, per account and hour. Counted in the transaction that
-- stores what they count, so that a chart over a week reads 168 rows per series instead
-- of every status and event of the week. A rowid table: the retention purge walks it.
CREATE TABLE stats_hourly (
  account_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  series TEXT NOT NULL,
  key TEXT NOT NULL,
  count INTEGER NOT NULL,
  UNIQUE (account_id, hour, series, key)
);
