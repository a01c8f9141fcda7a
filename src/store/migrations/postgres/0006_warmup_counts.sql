-- Warm-up caps of sending addresses (issue 29; src/outbound/delivery/warmup.repo.ts): how
-- many recipients one source address has been given for one destination on one UTC day
-- (day_start: its midnight, ms). Counted in the store so the cap holds across the nodes of
-- a cluster. Rows of past days are deleted by the warm-up purge job.
CREATE TABLE warmup_counts (
  source_ip TEXT NOT NULL,
  destination TEXT NOT NULL,
  day_start BIGINT NOT NULL,
  sent BIGINT NOT NULL,
  PRIMARY KEY (source_ip, destination, day_start)
);
CREATE INDEX warmup_counts_day ON warmup_counts (day_start);
