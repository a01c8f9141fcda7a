// SQL for incoming statuses on PostgreSQL: the StatusRepo port (statuses.port.ts), with
// the SQLite repository's reads (statuses.repo.ts). Engine-specific, for the status journal:
// writes go straight to the database, not through a per-node journal: record() inserts a group of statuses and counts them in the
// hourly stats in one transaction (with the groups other messages record meanwhile:
// pg-batch-writer.ts) and resolves once it committed, so the 250 that follows
// means the statuses are stored, whichever node took the message. Several nodes insert at
// once without coordinating: status IDs are random (statuses.port.ts) and the only shared
// rows, the hourly counts, are added in their upsert (countInto).
import type { SQL, TransactionSQL } from "bun";
import { termTimeMs, type SearchTerm } from "../../lib/search-query.ts";
import { containsPattern, searchedPage, searchWindowRows, toPage } from "../../store/paging.ts";
import { pgCompare, pgContains, pgNewestFirst, pgSearchWindow, pgTimedSearch, type Fragment } from "../../store/pg-paging.ts";
import { pgInteger } from "../../store/pg-values.ts";
import { countStatements } from "../../stats/stats.repo.ts";
import { pgTxDb } from "../../store/db/pg-db.ts";
import type { IncomingStatus } from "./incoming-status.ts";
import { FIELD_COLUMN, statusFromRow, type StatusRepo, type StatusRow } from "./statuses.port.ts";
import { pgTablePurge } from "../../store/pg-purge-window.ts";
import { PgBatchWriter } from "../../store/pg-batch-writer.ts";
import type { Purge } from "../../store/purge-window.ts";

interface PgRow extends Omit<StatusRow, "size" | "created_at" | "attempts" | "next_attempt_at"> {
  attempts: string | bigint | null;
  next_attempt_at: string | bigint | null;
  /** BIGINT: a string from Bun's SQL client (a bigint with `bigint: true`). */
  size: string | bigint | null;
  created_at: string | bigint;
}

const fromRow = (r: PgRow) =>
  statusFromRow({
    ...r,
    size: r.size === null ? null : pgInteger(r.size, "incoming_statuses.size"),
    created_at: pgInteger(r.created_at, "incoming_statuses.created_at"),
    attempts: r.attempts === null ? null : pgInteger(r.attempts, "incoming_statuses.attempts"),
    next_attempt_at: r.next_attempt_at === null ? null : pgInteger(r.next_attempt_at, "incoming_statuses.next_attempt_at"),
  });

/** searchClause of statuses.repo.ts: every term must match; text folds ASCII letters only, in the "C" collation. */
function searchClause(sql: SQL, terms: readonly SearchTerm[]): Fragment {
  let clause = sql``;
  for (const t of terms) {
    let term: Fragment;
    if (t.field === null) {
      const like = containsPattern(t.value);
      term = sql`(${pgContains(sql, sql`COALESCE(subject, '')`, like)} OR ${pgContains(sql, sql`mail_from`, like)} OR ${pgContains(sql, sql`rcpt_to`, like)})`;
    } else if (t.field === "created_at") {
      term = sql`created_at ${pgCompare[t.op](sql)} ${termTimeMs(t.value)}`;
    } else {
      const column = sql(FIELD_COLUMN[t.field]!);
      term =
        t.field === "status" || t.field === "status_category" || t.field === "x_postroom_message_id"
          ? sql`lower(${column} COLLATE "C") = ${t.value.toLowerCase()}`
          : pgContains(sql, sql`COALESCE(${column}, '')`, containsPattern(t.value));
    }
    clause = sql`${clause} AND ${term}`;
  }
  return clause;
}

/** Statuses in `tx`: one multi-row INSERT and their hourly counts in one upsert. */
async function insertStatuses(tx: TransactionSQL, rows: readonly IncomingStatus[]): Promise<void> {
  const values = rows.map((s) => ({
    id: s.id,
    account_id: s.accountId,
    address_id: s.addressId,
    message_id: s.messageId,
    mail_from: s.mailFrom,
    rcpt_to: s.rcptTo,
    subject: s.subject,
    status: s.status,
    status_category: s.statusCategory,
    tls: s.tls,
    size: s.sizeBytes,
    remote_ip: s.remoteIp,
    response: s.response,
    x_postroom_message_id: s.postroomMessageId,
    store_url: s.storeUrl ?? null,
    envelope: s.envelope ?? null,
    created_at: s.createdAtMs,
    state: s.state ?? null,
    attempts: s.attempts ?? null,
    next_attempt_at: s.nextAttemptAtMs ?? null,
  }));
  // 20 parameters a row: 3,000 rows stay under PostgreSQL's 65,535. The INSERTs and the
  // counts' upserts go together: one round trip.
  const writes: PromiseLike<unknown>[] = [];
  for (let i = 0; i < values.length; i += STATUS_ROWS_PER_INSERT)
    writes.push(tx`INSERT INTO incoming_statuses ${tx(values.slice(i, i + STATUS_ROWS_PER_INSERT))}`);
  const counts = countStatements(
    rows.map((s) => ({ accountId: s.accountId, atMs: s.createdAtMs, series: "inbound" as const, key: s.statusCategory })),
  );
  const db = pgTxDb(tx);
  writes.push(...counts.map((q) => db.run(q)));
  await Promise.all(writes);
}

const STATUS_ROWS_PER_INSERT = 3000;

export function createPgStatusRepo(sql: SQL): StatusRepo {
  const select = sql`SELECT id, account_id, address_id, message_id, mail_from, rcpt_to, subject, status, status_category, tls, size, remote_ip, response,
    x_postroom_message_id, store_url, envelope, created_at, state, attempts, next_attempt_at`;
  const statuses = new PgBatchWriter<readonly IncomingStatus[]>(sql, async (tx, groups) => {
    await insertStatuses(tx, groups.flat());
    return [];
  });
  return {
    // Messages received together share one transaction: one INSERT and one counts upsert for all.
    record: (rows) => (rows.length === 0 ? Promise.resolve() : statuses.write(rows)),
    async list(accountId, addressId, terms, page, windowRows = Number.POSITIVE_INFINITY, timeoutMs = Number.POSITIVE_INFINITY) {
      // A search reads at most windowRows statuses per request, as on SQLite, within timeoutMs.
      const windowed = searchWindowRows(terms.length, windowRows);
      return pgTimedSearch(sql, windowed === null ? Number.POSITIVE_INFINITY : timeoutMs, async (tx) => {
        const from = tx`incoming_statuses WHERE account_id = ${accountId} AND address_id = ${addressId}`;
        const window = windowed === null ? null : await pgSearchWindow(tx, from, page, windowed);
        const { where, tail } = pgNewestFirst(tx, page);
        const rows: PgRow[] = await tx`${select} FROM ${from} ${window?.where ?? tx``} ${searchClause(tx, terms)} ${where} ${tail}`;
        return window ? searchedPage(rows.map(fromRow), page.limit, window) : toPage(rows.map(fromRow), page.limit);
      });
    },
    // record() has committed: there is nothing of this node's left to store.
    async flush() {},
    async get(accountId, addressId, id) {
      const [row]: PgRow[] =
        await sql`${select} FROM incoming_statuses WHERE account_id = ${accountId} AND address_id = ${addressId} AND id = ${id}`;
      return row ? fromRow(row) : null;
    },
    async update(accountId, ids, c) {
      await sql`UPDATE incoming_statuses SET status = ${c.status}, status_category = ${c.statusCategory}, response = ${c.response},
        state = ${c.state}, attempts = ${c.attempts}, next_attempt_at = ${c.nextAttemptAtMs}
        WHERE account_id = ${accountId} AND id IN ${sql([...ids])}`;
    },
    close() {},
  };
}

/** The retention purge (createStatusPurge on SQLite): statuses stored before the cutoff, a window at a time. */
export const createPgStatusPurge = (sql: SQL): Purge => pgTablePurge(sql, "incoming_statuses", "created_at");
