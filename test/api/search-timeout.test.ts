// A search past http.search_timeout answers 503 saying so (docs/api.md, Search), on E6 as
// on E12 (test/e2e/search-event-loop.test.ts, against the binary); a search within it
// answers as usual, from the same search thread.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { journaledStore } from "../../src/inbound/statuses/statuses.repo.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";

let t: TestApp;
const lines: Record<string, unknown>[] = [];
let addressId: string;
const T0 = Date.parse("2026-11-01T00:00:00Z");
const auth = bearer(ACCOUNT_A.token);
const STATUSES = 20_000;

beforeAll(async () => {
  t = await startTestApp({
    http: 'search_window = 100000\nsearch_max_terms = 100\nsearch_timeout = "100ms"',
    logger: createLogger({ sink: (line) => lines.push(JSON.parse(line)) }),
  });
  const created = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
    auth,
    body: { target: "https://example.com/in", target_format: "json+n" },
  });
  addressId = created.body.id;
  const rows = Array.from({ length: STATUSES }, (_, i) => ({
    id: (0x100000 + i).toString(16).padStart(16, "0"),
    accountId: ACCOUNT_A.id,
    addressId,
    messageId: `m${i}@x`,
    mailFrom: `sender${i}@sender.test`,
    rcptTo: `${addressId}@in.postroom.test`,
    subject: `message ${i}`,
    status: "200",
    statusCategory: "successful" as const,
    tls: null,
    sizeBytes: 100,
    remoteIp: null,
    response: null,
    postroomMessageId: null,
    createdAtMs: T0 + i,
    seq: 1_000_000 + i,
  }));
  journaledStore(t.app.store).store(rows);
});
afterAll(() => t.stop());

describe("search time limit", () => {
  test("a narrow search answers within the limit; one of 60 terms over 20,000 statuses stops at it: 503 naming http.search_timeout, with Retry-After", async () => {
    const narrow = await t.call(
      "GET",
      `/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=${encodeURIComponent('subject:"message 19999"')}`,
      { auth },
    );
    expect(narrow.status).toBe(200);
    expect(((await narrow.json()) as { subject: string }[]).map((s) => s.subject)).toEqual(["message 19999"]);
    // Every term but the last matches each status (its recipient, the last of three fields tried), so each is tested on all of them.
    const query = [...Array.from({ length: 59 }, () => "in."), "nothing-like-this"].join(" ");
    const started = performance.now();
    const res = await t.call(
      "GET",
      `/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=${encodeURIComponent(query)}`,
      { auth },
    );
    expect(performance.now() - started).toBeLessThan(100 + 250);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({
      status: 503,
      error:
        "search timed out: it took longer than 100 ms (http.search_timeout); narrow it with a field (from:, to:, subject:) or a created_at range, use fewer words, or try again later",
    });
    // The operator sees it, without the query's text (it holds addresses).
    const logged = lines.filter((l) => l.msg === "search timed out");
    expect(logged).toEqual([
      expect.objectContaining({ level: "warn", list: "incoming_statuses", account: ACCOUNT_A.id, terms: 60, timeout_ms: 100 }),
    ]);
    expect(JSON.stringify(logged)).not.toContain("nothing-like-this");
  });

  test("a list without a search is no search: it is not timed", async () => {
    const res = await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}`, { auth });
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(50);
  });
});
