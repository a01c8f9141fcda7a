// A search of E6 or E12 as a message between threads: what to search (plain data, so it
// can be posted to the search thread), and running it on a connection to the store. Which
// rows a search reads is the feature's (status-search.repo.ts, queue/search.repo.ts): the
// caller hands its reader in, so this folder knows no feature.
import type { Database } from "bun:sqlite";
import type { SearchTerm } from "../lib/search-query.ts";
import type { PageRequest } from "../store/paging.ts";
import { SEARCH_SLICE_ROWS, type SliceReader, type SlicedAnswer, slicedSearch } from "../store/sliced-search.ts";

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

/** The rows a request reads, as slices (sliced-search.ts); throws for a kind it does not read. */
export type ReaderOf = (db: Database, request: SearchRequest) => SliceReader<unknown>;

/** Runs `request` on `db`; throws SearchTimeoutError past its deadline. */
export function runSearch(db: Database, request: SearchRequest, readerOf: ReaderOf): SearchAnswer {
  const reader = readerOf(db, request);
  return slicedSearch<unknown>(reader, request.page, request.windowRows, SEARCH_SLICE_ROWS, request.deadlineMs, Date.now);
}
