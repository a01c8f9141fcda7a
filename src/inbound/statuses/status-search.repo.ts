// E6's `query` over incoming statuses as SQL on SQLite: free text, the fields of
// STATUS_SEARCH_FIELDS and created_at comparisons, each a parameterised clause, read a
// slice at a time (sliced-search.ts) on any connection to the store. SQLite only: E6's
// search runs on the search thread's own connection (statuses.repo.ts says why the statuses
// keep a repository per engine); PostgreSQL's is in statuses.pg.repo.ts.
import type { Database } from "bun:sqlite";
import type { SearchTerm } from "../../lib/search-query.ts";
import { termTimeMs } from "../../lib/search-query.ts";
import { containsPattern } from "../../store/paging.ts";
import type { ReaderOf } from "../../search/run-search.ts";
import { sqliteSliceReader } from "../../store/sqlite-slice-reader.ts";
import type { SliceReader } from "../../store/sliced-search.ts";
import { FIELD_COLUMN, STATUS_COLUMNS, type StatusRow } from "./statuses.port.ts";

/** WHERE fragments for search terms; every term must match. */
export function searchClause(terms: readonly SearchTerm[], params: unknown[]): string {
  let sql = "";
  for (const t of terms) {
    if (t.field === null) {
      sql +=
        " AND (LOWER(COALESCE(subject, '')) LIKE ? ESCAPE '\\' OR LOWER(mail_from) LIKE ? ESCAPE '\\' OR LOWER(rcpt_to) LIKE ? ESCAPE '\\')";
      const like = containsPattern(t.value);
      params.push(like, like, like);
    } else if (t.field === "created_at") {
      sql += ` AND created_at ${t.op} ?`;
      params.push(termTimeMs(t.value));
    } else if (t.field === "status" || t.field === "status_category" || t.field === "x_postroom_message_id") {
      sql += ` AND LOWER(${FIELD_COLUMN[t.field]}) = ?`;
      params.push(t.value.toLowerCase());
    } else {
      sql += ` AND LOWER(COALESCE(${FIELD_COLUMN[t.field]}, '')) LIKE ? ESCAPE '\\'`;
      params.push(containsPattern(t.value));
    }
  }
  return sql;
}

/** E6's search of an address's statuses. */
export function statusSliceReader(
  db: Database,
  accountId: string,
  addressId: string,
  terms: readonly SearchTerm[],
): SliceReader<StatusRow> {
  const params: unknown[] = [];
  const where = searchClause(terms, params);
  return sqliteSliceReader(
    db,
    { from: "incoming_statuses WHERE account_id = ? AND address_id = ?", scopeParams: [accountId, addressId], columns: STATUS_COLUMNS },
    { where, params },
  );
}

/** The statuses a search of E6 reads (search/run-search.ts); a search of another kind is not this repository's. */
export const statusReaderOf: ReaderOf = (db, request) => {
  if (request.kind !== "statuses") throw new Error(`a search of ${request.kind} is not a search of statuses`);
  return statusSliceReader(db, request.accountId, request.addressId, request.terms);
};
