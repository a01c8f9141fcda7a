// SQL for incoming statuses on SQLite (the StatusRepo port, statuses.port.ts). Writes go
// through a journal (status-journal.ts) and then, grouped, through the store's log
// connection, which does not wait for fsync: a status is the record of what a target
// answered, not mail we hold. Engine-specific (statuses.pg.repo.ts is PostgreSQL's)
// because that write path is: a per-process memory-mapped journal flushed synchronously,
// where PostgreSQL nodes insert and commit each group at once, and E6's searches run on
// the search thread here, in the database under a timeout there.
import { countInto } from "../../stats/stats.repo.ts";
import { runSync } from "../../store/db/script.ts";
import { localSearch, type SearchRunner } from "../../search/search-thread.ts";
import { newestFirst, searchedPage, searchWindowRows, toPage } from "../../store/paging.ts";
import { rowidPurge, type Purge, type WindowRow } from "../../store/purge-window.ts";
import type { Store } from "../../store/store.ts";
import { dirname, join } from "node:path";
import { STATUS_JOURNAL_FILE, StatusJournal, type Journaled, type JournaledStore } from "./status-journal.ts";
import { searchClause, statusReaderOf } from "./status-search.repo.ts";
import { STATUS_COLUMNS, statusFromRow, type StatusRepo, type StatusRow } from "./statuses.port.ts";

const SEQUENCE_KEY = "incoming_statuses_journal_seq";

/**
 * Journaled statuses stored for good through the log connection: the rows and, in the same
 * transaction, the sequence number of the last one (store_meta), which says after a crash
 * which journaled statuses are stored already.
 */
export function journaledStore(store: Store): JournaledStore {
  const db = store.logDb;
  const insert = db.query(
    `INSERT INTO incoming_statuses (${STATUS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const saveSeq = db.query("INSERT INTO store_meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  return {
    lastStoredSeq: () =>
      Number((db.query("SELECT value FROM store_meta WHERE key = ?1").get(SEQUENCE_KEY) as { value: string } | null)?.value ?? 0),
    store: db.transaction((rows: readonly Journaled[]) => {
      // (A status journaled by an older version has no postroomMessageId.)
      for (const s of rows)
        insert.run(
          s.id,
          s.accountId,
          s.addressId,
          s.messageId,
          s.mailFrom,
          s.rcptTo,
          s.subject,
          s.status,
          s.statusCategory,
          s.tls,
          s.sizeBytes,
          s.remoteIp,
          s.response,
          s.postroomMessageId ?? null,
          s.storeUrl ?? null,
          s.envelope ?? null,
          s.createdAtMs,
          s.state ?? null,
          s.attempts ?? null,
          s.nextAttemptAtMs ?? null,
        );
      saveSeq.run(SEQUENCE_KEY, String(rows.at(-1)!.seq));
      runSync(
        db,
        countInto(rows.map((s) => ({ accountId: s.accountId, atMs: s.createdAtMs, series: "inbound" as const, key: s.statusCategory }))),
      );
    }),
  };
}

/**
 * `onStoreFailed`: a grouped commit failed; the statuses stay journaled and it is tried
 * again. `search` runs searches (the search thread in the server; here on `store.db` by default).
 */
export function createStatusRepo(
  store: Store,
  onStoreFailed: (err: unknown) => void = () => {},
  search: SearchRunner = localSearch(store.db, statusReaderOf),
): StatusRepo {
  const { db } = store;
  const journal = new StatusJournal(journaledStore(store), join(dirname(store.path), STATUS_JOURNAL_FILE), onStoreFailed);

  return {
    async record(rows) {
      journal.record(rows);
    },
    async list(accountId, addressId, terms, page, windowRows = Number.POSITIVE_INFINITY, timeoutMs = Number.POSITIVE_INFINITY) {
      journal.move();
      // A search reads at most windowRows statuses per request (paging.ts, SearchWindow), off the event loop (search-thread.ts).
      const windowed = searchWindowRows(terms.length, windowRows);
      if (windowed !== null) {
        const found = await search.run({
          kind: "statuses",
          accountId,
          addressId,
          terms,
          page,
          windowRows: windowed,
          deadlineMs: Date.now() + timeoutMs,
        });
        return searchedPage((found.rows as StatusRow[]).map(statusFromRow), page.limit, found);
      }
      const params: unknown[] = [accountId, addressId];
      const clause = searchClause(terms, params);
      const { where, tail } = newestFirst(page, params);
      const rows = db
        .query(`SELECT ${STATUS_COLUMNS} FROM incoming_statuses WHERE account_id = ? AND address_id = ?${clause}${where}${tail}`)
        .all(...(params as never[])) as StatusRow[];
      return toPage(rows.map(statusFromRow), page.limit);
    },
    async flush() {
      journal.move();
    },
    async get(accountId, addressId, id) {
      journal.move();
      // Through the address's index; nothing else reads a status by its id.
      const row = db
        .query(`SELECT ${STATUS_COLUMNS} FROM incoming_statuses WHERE account_id = ? AND address_id = ? AND id = ?`)
        .get(accountId, addressId, id) as StatusRow | null;
      return row ? statusFromRow(row) : null;
    },
    async update(accountId, ids, c) {
      // The statuses may still be in the journal: stored first, then changed, on the connection that stored them.
      journal.move();
      store.logDb
        .query(
          `UPDATE incoming_statuses SET status = ?, status_category = ?, response = ?, state = ?, attempts = ?, next_attempt_at = ?
           WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))`,
        )
        .run(c.status, c.statusCategory, c.response, c.state, c.attempts, c.nextAttemptAtMs, accountId, JSON.stringify(ids));
    },
    close() {
      journal.close();
    },
  };
}

/**
 * The retention purge: deletes statuses stored before the cutoff, a window at a time.
 * Statuses still in the journal are the last 100 ms: never old enough. Through the log
 * connection, as the statuses came: a purge lost in a power cut is done again at the next
 * run, so its commits need not wait for fsync.
 */
export function createStatusPurge(store: Store): Purge {
  const db = store.logDb;
  const window = db.query<WindowRow, [number, number]>(
    "SELECT rowid, created_at AS at, 0 AS keep FROM incoming_statuses WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const remove = db.query("DELETE FROM incoming_statuses WHERE rowid IN (SELECT value FROM json_each(?))");
  return rowidPurge(db, window, (rowids) => remove.run(rowids));
}
