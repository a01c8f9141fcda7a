-- Nothing on SQLite: PostgreSQL's 0014 sets how the queue's rows are stored there (room on
-- outbound_recipients' pages for the row versions its updates write, lz4 for the bodies);
-- SQLite updates a row in place and compresses nothing. The file keeps both histories at
-- the same versions.
SELECT 1;
