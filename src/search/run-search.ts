// A search of E6 or E12 as a message between threads: what to search (plain data, so it
// can be posted to the search thread), and running it on a connection to the store.
import type { Database } from "bun:sqlite";
import { statusSliceReader } from "../inbound/statuses/status-search.repo.ts";
import type { SearchTerm } from "../lib/search-query.ts";
import { messageSliceReader } from "../outbound/queue/search.repo.ts";
import type { PageRequest } from "../store/paging.ts";
import { SEARCH_SLICE_ROWS, slicedSearch, type SlicedAnswer } from "../store/sliced-search.ts";

interface SearchOf {
  terms: readonly SearchTerm[];
  page: PageRequest;
  windowRows: number;
  /** Epoch ms (Date.now(), which every thread shares) past which the search stops (http.search_timeout). */
  deadlineMs: number;
}

export type SearchRequest = SearchOf &
  ({ kind: "messages"; outboundAccountId: string } | { kind: "statuses"; accountId: string; addressId: string });

/** The rows are the tables' rows (MessageRow, StatusRow): the repository makes them records. */
export type SearchAnswer = SlicedAnswer<unknown>;

/** Runs `request` on `db`; throws SearchTimeoutError past its deadline. */
export function runSearch(db: Database, request: SearchRequest): SearchAnswer {
  const reader =
    request.kind === "messages"
      ? messageSliceReader(db, request.outboundAccountId, request.terms)
      : statusSliceReader(db, request.accountId, request.addressId, request.terms);
  return slicedSearch<unknown>(reader, request.page, request.windowRows, SEARCH_SLICE_ROWS, request.deadlineMs, Date.now);
}
