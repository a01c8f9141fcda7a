// The outgoing queue's reads on SQLite (the writes and leases are queue.repo.ts's): a
// message, its raw bytes, its recipients, the queue's depth and next due time, and E12's
// list. Engine-specific with the queue (queue.repo.ts says why); E12's searches run on the
// search thread (search-thread.ts), off the event loop, where PostgreSQL runs them in the
// database under a statement timeout (queue-read.pg.repo.ts).
import { localSearch, type SearchRunner } from "../../search/search-thread.ts";
import { newestFirst, searchedPage, searchWindowRows, toPage } from "../../store/paging.ts";
import type { Store } from "../../store/store.ts";
import type { OutboundRepo } from "./queue.port.ts";
import { MESSAGE_COLUMNS, type MessageRow, messageFromRow, RECIPIENT_COLUMNS, type RecipientRow, recipientFromRow } from "./rows.ts";
import { LANES } from "./schedule.ts";
import { messageReaderOf, searchClause } from "./search.repo.ts";

const inList = (n: number) => Array.from({ length: n }, () => "?").join(", ");

type QueueReads = Pick<
  OutboundRepo,
  "rawMessage" | "nextDueMs" | "queueDepth" | "getMessage" | "getMessageById" | "getRecipient" | "listMessages" | "recipientsOf"
>;

/** `search` runs E12's searches (the search thread in the server; on `store.db` by default). */
export function createQueueReads(store: Store, search: SearchRunner = localSearch(store.db, messageReaderOf)): QueueReads {
  const { db } = store;
  const laneMin = (lane: number) => `SELECT MIN(next_attempt_at) AS due FROM outbound_recipients WHERE state = 'queued' AND lane = ${lane}`;
  const nextDue = db.query(`SELECT MIN(due) AS due FROM (${Object.values(LANES).map(laneMin).join(" UNION ALL ")})`);
  return {
    async rawMessage(messageId) {
      const row = db.query("SELECT raw FROM outbound_message_bodies WHERE message_id = ?").get(messageId) as { raw: Uint8Array } | null;
      return row ? Buffer.from(row.raw.buffer, row.raw.byteOffset, row.raw.byteLength) : null;
    },

    async nextDueMs() {
      // One MIN per lane, each the first entry of outbound_recipients_due (state, lane,
      // next_attempt_at); a MIN over all lanes at once reads every queued entry.
      return (nextDue.get() as { due: number | null }).due;
    },
    async queueDepth(nowMs) {
      // Counted on the covering index outbound_recipients_due (state first): the queued and
      // held entries only. Held ones are never attempted, so they are neither due nor scheduled.
      const row = db
        .query(
          "SELECT COALESCE(SUM(state = 'queued'), 0) AS queued, COALESCE(SUM(state = 'queued' AND next_attempt_at <= ?), 0) AS due, COALESCE(SUM(state = 'held'), 0) AS held FROM outbound_recipients WHERE state IN ('queued', 'held')",
        )
        .get(nowMs) as { queued: number; due: number; held: number };
      return { due: row.due, scheduled: row.queued - row.due, held: row.held };
    },

    async getMessage(accountId, id) {
      const row = db
        .query(`SELECT ${MESSAGE_COLUMNS} FROM outbound_messages WHERE id = ? AND account_id = ?`)
        .get(id, accountId) as MessageRow | null;
      return row ? messageFromRow(row) : null;
    },

    async getMessageById(id) {
      const row = db.query(`SELECT ${MESSAGE_COLUMNS} FROM outbound_messages WHERE id = ?`).get(id) as MessageRow | null;
      return row ? messageFromRow(row) : null;
    },

    async getRecipient(messageId, recipientId) {
      const row = db
        .query(`SELECT ${RECIPIENT_COLUMNS} FROM outbound_recipients WHERE id = ? AND message_id = ?`)
        .get(recipientId, messageId) as RecipientRow | null;
      return row ? recipientFromRow(row) : null;
    },

    async listMessages(outboundAccountId, terms, page, windowRows = Number.POSITIVE_INFINITY, timeoutMs = Number.POSITIVE_INFINITY) {
      // A search reads at most windowRows messages per request (paging.ts, SearchWindow), off the event loop (search-thread.ts).
      const windowed = searchWindowRows(terms.length, windowRows);
      if (windowed !== null) {
        const found = await search.run({
          kind: "messages",
          outboundAccountId,
          terms,
          page,
          windowRows: windowed,
          deadlineMs: Date.now() + timeoutMs,
        });
        return searchedPage((found.rows as MessageRow[]).map(messageFromRow), page.limit, found);
      }
      const params: unknown[] = [outboundAccountId];
      const clause = searchClause(terms, params);
      const { where, tail } = newestFirst(page, params, "m.");
      const rows = db
        .query(
          `SELECT ${MESSAGE_COLUMNS.split(", ")
            .map((c) => `m.${c}`)
            .join(", ")} FROM outbound_messages m WHERE m.outbound_account_id = ?${clause}${where}${tail}`,
        )
        .all(...(params as never[])) as MessageRow[];
      return toPage(rows.map(messageFromRow), page.limit);
    },

    async recipientsOf(messageIds) {
      if (messageIds.length === 0) return [];
      const rows = db
        .query(
          `SELECT ${RECIPIENT_COLUMNS} FROM outbound_recipients WHERE message_id IN (${inList(messageIds.length)}) ORDER BY message_id, position`,
        )
        .all(...messageIds) as RecipientRow[];
      return rows.map(recipientFromRow);
    },
  };
}
