// The rest of the outgoing queue's repository (OutboundRepo beyond its leases, queue.port.ts),
// run on SQLite (createOutboundRepo), PostgreSQL (createPgOutboundRepo) and PostgreSQL whose
// database sorts and folds text by a language (en-US): the lists and searches must hold the
// same messages there too. The same cases: an outcome recorded whoever holds the lease, later
// events and the suppressions they make, the queue depth, the reads the API makes, "retry
// now" and "cancel" from the dashboard, and listMessages' paging and E12 search terms.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { OutboundRepo } from "../../src/outbound/queue/queue.port.ts";
import { POSTGRES_LINGUISTIC, STORE_ENGINES } from "../helpers/engines.ts";
import { parseSearchQuery } from "../../src/lib/search-query.ts";
import { MESSAGE_SEARCH_FIELDS } from "../../src/outbound/queue/queue.repo.ts";
import { SearchTimeoutError } from "../../src/store/sliced-search.ts";
import { delivered, event, ids, LEASE_MS, NOW, type OpenedQueue, openQueue, QUEUE_TABLES, queueIn } from "./queue-engines.ts";

describe.each([...STORE_ENGINES, POSTGRES_LINGUISTIC])("OutboundRepo on $name", (engine) => {
  const it = engine.test;
  let opened: OpenedQueue | undefined;
  const repo = (): OutboundRepo => opened!.repo;
  const queue = (...args: Parameters<typeof queueIn> extends [unknown, ...infer R] ? R : never) => queueIn(opened!.repo, ...args);
  /** The IDs of a list's page for a query (E12 syntax). */
  const search = async (query: string, limit = 50) =>
    (await repo().listMessages("o", parseSearchQuery(query, MESSAGE_SEARCH_FIELDS), { limit })).items.map((m) => m.id);

  beforeAll(async () => {
    if (engine.available()) opened = await openQueue(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(QUEUE_TABLES);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("update records an outcome and its events whoever holds the lease, and ends the lease; a bounce suppresses the address as told", async () => {
    await queue("m1", [
      ["r1", {}],
      ["r2", { email: "Gone@Y.z" }],
      ["r3", { email: "Blocked@Y.z" }],
    ]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    const recorded = await repo().update("r1", delivered(1), [event("m1", "r1", "dispatch"), event("m1", "r1", "delivery")], {
      webhook: false,
    });
    expect(recorded.map((e) => e.kind)).toEqual(["dispatch", "delivery"]);
    expect(await opened!.row("r1")).toEqual({ state: "done", status: "delivery", locked_by: null, attempts: 1 });
    const suppress = { reason: "bounce" as const, expiresAtMs: NOW + 1000 };
    await repo().update("r2", { ...delivered(2), status: "bounce", suppress }, [event("m1", "r2", "bounce")], { webhook: false });
    expect(await opened!.count("suppressions", "email", "gone@y.z")).toBe(1);
    // A bounce without the order (a block, a full mailbox) leaves the address alone.
    await repo().update("r3", { ...delivered(2), status: "bounce", suppress: null }, [event("m1", "r3", "bounce")], { webhook: false });
    expect(await opened!.count("suppressions", "email", "blocked@y.z")).toBe(0);
    expect((await repo().eventsOf(["r1", "r2"])).map((e) => [e.recipientId, e.kind])).toEqual([
      ["r1", "dispatch"],
      ["r1", "delivery"],
      ["r2", "bounce"],
    ]);
  });

  it("addEvents records events and the new status without touching the queue; a later complaint suppresses the address once", async () => {
    await queue("m1", [
      ["r1", { email: "Who@Y.z", state: "done", status: "delivery" }],
      ["r2", {}],
    ]);
    await repo().addEvents("r1", null, [event("m1", "r1", "open")]);
    expect((await repo().getRecipient("m1", "r1"))!.status).toBe("delivery");
    const forGood = { reason: "complaint" as const, expiresAtMs: null };
    await repo().addEvents("r1", "bounce", [event("m1", "r1", "complaint")], forGood);
    await repo().addEvents("r1", null, [event("m1", "r1", "complaint")], forGood);
    expect(await opened!.row("r1")).toEqual({ state: "done", status: "bounce", locked_by: null, attempts: 0 });
    expect(await opened!.count("suppressions", "email", "who@y.z")).toBe(1);
    expect((await repo().eventsOf(["r1"])).map((e) => e.kind)).toEqual(["open", "complaint", "complaint"]);
    expect(await repo().eventsOf([])).toEqual([]);
  });

  it("queueDepth counts the queued recipients due now and those due later, nothing done", async () => {
    expect(await repo().queueDepth(NOW)).toEqual({ due: 0, scheduled: 0, held: 0 });
    await queue("m1", [
      ["a", { nextAttemptAtMs: NOW - 5 }],
      ["b", { nextAttemptAtMs: NOW }],
      ["c", { nextAttemptAtMs: NOW + 1 }],
      ["d", { state: "done" }],
    ]);
    expect(await repo().queueDepth(NOW)).toEqual({ due: 2, scheduled: 1, held: 0 });
  });

  it("reads a message in its account only, a recipient of its message only, and recipients by message then position", async () => {
    await queue(
      "m_a",
      [
        ["r1", {}],
        ["r2", { email: "b@y.z" }],
      ],
      { subject: "Hi", tags: ["x"], sizeBytes: 5_000_000_000 },
    );
    await queue("m_B", [["r3", {}]]);
    const m = await repo().getMessage("a", "m_a");
    expect(m).toMatchObject({ id: "m_a", subject: "Hi", tags: ["x"], sizeBytes: 5_000_000_000, createdAtMs: NOW });
    expect(await repo().getMessageById("m_a")).toEqual(m!);
    expect(await repo().getMessage("other", "m_a")).toBeNull();
    expect(await repo().getMessageById("none")).toBeNull();
    expect((await repo().getRecipient("m_a", "r2"))!.email).toBe("b@y.z");
    expect(await repo().getRecipient("m_B", "r2")).toBeNull();
    // Message IDs in byte order ("B" < "a"), as SQLite compares text.
    expect((await repo().recipientsOf(["m_a", "m_B"])).map((r) => r.id)).toEqual(["r3", "r1", "r2"]);
    expect(await repo().recipientsOf([])).toEqual([]);
  });

  it("dueNow makes a message's queued recipients due at once, held ones included, and counts them", async () => {
    await queue("m1", [
      ["later", { nextAttemptAtMs: NOW + 1000 }],
      ["due", { nextAttemptAtMs: NOW - 1 }],
      ["done", { state: "done", nextAttemptAtMs: NOW + 1000 }],
    ]);
    await queue("m2", [["other", { nextAttemptAtMs: NOW + 1000 }]]);
    expect(await repo().dueNow("m1", NOW)).toBe(1);
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []))).toEqual(["due", "later"]);
    expect(await repo().dueNow("m1", NOW)).toBe(0);
  });

  it("cancelQueued ends the queued recipients no worker holds with an error event; a held one finishes its attempt", async () => {
    await queue("m1", [
      ["held", {}],
      ["free", { nextAttemptAtMs: NOW + 1000 }],
      ["expired", {}],
      ["done", { state: "done", status: "delivery" }],
      // Held by the operator: the account's cancel ends it too.
      ["operatorHeld", { state: "held", nextAttemptAtMs: NOW + 2000 }],
    ]);
    await repo().claimDue("w1", NOW, NOW + 10, 1, []);
    await repo().claimDue("w2", NOW - LEASE_MS, NOW - 1, 1, []);
    expect(await repo().cancelQueued("m1", NOW, { webhook: false })).toEqual({ cancelled: 3, inDelivery: 1 });
    for (const id of ["free", "expired", "operatorHeld"]) {
      expect(await opened!.row(id)).toMatchObject({ state: "done", status: "error" });
      expect((await repo().eventsOf([id])).map((e) => [e.kind, e.details])).toEqual([
        ["error", { message: "cancelled from the dashboard", attempt: 0, retried: false }],
      ]);
    }
    expect(await opened!.row("held")).toMatchObject({ state: "queued", locked_by: "w1" });
    expect((await repo().getRecipient("m1", "done"))!.status).toBe("delivery");
    expect(await repo().finishAttempt("w1", "held", delivered(1), [], NOW + 1, { webhook: false })).toEqual([]);
    expect(await repo().cancelQueued("m1", NOW, { webhook: false })).toEqual({ cancelled: 0, inDelivery: 0 });
  });

  it("lists an outbound account's messages newest first, IDs of one moment in byte order, page by page after a cursor", async () => {
    await queue("m3", [["r3", {}]], { createdAtMs: NOW + 2 });
    for (const id of ["m_b", "m_B", "m_a", "m_A"]) await queue(id, [[`r-${id}`, {}]], { createdAtMs: NOW + 1 });
    await queue("m0", [["r0", {}]], { createdAtMs: NOW });
    await queue("elsewhere", [["rx", {}]], { outboundAccountId: "o2", createdAtMs: NOW + 5 });
    const first = await repo().listMessages("o", [], { limit: 3 });
    expect(first.items.map((m) => m.id)).toEqual(["m3", "m_b", "m_a"]);
    expect(first.hasMore).toBe(true);
    const last = first.items.at(-1)!;
    const second = await repo().listMessages("o", [], { limit: 3, before: { createdAtMs: last.createdAtMs, id: last.id } });
    expect(second.items.map((m) => m.id)).toEqual(["m_B", "m_A", "m0"]);
    expect(second.hasMore).toBe(false);
    expect((await repo().listMessages("o", [], { limit: 2, offset: 4 })).items.map((m) => m.id)).toEqual(["m_A", "m0"]);
  });

  it("search terms: words in subject, sender or any recipient; ASCII letters fold, others match exactly", async () => {
    await queue("m1", [["r1", { email: "Zoe@Example.org" }]], {
      subject: "Invoice April",
      from: "billing@shop.test",
      createdAtMs: NOW + 1,
    });
    await queue("m2", [["r2", {}]], { subject: "Éclair recipe", from: "chef@shop.test", createdAtMs: NOW + 2 });
    await queue("m3", [["r3", {}]], { subject: null, from: "50%_off@deals.test", createdAtMs: NOW + 3 });
    await queue("m4", [["r4", {}]], { subject: "crème brûlée", createdAtMs: NOW + 4 });
    expect(await search("INVOICE")).toEqual(["m1"]);
    expect(await search("zoe@example")).toEqual(["m1"]);
    expect(await search("shop.test")).toEqual(["m2", "m1"]);
    // SQLite's LOWER folds ASCII only: a stored "É" is never found (the query is lowered
    // whole), on every engine alike; a stored "è" is found by "È" or "è".
    expect(await search("éclair")).toEqual([]);
    expect(await search("Éclair")).toEqual([]);
    expect(await search("CRÈME")).toEqual(["m4"]);
    // LIKE's wildcards are taken literally.
    expect(await search("%_off")).toEqual(["m3"]);
    expect(await search("0%")).toEqual(["m3"]);
    expect(await search("subject:april from:billing")).toEqual(["m1"]);
    expect(await search("subject:billing")).toEqual([]);
    expect(await search("to:ZOE")).toEqual(["m1"]);
  });

  it("search terms: status of any recipient, a whole tag, creation time", async () => {
    await queue(
      "m1",
      [
        ["r1", { status: "bounce", state: "done" }],
        ["r2", {}],
      ],
      { tags: ["News", "weekly"], createdAtMs: Date.parse("2026-11-20T10:00:00Z") },
    );
    await queue("m2", [["r3", {}]], { tags: ["newsletter"], createdAtMs: Date.parse("2026-11-22T10:00:00Z") });
    expect(await search("status:BOUNCE")).toEqual(["m1"]);
    expect(await search("status:registration")).toEqual(["m2", "m1"]);
    expect(await search("tag:news")).toEqual(["m1"]);
    expect(await search("tag:newsletter")).toEqual(["m2"]);
    expect(await search("created_at:>2026-11-21")).toEqual(["m2"]);
    expect(await search("created_at:<=2026-11-21")).toEqual(["m1"]);
    expect(await search("created_at:>=2026-11-20T10:00:00Z tag:weekly")).toEqual(["m1"]);
  });

  it("search terms: bounce_class of any bounce or soft_bounce event of the message", async () => {
    await queue("m1", [["r1", {}]]);
    await queue("m2", [["r2", {}]]);
    await queue("m3", [["r3", {}]]);
    const withClass = (m: string, r: string, kind: "bounce" | "soft_bounce" | "delivery", bounceClass: string) => ({
      ...event(m, r, kind),
      details: { smtp_code: 550, bounce_class: bounceClass },
    });
    await repo().addEvents("r1", "bounce", [withClass("m1", "r1", "bounce", "block")]);
    await repo().addEvents("r2", null, [withClass("m2", "r2", "soft_bounce", "throttled")]);
    await repo().addEvents("r3", null, [withClass("m3", "r3", "delivery", "block")]);
    expect(await search("bounce_class:block")).toEqual(["m1"]);
    expect(await search("bounce_class:THROTTLED")).toEqual(["m2"]);
    expect(await search("bounce_class:hard")).toEqual([]);
  });

  it("a search reads a window of messages: fewer matches than a page there end the page at the window's edge", async () => {
    for (let i = 0; i < 6; i++)
      await queue(`m${i}`, [[`r${i}`, {}]], { subject: i === 0 || i === 4 ? "needle" : "hay", createdAtMs: NOW + i });
    const terms = parseSearchQuery("needle", MESSAGE_SEARCH_FIELDS);
    const first = await repo().listMessages("o", terms, { limit: 10 }, 3);
    expect(first.items.map((m) => m.id)).toEqual(["m4"]);
    expect(first).toMatchObject({ hasMore: true, next: { createdAtMs: NOW + 3, id: "m3" } });
    const second = await repo().listMessages("o", terms, { limit: 10, before: first.next }, 3);
    expect(second.items.map((m) => m.id)).toEqual(["m0"]);
    expect(second).toMatchObject({ hasMore: true, next: { createdAtMs: NOW, id: "m0" } });
    expect(await repo().listMessages("o", terms, { limit: 10, before: second.next }, 3)).toEqual({ items: [], hasMore: false });
  });

  it("a search within its time limit answers as usual; past it, SearchTimeoutError", async () => {
    for (let from = 0; from < 3_000; from += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, j) =>
          queue(`m${from + j}`, [[`r${from + j}`, { state: "done", status: "delivery" }]], {
            subject: `report ${from + j}`,
            createdAtMs: NOW + from + j,
          }),
        ),
      );
    }
    // Every term but the last matches each message through its recipient (x@y.z): each is tested on all 3,000.
    const slow = parseSearchQuery([...Array.from({ length: 15 }, () => "y.z"), "nothing"].join(" "), MESSAGE_SEARCH_FIELDS);
    await expect(repo().listMessages("o", slow, { limit: 50 }, 10_000, 1)).rejects.toBeInstanceOf(SearchTimeoutError);
    expect(await repo().listMessages("o", slow, { limit: 50 }, 10_000, 60_000)).toEqual({ items: [], hasMore: false });
    const found = await repo().listMessages(
      "o",
      parseSearchQuery('subject:"report 2999"', MESSAGE_SEARCH_FIELDS),
      { limit: 50, offset: 0 },
      10_000,
      60_000,
    );
    expect(found.items.map((m) => m.id)).toEqual(["m2999"]);
    // A limit past PostgreSQL's 32-bit statement_timeout (http.search_timeout = "30d") is as long as it can be, not an error.
    const month = await repo().listMessages(
      "o",
      parseSearchQuery('subject:"report 2999"', MESSAGE_SEARCH_FIELDS),
      { limit: 50 },
      10_000,
      30 * 86_400_000,
    );
    expect(month.items.map((m) => m.id)).toEqual(["m2999"]);
  });

  it("a search paged by number (offset) reads the first window too, skipping matches inside it, and ends at the window's edge", async () => {
    // Newest first: m9 ... m0; "needle" in m9, m8, m7 and m1; a window of 4 holds m9-m6.
    for (let i = 0; i < 10; i++)
      await queue(`m${i}`, [[`r${i}`, {}]], { subject: [1, 7, 8, 9].includes(i) ? "needle" : "hay", createdAtMs: NOW + i });
    const terms = parseSearchQuery("needle", MESSAGE_SEARCH_FIELDS);
    const second = await repo().listMessages("o", terms, { limit: 2, offset: 2 }, 4);
    expect(second.items.map((m) => m.id)).toEqual(["m7"]);
    expect(second).toMatchObject({ hasMore: true, next: { createdAtMs: NOW + 6, id: "m6" } });
    const first = await repo().listMessages("o", terms, { limit: 2, offset: 0 }, 4);
    expect(first.items.map((m) => m.id)).toEqual(["m9", "m8"]);
    expect(first.hasMore).toBe(true);
    expect(first.next).toBeUndefined();
    // A page past the window's matches is empty, with the edge to search on from.
    expect(await repo().listMessages("o", terms, { limit: 2, offset: 4 }, 4)).toEqual({
      items: [],
      hasMore: true,
      next: { createdAtMs: NOW + 6, id: "m6" },
    });
  });
});
