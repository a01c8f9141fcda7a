// The search thread (search-thread.ts): the same answers as a search on the caller's
// connection; a search past its deadline, or a closed thread, rejects; a search without
// a deadline is not cut short.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { journaledStore } from "../../src/inbound/statuses/statuses.repo.ts";
import { parseSearchQuery } from "../../src/lib/search-query.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { STATUS_SEARCH_FIELDS } from "../../src/inbound/statuses/statuses.port.ts";
import type { SearchRequest } from "../../src/search/run-search.ts";
import { searchReaderOf } from "../../src/repos/search-readers.ts";
import { localSearch, SearchThread } from "../../src/search/search-thread.ts";
import { SearchTimeoutError } from "../../src/store/sliced-search.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
let store: Store;
const T0 = Date.parse("2026-11-01T00:00:00Z");

beforeAll(() => {
  store = openStore(dir.path);
  const rows = Array.from({ length: 300 }, (_, i) => ({
    id: (0x1000 + i).toString(16).padStart(16, "0"),
    accountId: "acc",
    addressId: "addr",
    messageId: null,
    mailFrom: i % 7 === 0 ? `needle${i}@sender.test` : `hay${i}@sender.test`,
    rcptTo: "addr@in.postroom.test",
    subject: `message ${i}`,
    status: "200",
    statusCategory: "successful" as const,
    tls: null,
    sizeBytes: null,
    remoteIp: null,
    response: null,
    postroomMessageId: null,
    createdAtMs: T0 + i,
    seq: i + 1,
  }));
  journaledStore(store).store(rows);
});
afterAll(() => {
  store.close();
  dir.remove();
});

const request = (over: Partial<SearchRequest> = {}): SearchRequest =>
  ({
    kind: "statuses",
    accountId: "acc",
    addressId: "addr",
    terms: parseSearchQuery("from:needle", STATUS_SEARCH_FIELDS),
    page: { limit: 5 },
    windowRows: 100,
    deadlineMs: Date.now() + 60_000,
    ...over,
  }) as SearchRequest;

describe("SearchThread", () => {
  test("answers as a search on the caller's connection does, for several searches at once", async () => {
    const thread = new SearchThread(store.path, silentLogger);
    try {
      const requests = [
        request(),
        request({ page: { limit: 5, offset: 5 } }),
        request({ page: { limit: 50, before: { createdAtMs: T0 + 200, id: "x" } } }),
      ];
      const onThread = await Promise.all(requests.map((r) => thread.run(r)));
      const here = await Promise.all(requests.map((r) => localSearch(store.db, searchReaderOf).run(r)));
      expect(onThread).toEqual(here);
      expect(onThread[0]!.rows.length).toBe(6);
    } finally {
      thread.close();
    }
  });

  test("a search past its deadline rejects with SearchTimeoutError", async () => {
    const thread = new SearchThread(store.path, silentLogger);
    try {
      await expect(thread.run(request({ deadlineMs: Date.now() - 1 }))).rejects.toBeInstanceOf(SearchTimeoutError);
    } finally {
      thread.close();
    }
  });

  test.each([
    ["none", Number.POSITIVE_INFINITY],
    ["60 days away (past setTimeout's 32 bits)", Date.now() + 60 * 86_400_000],
  ])("a search whose deadline is %s is not cut short while the thread starts", async (_, deadlineMs) => {
    const thread = new SearchThread(store.path, silentLogger);
    try {
      expect((await thread.run(request({ deadlineMs }))).rows.length).toBe(6);
    } finally {
      thread.close();
    }
  });

  test("closing the thread rejects the searches still waiting; a thread that cannot open the database rejects, it does not hang", async () => {
    const thread = new SearchThread(store.path, silentLogger);
    const pending = thread.run(request());
    thread.close();
    await expect(pending).rejects.toThrow("the search thread was closed");
    const nowhere = new SearchThread(`${dir.path}/missing/postroom.db`, silentLogger);
    try {
      await expect(nowhere.run(request())).rejects.toThrow();
    } finally {
      nowhere.close();
    }
  });
});
