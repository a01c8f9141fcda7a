-- Nothing on SQLite: PostgreSQL's 0014 leaves room on outbound_recipients' pages for the
-- row versions its updates write (MVCC); SQLite updates a row in place. The file keeps both
-- histories at the same versions.
SELECT 1;
