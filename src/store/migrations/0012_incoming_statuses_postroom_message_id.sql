-- The X-Postroom-Message-Id a status's POST carried (stable for the message and the
-- address, so a target can drop a redelivery), shown by E6 as x_postroom_message_id: a
-- POST a target got leads to its statuses, and to its log lines. Null for Postroom's own
-- refusals (no POST was made) and for statuses recorded before this migration.
ALTER TABLE incoming_statuses ADD COLUMN x_postroom_message_id TEXT;
