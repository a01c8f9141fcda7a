-- Deliverability health (issue 36, src/deliverability/). One row per sending IP at its
-- last check (the hourly job, once per cluster, replaces them all): its PTR name, whether
-- that name resolves back to it (fcrdns) and is its EHLO name (helo_matches), 1/0 or NULL
-- when the check could not be made, the blocklists that list it ([{zone, text}]) and the
-- checks that could not be made ([{check, reason}]).
CREATE TABLE sending_ip_health (
  ip TEXT PRIMARY KEY,
  helo TEXT NOT NULL,
  ptr TEXT,
  fcrdns INTEGER,
  helo_matches INTEGER,
  listed_json TEXT NOT NULL,
  unknown_json TEXT NOT NULL,
  checked_at BIGINT NOT NULL
);

-- A sending domain's health (DMARC policy, alignment, what to fix) as its last check saw
-- it (src/domains/dmarc.ts's DomainHealth, as JSON); NULL until checked.
ALTER TABLE sending_domains ADD COLUMN health_json TEXT;
