// The outgoing queue's reads on PostgreSQL (the API's messages, recipients and events, the
// queue depth on /metrics, E12's search), with the same results as queue.repo.ts and
// search.repo.ts on SQLite: IDs sort and text folds in the "C" collation (pg-paging.ts),
// so a page and a search hold the same messages on both engines whatever the database's locale.
// Engine-specific with the queue (queue.pg.repo.ts): its rows carry PostgreSQL's leases,
// and E12's search runs here in the database under a statement timeout, where SQLite runs
// it on the search thread (queue-read.repo.ts).
import type { SQL } from "bun";
import { eventsOfRecipients } from "../../events/events.repo.ts";
import { pgDb } from "../../store/db/pg-db.ts";
import { runOn } from "../../store/db/script.ts";
import { termTimeMs, type SearchTerm } from "../../lib/search-query.ts";
import { containsPattern, searchedPage, searchWindowRows, toPage } from "../../store/paging.ts";
import { pgCompare, pgContains, pgNewestFirst, pgSearchWindow, pgTimedSearch, type Fragment } from "../../store/pg-paging.ts";
import { pgInteger } from "../../store/pg-values.ts";
import type { OutboundRepo } from "./queue.port.ts";
import { bounceClassPattern } from "./search.repo.ts";
import { metadataKeyOf, SCHEDULED } from "./metadata-search.ts";
import { messageFromRow, recipientFromRow, type MessageRow, type RecipientRow } from "./rows.ts";

/** BIGINT columns come back from Bun's SQL client as strings (bigints with `bigint: true`). */
export type Big = string | bigint;

export interface PgRecipientRow extends Omit<RecipientRow, "position" | "attempts" | "first_attempt_at" | "next_attempt_at"> {
  position: Big;
  attempts: Big;
  first_attempt_at: Big | null;
  next_attempt_at: Big;
}

export interface PgMessageRow extends Omit<MessageRow, "size" | "created_at" | "send_at"> {
  size: Big;
  created_at: Big;
  send_at: Big | null;
}

export const recipientOf = (r: PgRecipientRow) =>
  recipientFromRow({
    ...r,
    position: pgInteger(r.position, "outbound_recipients.position"),
    attempts: pgInteger(r.attempts, "outbound_recipients.attempts"),
    first_attempt_at: r.first_attempt_at === null ? null : pgInteger(r.first_attempt_at, "outbound_recipients.first_attempt_at"),
    next_attempt_at: pgInteger(r.next_attempt_at, "outbound_recipients.next_attempt_at"),
  });

export const pgMessageOf = (r: PgMessageRow) =>
  messageFromRow({
    ...r,
    size: pgInteger(r.size, "outbound_messages.size"),
    created_at: pgInteger(r.created_at, "outbound_messages.created_at"),
    send_at: r.send_at === null ? null : pgInteger(r.send_at, "outbound_messages.send_at"),
  });

/** searchClause of search.repo.ts: every term must match; text folds ASCII letters only, in the "C" collation. */
function searchClause(sql: SQL, terms: readonly SearchTerm[]): Fragment {
  const recipientMatch = (condition: Fragment) =>
    sql`EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.message_id = m.id AND ${condition})`;
  let clause = sql``;
  for (const t of terms) {
    const like = containsPattern(t.value);
    let term: Fragment;
    switch (t.field) {
      case null:
        term = sql`(${pgContains(sql, sql`COALESCE(m.subject, '')`, like)} OR ${pgContains(sql, sql`m.mail_from`, like)} OR ${recipientMatch(pgContains(sql, sql`r.email`, like))})`;
        break;
      case "subject":
        term = pgContains(sql, sql`COALESCE(m.subject, '')`, like);
        break;
      case "from":
        term = pgContains(sql, sql`m.mail_from`, like);
        break;
      case "to":
        term = recipientMatch(pgContains(sql, sql`r.email`, like));
        break;
      case "status":
        // Scheduled: a send_at, and a recipient still waiting for its first attempt (issue 34).
        term =
          t.value.toLowerCase() === SCHEDULED
            ? sql`m.send_at IS NOT NULL AND ${recipientMatch(sql`r.state = 'queued' AND r.attempts = 0`)}`
            : recipientMatch(sql`r.status = ${t.value.toLowerCase()}`);
        break;
      case "tag":
        // Tags are stored as a JSON array of strings: match one element exactly.
        term = pgContains(sql, sql`m.tags_json`, containsPattern(JSON.stringify(t.value.toLowerCase())));
        break;
      case "bounce_class":
        term = sql`EXISTS (SELECT 1 FROM message_events e WHERE e.message_id = m.id AND e.kind IN ('bounce', 'soft_bounce') AND ${pgContains(sql, sql`e.details_json`, bounceClassPattern(t.value))})`;
        break;
      case "created_at":
        term = sql`m.created_at ${pgCompare[t.op](sql)} ${termTimeMs(t.value)}`;
        break;
      default: {
        // metadata.<key>:<value>, one of the message's metadata values exactly (metadata-search.ts);
        // parseSearchQuery refuses other fields (MESSAGE_SEARCH_FIELDS).
        const key = metadataKeyOf(t.field);
        if (key === null) continue;
        term = sql`(m.metadata_json::jsonb ->> ${key}) = ${t.value}`;
      }
    }
    clause = sql`${clause} AND ${term}`;
  }
  return clause;
}

type QueueReads = Pick<
  OutboundRepo,
  "queueDepth" | "getMessage" | "getMessageById" | "getRecipient" | "listMessages" | "recipientsOf" | "eventsOf"
>;

export function createPgQueueReads(sql: SQL): QueueReads {
  const messageColumns = sql`m.id, m.account_id, m.outbound_account_id, m.mail_from, m.subject, m.message_id, m.to_json, m.cc_json, m.tags_json, m.test_mode, m.priority,
    m.size, m.tracking_json, m.created_at, m.send_at, m.metadata_json`;
  const recipientColumns = sql`id, message_id, position, email, domain, type, status, state, lane, attempts, first_attempt_at, next_attempt_at`;
  return {
    async queueDepth(nowMs) {
      const [row]: { queued: Big; due: Big; held: Big }[] = await sql`SELECT COUNT(*) FILTER (WHERE state = 'queued') AS queued,
          COUNT(*) FILTER (WHERE state = 'queued' AND next_attempt_at <= ${nowMs}) AS due, COUNT(*) FILTER (WHERE state = 'held') AS held
        FROM outbound_recipients WHERE state IN ('queued', 'held')`;
      const queued = pgInteger(row!.queued, "queued");
      const due = pgInteger(row!.due, "due");
      return { due, scheduled: queued - due, held: pgInteger(row!.held, "held") };
    },

    async getMessage(accountId, id) {
      const [row]: PgMessageRow[] =
        await sql`SELECT ${messageColumns} FROM outbound_messages m WHERE m.id = ${id} AND m.account_id = ${accountId}`;
      return row ? pgMessageOf(row) : null;
    },

    async getMessageById(id) {
      const [row]: PgMessageRow[] = await sql`SELECT ${messageColumns} FROM outbound_messages m WHERE m.id = ${id}`;
      return row ? pgMessageOf(row) : null;
    },

    async getRecipient(messageId, recipientId) {
      const [row]: PgRecipientRow[] =
        await sql`SELECT ${recipientColumns} FROM outbound_recipients WHERE id = ${recipientId} AND message_id = ${messageId}`;
      return row ? recipientOf(row) : null;
    },

    async listMessages(outboundAccountId, terms, page, windowRows = Number.POSITIVE_INFINITY, timeoutMs = Number.POSITIVE_INFINITY) {
      // A search reads at most windowRows messages per request, as on SQLite (paging.ts, SearchWindow), within timeoutMs.
      const windowed = searchWindowRows(terms.length, windowRows);
      return pgTimedSearch(sql, windowed === null ? Number.POSITIVE_INFINITY : timeoutMs, async (tx) => {
        const from = tx`outbound_messages m WHERE m.outbound_account_id = ${outboundAccountId}`;
        const window = windowed === null ? null : await pgSearchWindow(tx, from, page, windowed);
        const { where, tail } = pgNewestFirst(tx, page);
        const rows: PgMessageRow[] =
          await tx`SELECT ${messageColumns} FROM ${from} ${window?.where ?? tx``} ${searchClause(tx, terms)} ${where} ${tail}`;
        const messages = rows.map(pgMessageOf);
        return window ? searchedPage(messages, page.limit, window) : toPage(messages, page.limit);
      });
    },

    async recipientsOf(messageIds) {
      if (messageIds.length === 0) return [];
      // Message IDs in "C", as SQLite orders them.
      const rows: PgRecipientRow[] =
        await sql`SELECT ${recipientColumns} FROM outbound_recipients WHERE message_id IN ${sql(messageIds as string[])}
        ORDER BY message_id COLLATE "C", position`;
      return rows.map(recipientOf);
    },

    eventsOf: (recipientIds) => runOn(pgDb(sql), eventsOfRecipients(recipientIds)),
  };
}
