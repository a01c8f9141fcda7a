-- Queue control and bounce classes (issue 30). A suppression may expire: a hard bounce
-- keeps its address suppressed for outbound.suppression_ttl (expires_at, ms), complaints
-- and manual entries for good (NULL). Expired entries stop applying at once and are
-- deleted by the suppression purge. A recipient an operator holds has state 'held' in
-- outbound_recipients (no schema change: state is text); the queue's index
-- (state, lane, next_attempt_at) finds them.
ALTER TABLE suppressions ADD COLUMN expires_at INTEGER;
CREATE INDEX suppressions_expires ON suppressions (expires_at) WHERE expires_at IS NOT NULL;
