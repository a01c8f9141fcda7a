-- (beyond) Stored inbound messages: an address may keep each message it receives (in its
-- attachment store, local when it has none), and the incoming status keeps the signed URL
-- the payload carried as envelope.store_url, and the envelope it posted (JSON), so the
-- dashboard can show the payload again from the kept message.
ALTER TABLE addresses ADD COLUMN store_messages INTEGER NOT NULL DEFAULT 0;
ALTER TABLE incoming_statuses ADD COLUMN store_url TEXT;
ALTER TABLE incoming_statuses ADD COLUMN envelope TEXT;
