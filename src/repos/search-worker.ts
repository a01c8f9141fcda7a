// Worker thread entry: runs searches (search/run-search.ts) on a read-only connection of
// its own, one at a time, in order (search/search-thread.ts says why). With the
// repositories, as it reads every feature's searches (search-readers.ts).
import { Database } from "bun:sqlite";
import { runSearch } from "../search/run-search.ts";
import type { SearchReply, SearchThreadRequest } from "../search/search-thread.ts";
import { SearchTimeoutError } from "../store/sliced-search.ts";
import { searchReaderOf } from "./search-readers.ts";

declare const self: Worker;

let db: Database | null = null;

self.onmessage = (event: MessageEvent<SearchThreadRequest>) => {
  const { id, path, request } = event.data;
  let reply: SearchReply;
  try {
    if (!db) {
      // WAL: this reader sees the last commit and never holds up a writer.
      db = new Database(path, { readonly: true, strict: true });
      db.exec("PRAGMA busy_timeout = 5000");
    }
    reply = { id, ok: true, answer: runSearch(db, request, searchReaderOf) };
  } catch (err) {
    reply =
      err instanceof SearchTimeoutError
        ? { id, ok: false, timedOut: true }
        : { id, ok: false, timedOut: false, message: (err as Error).message };
  }
  self.postMessage(reply);
};
