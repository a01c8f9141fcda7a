-- How the queue's rows are stored (issue 38).
--
-- Room on each page of outbound_recipients for the row's later versions. A
-- recipient is inserted, then updated three times (the claim's lease, the worker's
-- destination, the outcome). An UPDATE that changes no indexed column is HOT, writing no
-- index entry, only when the new version fits on the row's own page; with pages filled to
-- the brim by the inserts, the claim's and the destination's versions moved to other pages
-- and wrote an entry in each of the table's three indexes. Pages filled to 50 % keep room
-- for them (pruning reclaims the dead versions on the page). Applies to pages written from
-- now on; existing pages keep their layout until rewritten.
ALTER TABLE outbound_recipients SET (fillfactor = 50);

-- A message's bytes compressed with lz4 where the server has it: a body over 2 KB is
-- compressed as it is stored, and PostgreSQL's own method (pglz) costs the server about
-- twice lz4's CPU for a 4 KB mail, for about the same size. Bodies stored before keep
-- theirs (both read back alike). A server built without lz4, or older than PostgreSQL 14
-- (no SET COMPRESSION), keeps pglz: EXECUTE parses the statement only when it runs.
DO $$
BEGIN
  EXECUTE 'ALTER TABLE outbound_message_bodies ALTER COLUMN raw SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
  NULL;
END $$;
