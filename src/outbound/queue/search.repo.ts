// E12's `query` over sent messages as SQL on SQLite: free text, subject:, from:, to:,
// status:, tag: and created_at comparisons, each a parameterised clause. SQLite only, with
// the queue's reads (queue-read.repo.ts): the search thread runs it on its own connection;
// PostgreSQL's is in queue-read.pg.repo.ts.
import type { Database } from "bun:sqlite";
import type { SearchTerm } from "../../lib/search-query.ts";
import { termTimeMs } from "../../lib/search-query.ts";
import { containsPattern } from "../../store/paging.ts";
import type { ReaderOf } from "../../search/run-search.ts";
import { sqliteSliceReader } from "../../store/sqlite-slice-reader.ts";
import type { SliceReader } from "../../store/sliced-search.ts";
import { MESSAGE_COLUMNS, type MessageRow } from "./rows.ts";
import { METADATA_FIELD, metadataKeyOf, SCHEDULED } from "./metadata-search.ts";

export const MESSAGE_SEARCH_FIELDS = ["status", "to", "from", "subject", "tag", "created_at", "bounce_class", METADATA_FIELD] as const;

/**
 * `bounce_class:block`: a LIKE pattern for an event's details_json holding that class (the
 * JSON is written by JSON.stringify, without spaces), on both engines.
 */
export const bounceClassPattern = (value: string): string => containsPattern(`"bounce_class":${JSON.stringify(value.toLowerCase())}`);

export function searchClause(terms: readonly SearchTerm[], params: unknown[]): string {
  let sql = "";
  const recipientMatch = (column: string) => `EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.message_id = m.id AND ${column})`;
  for (const t of terms) {
    const like = containsPattern(t.value);
    switch (t.field) {
      case null:
        sql += ` AND (LOWER(COALESCE(m.subject, '')) LIKE ? ESCAPE '\\' OR LOWER(m.mail_from) LIKE ? ESCAPE '\\' OR ${recipientMatch("LOWER(r.email) LIKE ? ESCAPE '\\'")})`;
        params.push(like, like, like);
        break;
      case "subject":
        sql += " AND LOWER(COALESCE(m.subject, '')) LIKE ? ESCAPE '\\'";
        params.push(like);
        break;
      case "from":
        sql += " AND LOWER(m.mail_from) LIKE ? ESCAPE '\\'";
        params.push(like);
        break;
      case "to":
        sql += ` AND ${recipientMatch("LOWER(r.email) LIKE ? ESCAPE '\\'")}`;
        params.push(like);
        break;
      case "status":
        // Scheduled: a send_at, and a recipient still waiting for its first attempt (issue 34).
        if (t.value.toLowerCase() === SCHEDULED) {
          sql += ` AND m.send_at IS NOT NULL AND ${recipientMatch("r.state = 'queued' AND r.attempts = 0")}`;
          break;
        }
        sql += ` AND ${recipientMatch("r.status = ?")}`;
        params.push(t.value.toLowerCase());
        break;
      case "tag":
        // Tags are stored as a JSON array of strings: match one element exactly.
        sql += " AND LOWER(m.tags_json) LIKE ? ESCAPE '\\'";
        params.push(containsPattern(JSON.stringify(t.value.toLowerCase())));
        break;
      case "bounce_class":
        sql +=
          " AND EXISTS (SELECT 1 FROM message_events e WHERE e.message_id = m.id AND e.kind IN ('bounce', 'soft_bounce') AND e.details_json LIKE ? ESCAPE '\\')";
        params.push(bounceClassPattern(t.value));
        break;
      case "created_at":
        sql += ` AND m.created_at ${t.op} ?`;
        params.push(termTimeMs(t.value));
        break;
      default: {
        // metadata.<key>:<value>, one of the message's metadata values exactly (metadata-search.ts).
        const key = metadataKeyOf(t.field);
        if (key === null) break;
        sql += " AND json_extract(m.metadata_json, ?) = ?";
        params.push(`$."${key}"`, t.value);
      }
    }
  }
  return sql;
}

/** E12's search of an outbound account's messages, a slice at a time (sliced-search.ts), on any connection to the store. */
export function messageSliceReader(db: Database, outboundAccountId: string, terms: readonly SearchTerm[]): SliceReader<MessageRow> {
  const params: unknown[] = [];
  const where = searchClause(terms, params);
  const columns = MESSAGE_COLUMNS.split(", ")
    .map((c) => `m.${c}`)
    .join(", ");
  return sqliteSliceReader(
    db,
    { from: "outbound_messages m WHERE m.outbound_account_id = ?", scopeParams: [outboundAccountId], columns, prefix: "m." },
    { where, params },
  );
}

/** The messages a search of E12 reads (search/run-search.ts); a search of another kind is not this repository's. */
export const messageReaderOf: ReaderOf = (db, request) => {
  if (request.kind !== "messages") throw new Error(`a search of ${request.kind} is not a search of messages`);
  return messageSliceReader(db, request.outboundAccountId, request.terms);
};
