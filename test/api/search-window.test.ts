// A search reads at most http.search_window records per request (docs/api.md, Search):
// with few matches spread over many records, each page ends at the window's edge with a
// Link to search on, and following the Links finds every match once, newest first. A list
// without a search is not windowed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { journaledStore } from "../../src/inbound/statuses.repo.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";

let t: TestApp;
let addressId: string;
const T0 = Date.parse("2026-11-01T00:00:00Z");
const auth = bearer(ACCOUNT_A.token);

beforeAll(async () => {
  t = await startTestApp({ http: "search_window = 100" });
  const created = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { auth, body: { target: "https://example.com/in", target_format: "json+n" } });
  addressId = created.body.id;
  // 250 statuses, one a minute; every 40th from "needle@" (7 of them: 0, 40, ... 240).
  const rows = Array.from({ length: 250 }, (_, i) => ({
    id: (0x100 + i).toString(16).padStart(16, "0"),
    accountId: ACCOUNT_A.id,
    addressId,
    messageId: `m${i}@x`,
    mailFrom: i % 40 === 0 ? `needle${i}@sender.test` : `hay${i}@sender.test`,
    rcptTo: `${addressId}@in.postroom.test`,
    subject: `message ${i}`,
    status: "200",
    statusCategory: "successful" as const,
    tls: null,
    sizeBytes: 100,
    remoteIp: null,
    response: null,
    postroomMessageId: null,
    createdAtMs: T0 + i * 60_000,
    seq: 1_000_000 + i,
  }));
  journaledStore(t.app.store).store(rows);
});
afterAll(() => t.stop());

/** Follows the Link headers from `path`; returns each page's subjects. */
async function pages(path: string): Promise<string[][]> {
  const out: string[][] = [];
  let next: string | null = path;
  while (next) {
    const r = await t.call("GET", next, { auth });
    expect(r.status).toBe(200);
    out.push(((await r.json()) as { subject: string }[]).map((s) => s.subject));
    next = /<([^>]+)>; rel="next"/.exec(r.headers.get("link") ?? "")?.[1] ?? null;
  }
  return out;
}

describe("search window", () => {
  test("pages of a sparse search end at each window's edge; together they hold every match once, newest first", async () => {
    const got = await pages(`/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=from:needle`);
    // Windows of 100 from the newest: 249-150 (needles 240, 200, 160), 149-50 (120, 80), 49-0 (40, 0).
    expect(got).toEqual([["message 240", "message 200", "message 160"], ["message 120", "message 80"], ["message 40", "message 0"]]);
  });

  test("a search that matches nothing reads the list a window at a time: empty pages with a Link, then none", async () => {
    const got = await pages(`/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=nothing-like-this`);
    expect(got).toEqual([[], [], []]);
  });

  test("a list without a search is paged by 50, not windowed", async () => {
    const got = await pages(`/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}`);
    expect(got.map((p) => p.length)).toEqual([50, 50, 50, 50, 50]);
    expect(got[0]![0]).toBe("message 249");
  });

  test("a dense search fills its pages from within the window", async () => {
    const got = await pages(`/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=message`);
    expect(got.map((p) => p.length)).toEqual([50, 50, 50, 50, 50]);
    expect(got.flat()).toEqual(Array.from({ length: 250 }, (_, i) => `message ${249 - i}`));
  });
});
