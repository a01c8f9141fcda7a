-- (beyond) Standard Webhooks signing of the POSTs to an address's target: the secret
-- (whsec_...) or NULL when the address does not sign.
ALTER TABLE addresses ADD COLUMN signing_secret TEXT;
