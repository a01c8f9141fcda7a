// The WebhookPostRepo contract, run on both engines: createWebhookPostRepo on SQLite and on
// PostgreSQL (a throwaway server with the postgres migrations).
// The same cases: a POST reads back field for field with the same JS types (test a
// boolean, a missing status null, counts and milliseconds numbers); a list holds one
// outbound account's POSTs only, newest first with ties in id order; limit, hasMore,
// cursors (strictly older, ties split across pages) and offsets page the same way.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { WebhookPost } from "../../src/events/webhook-post.ts";
import type { WebhookPostRepo } from "../../src/events/webhook-posts.port.ts";
import { createWebhookPostRepo } from "../../src/events/webhook-posts.repo.ts";
import type { PageRequest } from "../../src/store/paging.ts";
import { type EngineHandle, STORE_ENGINES, type StoreEngine } from "../helpers/engines.ts";

interface Opened {
  repo: WebhookPostRepo;
  handle: EngineHandle;
}

const open = async (engine: StoreEngine): Promise<Opened> => {
  const handle = await engine.open();
  return { handle, repo: createWebhookPostRepo(handle.db) };
};

// Past 2^32 ms, so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;

const post = (over: Partial<Omit<WebhookPost, "id">> = {}): Omit<WebhookPost, "id"> => ({
  outboundAccountId: "o1",
  batchId: "msg_batch_1",
  events: 3,
  test: false,
  status: 200,
  problem: "",
  durationMs: 41,
  createdAtMs: NOW_MS,
  ...over,
});

/** Newest first, then the larger id first (ids compared byte by byte). */
const newestFirst = (posts: WebhookPost[]) => [...posts].sort((a, b) => b.createdAtMs - a.createdAtMs || (a.id < b.id ? 1 : -1));

describe.each(STORE_ENGINES)("WebhookPostRepo on $name", (engine) => {
  const it = engine.test;
  let opened: Opened | undefined;
  const repo = (): WebhookPostRepo => opened!.repo;
  const all = async (outboundAccountId: string) => (await repo().list(outboundAccountId, { limit: 1000 })).items;

  beforeAll(async () => {
    if (engine.available()) opened = await open(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(["webhook_posts"]);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("a recorded POST reads back field for field under a new id, with numbers as numbers, test a boolean and a missing status null", async () => {
    const ok = post({ test: true, events: 1 });
    const failed = post({
      batchId: "msg_batch_2",
      events: 2 ** 33,
      status: null,
      problem: "no answer within 10000 ms — «timeout» 'quoted'",
      durationMs: 10_000,
      createdAtMs: NOW_MS + 1,
    });
    const refused = post({ batchId: "msg_batch_3", status: 503, problem: "Service Unavailable", createdAtMs: NOW_MS + 2 });
    for (const p of [ok, failed, refused]) await repo().record(p);
    const page = await repo().list("o1", { limit: 10 });
    expect(page.hasMore).toBe(false);
    for (const item of page.items) expect(item.id).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(page.items.map((p) => p.id)).size).toBe(3);
    // toStrictEqual: "1795000000000" (a string) or 1 (a number for test) would not pass.
    expect(page).toStrictEqual({ items: [refused, failed, ok].map((p, i) => ({ id: page.items[i]!.id, ...p })), hasMore: false });
  });

  it("a list holds one outbound account's POSTs only; an unknown or look-alike account lists nothing", async () => {
    await repo().record(post({ outboundAccountId: "o1" }));
    await repo().record(post({ outboundAccountId: "o2", batchId: "msg_other" }));
    expect((await all("o1")).map((p) => p.outboundAccountId)).toStrictEqual(["o1"]);
    expect((await all("o2")).map((p) => p.batchId)).toStrictEqual(["msg_other"]);
    for (const other of ["o3", "o%", "O1", ""])
      expect(await repo().list(other, { limit: 10 })).toStrictEqual({ items: [], hasMore: false });
  });

  it("newest first, ties by id; limit and offset page the list, hasMore says whether more follow", async () => {
    for (let i = 0; i < 7; i++) await repo().record(post({ batchId: `b${i}`, createdAtMs: NOW_MS + (i % 3) }));
    const listed = await all("o1");
    expect(listed).toHaveLength(7);
    expect(listed).toStrictEqual(newestFirst(listed));
    expect(await repo().list("o1", { limit: 3 })).toStrictEqual({ items: listed.slice(0, 3), hasMore: true });
    expect(await repo().list("o1", { limit: 3, offset: 3 })).toStrictEqual({ items: listed.slice(3, 6), hasMore: true });
    expect(await repo().list("o1", { limit: 3, offset: 6 })).toStrictEqual({ items: listed.slice(6), hasMore: false });
    expect(await repo().list("o1", { limit: 7 })).toStrictEqual({ items: listed, hasMore: false });
  });

  it("a cursor lists what is strictly older, splitting ties by id, so cursor paging walks every POST once", async () => {
    for (let i = 0; i < 9; i++) await repo().record(post({ batchId: `b${i}`, createdAtMs: NOW_MS + Math.floor(i / 3) }));
    const listed = await all("o1");
    const walked: WebhookPost[] = [];
    let page: PageRequest = { limit: 2 };
    for (;;) {
      const got = await repo().list("o1", page);
      walked.push(...got.items);
      if (!got.hasMore) break;
      const last = got.items.at(-1)!;
      page = { limit: 2, before: { createdAtMs: last.createdAtMs, id: last.id } };
    }
    expect(walked).toStrictEqual(listed);
    const middle = listed[4]!;
    expect((await repo().list("o1", { limit: 100, before: { createdAtMs: middle.createdAtMs, id: middle.id } })).items).toStrictEqual(
      listed.slice(5),
    );
    // A cursor older than everything: nothing.
    expect(await repo().list("o1", { limit: 10, before: { createdAtMs: NOW_MS, id: "" } })).toStrictEqual({ items: [], hasMore: false });
  });
});
