// A search reads at most http.search_window records per request (docs/api.md, Search):
// with few matches spread over many records, each page ends at the window's edge with a
// Link to search on, and following the Links finds every match once, newest first. A list
// without a search is not windowed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { journaledStore } from "../../src/inbound/statuses/statuses.repo.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";

let t: TestApp;
let addressId: string;
const T0 = Date.parse("2026-11-01T00:00:00Z");
const auth = bearer(ACCOUNT_A.token);

beforeAll(async () => {
  t = await startTestApp({ http: "search_window = 100" });
  const created = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
    auth,
    body: { target: "https://example.com/in", target_format: "json+n" },
  });
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
    expect(got).toEqual([
      ["message 240", "message 200", "message 160"],
      ["message 120", "message 80"],
      ["message 40", "message 0"],
    ]);
  });

  test("a search paged by number reads the same windows: page=1 ends at the first window's edge with a cursor Link, and the Links find every match once", async () => {
    const first = await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=from:needle&page=1`, {
      auth,
    });
    expect(((await first.json()) as { subject: string }[]).map((s) => s.subject)).toEqual(["message 240", "message 200", "message 160"]);
    const link = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1] ?? "";
    // Searching on goes by cursor from the window's edge: page=2 would skip matches of this same window.
    expect(new URL(link, "http://x").searchParams.get("page")).toBeNull();
    expect(new URL(link, "http://x").searchParams.get("before")).not.toBeNull();
    const got = await pages(`/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=from:needle&page=1`);
    expect(got).toEqual([
      ["message 240", "message 200", "message 160"],
      ["message 120", "message 80"],
      ["message 40", "message 0"],
    ]);
  });

  test("a dense search paged by number gets page numbers while its pages fill inside the window, then a cursor from the window's edge", async () => {
    const second = await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=message&page=2`, {
      auth,
    });
    expect(((await second.json()) as { subject: string }[]).map((s) => s.subject)).toEqual(
      Array.from({ length: 50 }, (_, i) => `message ${199 - i}`),
    );
    expect(second.headers.get("link")).toMatch(/\?address_id=[^&]+&query=message&before=[^&>]+>; rel="next"$/);
    const one = await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=message&page=1`, { auth });
    expect(one.headers.get("link")).toMatch(/[?&]page=2>; rel="next"$/);
    const got = await pages(`/api/v0.1/${ACCOUNT_A.id}/incoming_statuses?address_id=${addressId}&query=message&page=2`);
    expect(got.flat()).toEqual(Array.from({ length: 200 }, (_, i) => `message ${199 - i}`));
  });

  test("a query of more terms than http.search_max_terms (16) is 422 naming query and the limit, on E6 and E12", async () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join("+");
    for (const path of [`incoming_statuses?address_id=${addressId}`, `outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}`]) {
      for (const paging of ["", "&page=2"]) {
        const refused = await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/${path}&query=${words(83)}${paging}`, { auth });
        expect(refused).toMatchObject({
          status: 422,
          body: {
            status: 422,
            error:
              "query: at most 16 terms, not 83 (http.search_max_terms): search for fewer words, or narrow by a field (from:, to:, created_at:>=...)",
          },
        });
        expect((await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/${path}&query=${words(16)}${paging}`, { auth })).status).toBe(200);
      }
    }
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
