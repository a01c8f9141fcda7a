// What the search thread reads for each kind of search: E12's messages (the outbound
// feature's) and E6's statuses (the inbound feature's). Here, with the repositories, as it
// is the one place that knows both; search/ runs whichever it is handed.
import { statusReaderOf } from "../inbound/statuses/status-search.repo.ts";
import { messageReaderOf } from "../outbound/queue/search.repo.ts";
import type { ReaderOf } from "../search/run-search.ts";

export const searchReaderOf: ReaderOf = (db, request) =>
  request.kind === "messages" ? messageReaderOf(db, request) : statusReaderOf(db, request);
