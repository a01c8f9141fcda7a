// The StatusRepo contract, run on both engines: SQLite (createStatusRepo: the per-node
// journal, then grouped commits) and PostgreSQL (createPgStatusRepo: straight to the
// database), plus a database collated by ICU en-US for the lists and searches. The same
// cases, the same expectations: a status reads back field for field with the same JS types;
// reads are scoped by account and address; the list pages newest first with ties broken by
// ID in byte order; a search folds ASCII letters only, compares times, and stops at its
// window's edge with a cursor to go on; recorded statuses are counted in the hourly stats.
// On PostgreSQL, two nodes (two SQL clients) recording at once lose nothing.
import { SQL } from "bun";
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { IncomingStatus } from "../../../src/inbound/statuses/incoming-status.ts";
import { createPgStatusRepo } from "../../../src/inbound/statuses/statuses.pg.repo.ts";
import { STATUS_SEARCH_FIELDS, type StatusRepo } from "../../../src/inbound/statuses/statuses.port.ts";
import { createStatusRepo } from "../../../src/inbound/statuses/statuses.repo.ts";
import { parseSearchQuery } from "../../../src/lib/search-query.ts";
import { hourOf } from "../../../src/stats/hourly.ts";
import type { StatsRepo } from "../../../src/stats/stats.port.ts";
import { createStatsRepo } from "../../../src/stats/stats.repo.ts";
import type { PageRequest } from "../../../src/store/paging.ts";
import { SearchTimeoutError } from "../../../src/store/sliced-search.ts";
import { POSTGRES_LINGUISTIC, STORE_ENGINES, type EngineHandle } from "../../helpers/engines.ts";

// Past 2^32 ms (as Date.now() is), so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;
const TABLES = ["incoming_statuses", "stats_hourly"] as const;

const status = (id: string, over: Partial<IncomingStatus> = {}): IncomingStatus => ({
  id,
  accountId: "acc_a",
  addressId: "addr_a",
  messageId: null,
  mailFrom: "alice@sender.test",
  rcptTo: "addr_a@in.postroom.test",
  subject: null,
  status: "delivered",
  statusCategory: "successful",
  tls: null,
  sizeBytes: null,
  remoteIp: null,
  response: null,
  postroomMessageId: null,
  storeUrl: null,
  envelope: null,
  createdAtMs: NOW_MS,
  state: null,
  attempts: null,
  nextAttemptAtMs: null,
  ...over,
});

describe.each([...STORE_ENGINES, POSTGRES_LINGUISTIC])("StatusRepo on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  let statuses: StatusRepo;
  let stats: StatsRepo;
  const ids = async (
    terms: string | null,
    page: Partial<PageRequest> = {},
    accountId = "acc_a",
    addressId = "addr_a",
    windowRows?: number,
  ) =>
    (
      await statuses.list(accountId, addressId, parseSearchQuery(terms, STATUS_SEARCH_FIELDS), { limit: 50, ...page }, windowRows)
    ).items.map((s) => s.id);

  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    statuses = handle.kind === "sqlite" ? createStatusRepo(handle.store) : createPgStatusRepo(handle.sql);
    stats = createStatsRepo(handle.db);
  }, 60_000);
  beforeEach(async () => {
    await statuses?.flush();
    await handle?.clear(TABLES);
  });
  afterAll(async () => {
    statuses?.close();
    await handle?.close();
  });

  it("a recorded status reads back field for field, sizes and times as numbers, nulls as nulls", async () => {
    const full = status("st_full", {
      messageId: "<m1@sender.test>",
      subject: "Grüße ✉",
      status: "delivered",
      statusCategory: "successful",
      tls: "TLSv1.3",
      sizeBytes: 2 ** 40,
      remoteIp: "2001:db8::1",
      response: "200 OK",
      postroomMessageId: "pm_1",
      storeUrl: "https://files.example/m?sig=1",
      envelope: '{"to":"addr_a@in.postroom.test"}',
      createdAtMs: Number.MAX_SAFE_INTEGER,
    });
    const bare = status("st_bare", { statusCategory: "rejected", status: "target_error" });
    await statuses.record([full, bare]);
    // toStrictEqual: "1099511627776" (a string) for the size would not pass.
    expect(await statuses.get("acc_a", "addr_a", "st_full")).toStrictEqual(full);
    expect(await statuses.get("acc_a", "addr_a", "st_bare")).toStrictEqual(bare);
    expect((await statuses.list("acc_a", "addr_a", [], { limit: 10 })).items).toStrictEqual([full, bare]);
  });

  it("update changes the state, attempts and next attempt of the account's statuses named, and no other", async () => {
    const queued = {
      state: "queued" as const,
      attempts: 1,
      nextAttemptAtMs: NOW_MS + 60_000,
      status: "503",
      statusCategory: "delayed" as const,
    };
    await statuses.record([
      status("st_1", queued),
      status("st_2", queued),
      status("st_3", queued),
      status("st_b", { ...queued, accountId: "acc_b" }),
    ]);
    expect(await statuses.get("acc_a", "addr_a", "st_1")).toStrictEqual(status("st_1", queued));
    const change = {
      status: "200",
      statusCategory: "successful" as const,
      response: null,
      state: "delivered" as const,
      attempts: 3,
      nextAttemptAtMs: null,
    };
    await statuses.update("acc_a", ["st_1", "st_2", "st_b"], change);
    for (const id of ["st_1", "st_2"])
      expect(await statuses.get("acc_a", "addr_a", id)).toMatchObject({ ...change, statusCategory: "successful" });
    expect(await statuses.get("acc_a", "addr_a", "st_3")).toStrictEqual(status("st_3", queued));
    expect(await statuses.get("acc_b", "addr_a", "st_b")).toStrictEqual(status("st_b", { ...queued, accountId: "acc_b" }));
  });

  it("get and list see the account's and address's own statuses only", async () => {
    await statuses.record([status("st_a"), status("st_b", { accountId: "acc_b" }), status("st_c", { addressId: "addr_c" })]);
    expect((await statuses.get("acc_a", "addr_a", "st_a"))?.id).toBe("st_a");
    expect(await statuses.get("acc_b", "addr_a", "st_a")).toBeNull();
    expect(await statuses.get("acc_a", "addr_c", "st_a")).toBeNull();
    expect(await statuses.get("acc_a", "addr_a", "st_b")).toBeNull();
    for (const wrong of ["ST_A", "st_", "st_%", "%", ""]) expect(await statuses.get("acc_a", "addr_a", wrong)).toBeNull();
    expect(await ids(null)).toEqual(["st_a"]);
    expect(await ids(null, {}, "acc_b")).toEqual(["st_b"]);
    expect(await ids(null, {}, "acc_a", "addr_c")).toEqual(["st_c"]);
    expect(await ids(null, {}, "acc_none")).toEqual([]);
  });

  it("list pages newest first, ties on created_at broken by ID in byte order, by cursor and by offset", async () => {
    // Byte order: "st_B" (0x42) < "st_Z" < "st_a" (0x61) < "st_b"; a language's collation would put B after a.
    const at = { st_a: NOW_MS, st_B: NOW_MS, st_b: NOW_MS, st_Z: NOW_MS, st_old: NOW_MS - 1, st_new: NOW_MS + 1 };
    await statuses.record(Object.entries(at).map(([id, ms]) => status(id, { createdAtMs: ms })));
    expect(await ids(null)).toEqual(["st_new", "st_b", "st_a", "st_Z", "st_B", "st_old"]);
    const first = await statuses.list("acc_a", "addr_a", [], { limit: 2 });
    expect(first.items.map((s) => s.id)).toEqual(["st_new", "st_b"]);
    expect(first.hasMore).toBe(true);
    expect(await ids(null, { limit: 2, before: { createdAtMs: NOW_MS, id: "st_b" } })).toEqual(["st_a", "st_Z"]);
    expect(await ids(null, { before: { createdAtMs: NOW_MS, id: "st_B" } })).toEqual(["st_old"]);
    expect(await ids(null, { before: { createdAtMs: NOW_MS - 1, id: "st_old" } })).toEqual([]);
    const exact = await statuses.list("acc_a", "addr_a", [], { limit: 6 });
    expect(exact.items).toHaveLength(6);
    expect(exact.hasMore).toBe(false);
    expect(await ids(null, { limit: 2, offset: 3 })).toEqual(["st_Z", "st_B"]);
    expect(await ids(null, { limit: 2, offset: 6 })).toEqual([]);
  });

  it("a search matches subject, from and to in part, ASCII letters without case, % _ \\ as themselves; fields and times as the API names them", async () => {
    await statuses.record([
      status("st_1", { subject: "Invoice MARCH", mailFrom: "billing@shop.test", createdAtMs: NOW_MS - 3 }),
      status("st_2", {
        subject: "100% off",
        rcptTo: "sales@in.postroom.test",
        status: "rejected",
        statusCategory: "rejected",
        createdAtMs: NOW_MS - 2,
      }),
      status("st_3", { subject: "Éclair", postroomMessageId: "PM_Xy", createdAtMs: NOW_MS - 1 }),
      status("st_4", { subject: null, mailFrom: "a_b@x.test", createdAtMs: NOW_MS }),
    ]);
    expect(await ids("march")).toEqual(["st_1"]);
    expect(await ids("SHOP")).toEqual(["st_1"]);
    expect(await ids("sales")).toEqual(["st_2"]);
    expect(await ids("100%")).toEqual(["st_2"]);
    expect(await ids("%")).toEqual(["st_2"]);
    expect(await ids("a_b")).toEqual(["st_4"]);
    expect(await ids("a\\b")).toEqual([]);
    // Only ASCII letters fold, as SQLite's LOWER: the stored "Éclair" keeps its É, which "éclair" does not match.
    expect(await ids("éclair")).toEqual([]);
    expect(await ids("CLAIR")).toEqual(["st_3"]);
    expect(await ids("status:REJECTED")).toEqual(["st_2"]);
    expect(await ids("status_category:rejected")).toEqual(["st_2"]);
    expect(await ids("x_postroom_message_id:pm_xy")).toEqual(["st_3"]);
    expect(await ids("subject:off")).toEqual(["st_2"]);
    expect(await ids("from:billing to:in.postroom")).toEqual(["st_1"]);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await ids(`created_at:>=${iso(NOW_MS - 1)}`)).toEqual(["st_4", "st_3"]);
    expect(await ids(`created_at:<${iso(NOW_MS - 2)}`)).toEqual(["st_1"]);
    expect(await ids(`created_at:${iso(NOW_MS - 2)}`)).toEqual(["st_2"]);
    expect(await ids(`created_at:>${iso(NOW_MS - 1)} status:delivered`)).toEqual(["st_4"]);
    expect(await ids(`created_at:<=${iso(NOW_MS - 3)} march`)).toEqual(["st_1"]);
    // A value that is no time matches nothing (SQLite compares with NULL).
    expect(await ids("created_at:>=yesterday")).toEqual([]);
  });

  it("a search reads a window of statuses per request and ends its page at the window's edge with a cursor to go on (none where the window reaches the end)", async () => {
    await statuses.record(
      Array.from({ length: 6 }, (_, i) => status(`st_${i}`, { subject: i === 0 ? "needle" : "hay", createdAtMs: NOW_MS + i })),
    );
    const first = await statuses.list("acc_a", "addr_a", parseSearchQuery("needle", STATUS_SEARCH_FIELDS), { limit: 10 }, 3);
    expect(first).toStrictEqual({ items: [], hasMore: true, next: { createdAtMs: NOW_MS + 3, id: "st_3" } });
    const second = await statuses.list(
      "acc_a",
      "addr_a",
      parseSearchQuery("needle", STATUS_SEARCH_FIELDS),
      { limit: 10, before: first.next },
      4,
    );
    expect(second).toStrictEqual({ items: [status("st_0", { subject: "needle" })], hasMore: false });
    expect(await ids("hay", { limit: 2 }, "acc_a", "addr_a", 3)).toEqual(["st_5", "st_4"]);
  });

  it("a search paged by number (offset) reads the first window too, skipping matches inside it, and ends at the window's edge", async () => {
    // Newest first: st_9 ... st_0; "needle" in st_9, st_8, st_7 and st_1; a window of 4 holds st_9-st_6.
    await statuses.record(
      Array.from({ length: 10 }, (_, i) =>
        status(`st_${i}`, { subject: [1, 7, 8, 9].includes(i) ? "needle" : "hay", createdAtMs: NOW_MS + i }),
      ),
    );
    const needle = parseSearchQuery("needle", STATUS_SEARCH_FIELDS);
    const second = await statuses.list("acc_a", "addr_a", needle, { limit: 2, offset: 2 }, 4);
    expect(second).toStrictEqual({
      items: [status("st_7", { subject: "needle", createdAtMs: NOW_MS + 7 })],
      hasMore: true,
      next: { createdAtMs: NOW_MS + 6, id: "st_6" },
    });
    expect(await statuses.list("acc_a", "addr_a", needle, { limit: 2, offset: 4 }, 4)).toStrictEqual({
      items: [],
      hasMore: true,
      next: { createdAtMs: NOW_MS + 6, id: "st_6" },
    });
  });

  it("a search past its time limit rejects with SearchTimeoutError; within it, it answers as usual", async () => {
    for (let b = 0; b < 20_000; b += 2_000)
      await statuses.record(
        Array.from({ length: 2_000 }, (_, j) => status(`st_${b + j}`, { subject: "hay", createdAtMs: NOW_MS + b + j })),
      );
    await statuses.flush();
    // Every term but the last matches each status (through its recipient): each is tested on all 20,000.
    const terms = parseSearchQuery([...Array.from({ length: 15 }, () => "in.postroom"), "needle"].join(" "), STATUS_SEARCH_FIELDS);
    await expect(statuses.list("acc_a", "addr_a", terms, { limit: 50 }, 20_000, 1)).rejects.toBeInstanceOf(SearchTimeoutError);
    expect(await statuses.list("acc_a", "addr_a", terms, { limit: 50, offset: 50 }, 30_000, 60_000)).toStrictEqual({
      items: [],
      hasMore: false,
    });
    expect(
      (await statuses.list("acc_a", "addr_a", parseSearchQuery("hay", STATUS_SEARCH_FIELDS), { limit: 50 }, 20_000, 60_000)).items,
    ).toHaveLength(50);
  });

  it("recorded statuses are counted in the account's hourly inbound stats", async () => {
    await statuses.record([
      status("st_1"),
      status("st_2"),
      status("st_3", { statusCategory: "rejected" }),
      status("st_4", { accountId: "acc_b" }),
    ]);
    await statuses.flush();
    const hourly = await stats.hourly("acc_a", "inbound", 0);
    expect(hourly.sort((x, y) => (x.key < y.key ? -1 : 1))).toStrictEqual([
      { hour: hourOf(NOW_MS), key: "rejected", count: 1 },
      { hour: hourOf(NOW_MS), key: "successful", count: 2 },
    ]);
  });

  if (engine.name === "PostgreSQL")
    it("groups recorded at once share a transaction, and a group that fails (a NOT NULL column null) fails alone", async () => {
      await statuses.record([status("st_0")]);
      const bad = status("st_bad", { mailFrom: null as unknown as string });
      const outcomes = await Promise.allSettled(
        [[status("st_1"), status("st_1b")], [status("st_2"), bad], [status("st_3"), status("st_3b")], [status("st_4")]].map((g) =>
          statuses.record(g),
        ),
      );
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
      const all = await statuses.list("acc_a", "addr_a", [], { limit: 100 });
      expect(all.items.map((s) => s.id).sort()).toEqual(["st_0", "st_1", "st_1b", "st_3", "st_3b", "st_4"]);
      expect(await stats.hourly("acc_a", "inbound", 0)).toStrictEqual([{ hour: hourOf(NOW_MS), key: "successful", count: 6 }]);
    });

  if (engine.name === "PostgreSQL")
    it("two nodes (two SQL clients) recording at once lose no status and no count", async () => {
      const url = handle!.kind === "postgres" ? handle!.url : "";
      const nodes = [new SQL(url, { max: 4 }), new SQL(url, { max: 4 })];
      try {
        const GROUPS = 40;
        await Promise.all(
          nodes.flatMap((client, n) => {
            const repo = createPgStatusRepo(client);
            return Array.from({ length: GROUPS }, (_, g) =>
              repo.record([status(`st_${n}_${g}_a`), status(`st_${n}_${g}_b`, { createdAtMs: NOW_MS + g })]),
            );
          }),
        );
        const all = await statuses.list("acc_a", "addr_a", [], { limit: 1000 });
        expect(all.items).toHaveLength(2 * GROUPS * 2);
        expect(new Set(all.items.map((s) => s.id)).size).toBe(2 * GROUPS * 2);
        expect(await stats.hourly("acc_a", "inbound", 0)).toStrictEqual([
          { hour: hourOf(NOW_MS), key: "successful", count: 2 * GROUPS * 2 },
        ]);
      } finally {
        await Promise.all(nodes.map((c) => c.close()));
      }
    }, 30_000);
});
