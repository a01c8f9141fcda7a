-- Destinations (issue 29): each recipient records the destination its domain resolved to
-- (a [[outbound.destinations]] rule's name, else the recipient's domain), null until the
-- delivery worker first resolves it; readers take null as the recipient's domain.
ALTER TABLE outbound_recipients ADD COLUMN destination TEXT;
-- Paused destinations, shared by every node of a cluster (each polls this small table every
-- second). until_at: when a throttle pause ends (ms); null for an operator's pause, which
-- holds until resumed. pause_ms: the length of the last throttle pause, doubled by the next
-- throttle while it goes on. source: "throttle" or "operator"; reason: the reply or who paused.
CREATE TABLE destination_pauses (
  destination TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  reason TEXT NOT NULL,
  paused_at INTEGER NOT NULL,
  until_at INTEGER,
  pause_ms INTEGER NOT NULL
);
