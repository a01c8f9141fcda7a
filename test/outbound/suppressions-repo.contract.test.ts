// The SuppressionRepo contract, run on both engines: createSuppressionRepo on SQLite (a
// store in a temp data dir) and on PostgreSQL (a throwaway server with the postgres
// migration history applied). The same cases, the same expectations: an entry
// reads back field for field with the same JS types (created_at a number, never
// PostgreSQL's BIGINT string), the address lowercased; adding an address twice returns
// the first entry; lookups are exact and scoped to the outbound account; the list is
// scoped to the account, filtered, searched and paged as SQLite's statements do.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { Suppression } from "../../src/outbound/suppressions/suppression.ts";
import type { SuppressionRepo } from "../../src/outbound/suppressions/suppressions.port.ts";
import { createSuppressionRepo } from "../../src/outbound/suppressions/suppressions.repo.ts";
import { type EngineHandle, POSTGRES_LINGUISTIC, STORE_ENGINES, type StoreEngine } from "../helpers/engines.ts";

interface Opened {
  repo: SuppressionRepo;
  handle: EngineHandle;
}

const open = async (engine: StoreEngine): Promise<Opened> => {
  const handle = await engine.open();
  return { handle, repo: createSuppressionRepo(handle.db) };
};

// Past 2^32 ms (as Date.now() is), so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;

let serial = 0;
const entry = (email: string, over: Partial<Suppression> = {}): Suppression => ({
  id: `s${String(++serial).padStart(15, "0")}`,
  accountId: "acc_a",
  outboundAccountId: "out_a1",
  email,
  reason: "bounce",
  details: {},
  createdAtMs: NOW_MS,
  expiresAtMs: null,
  ...over,
});

// POSTGRES_LINGUISTIC too: a database that sorts text by language (en-US) must still page
// and order ties as SQLite does.
describe.each([...STORE_ENGINES, POSTGRES_LINGUISTIC])("SuppressionRepo on $name", (engine) => {
  const it = engine.test;
  let opened: Opened | undefined;
  const repo = (): SuppressionRepo => opened!.repo;

  beforeAll(async () => {
    if (engine.available()) opened = await open(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(["suppressions"]);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("add stores the address lowercased and returns the entry as get reads it back, created_at a number and details an object", async () => {
    const s = entry("Bob.Smith@Example.COM", {
      reason: "complaint",
      details: { feedback_type: "abuse", nested: { n: 3, list: ["a", null] }, text: 'ünï "q"\n' },
      createdAtMs: Number.MAX_SAFE_INTEGER,
    });
    const added = await repo().add(s);
    // toStrictEqual: "1795000000000" (a string) would not pass.
    expect(added).toStrictEqual({ ...s, email: "bob.smith@example.com" });
    expect(await repo().get("acc_a", s.id)).toStrictEqual(added);
    expect(typeof added.createdAtMs).toBe("number");
  });

  it("adding a suppressed address again (in other case, with another ID and reason) returns the first entry; a repeated ID of another address is an error", async () => {
    const first = await repo().add(entry("carol@example.com", { reason: "bounce", details: { dsn: "5.1.1" } }));
    const again = await repo().add(entry("CAROL@example.com", { reason: "manual", createdAtMs: NOW_MS + 5 }));
    expect(again).toStrictEqual(first);
    // The same address for another outbound account is an entry of its own.
    const other = await repo().add(entry("carol@example.com", { outboundAccountId: "out_a2" }));
    expect(other.id).not.toBe(first.id);
    expect((await repo().list("acc_a", null, null, { limit: 10 })).items).toHaveLength(2);
    await expect(repo().add(entry("dave@example.com", { id: first.id }))).rejects.toThrow();
    expect(await repo().suppressedAmong("out_a1", ["dave@example.com"], NOW_MS)).toEqual(new Set());
  });

  it("suppressedAmong: the outbound account's suppressed addresses among those asked, compared lowercased and exactly", async () => {
    await repo().add(entry("a@example.com"));
    await repo().add(entry("b@example.com"));
    await repo().add(entry("c@example.com", { outboundAccountId: "out_b1", accountId: "acc_b" }));
    const found = await repo().suppressedAmong(
      "out_a1",
      ["A@Example.com", "c@example.com", "x@example.com", "b@example.com", "%@example.com", "_@example.com"],
      NOW_MS,
    );
    expect(found).toStrictEqual(new Set(["a@example.com", "b@example.com"]));
    expect(await repo().suppressedAmong("out_b1", ["a@example.com", "c@example.com"], NOW_MS)).toStrictEqual(new Set(["c@example.com"]));
    expect(await repo().suppressedAmong("out_a1", [], NOW_MS)).toStrictEqual(new Set());
    expect(await repo().suppressedAmong("out_zz", ["a@example.com"], NOW_MS)).toStrictEqual(new Set());
  });

  // Checks made together are read together (one SELECT for all): each still gets only its
  // account's pairs among its own addresses, in force at its own time.
  it("suppressedAmong checks made at once each get their own answer", async () => {
    const until = NOW_MS + 1000;
    await repo().add(entry("a@example.com"));
    await repo().add(entry("shared@example.com"));
    await repo().add(entry("shared@example.com", { outboundAccountId: "out_b1", accountId: "acc_b" }));
    await repo().add(entry("soon@example.com", { expiresAtMs: until }));
    const asked = ["a@example.com", "Shared@example.com", "soon@example.com", "x@example.com"];
    const answers = await Promise.all([
      repo().suppressedAmong("out_a1", asked, NOW_MS),
      repo().suppressedAmong("out_b1", asked, NOW_MS),
      repo().suppressedAmong("out_a1", asked, until),
      repo().suppressedAmong("out_a1", ["x@example.com"], NOW_MS),
      repo().suppressedAmong("out_b1", ["A@example.com"], NOW_MS),
    ]);
    expect(answers).toStrictEqual([
      new Set(["a@example.com", "shared@example.com", "soon@example.com"]),
      new Set(["shared@example.com"]),
      new Set(["a@example.com", "shared@example.com"]),
      new Set(),
      new Set(),
    ]);
  });

  it("get finds the account's entry only: another account's or an unknown ID is null", async () => {
    const mine = await repo().add(entry("mine@example.com"));
    const theirs = await repo().add(entry("theirs@example.com", { accountId: "acc_b", outboundAccountId: "out_b1" }));
    expect(await repo().get("acc_b", mine.id)).toBeNull();
    expect(await repo().get("acc_a", theirs.id)).toBeNull();
    expect(await repo().get("acc_a", "0000000000000000")).toBeNull();
    expect(await repo().get("acc_a", "%")).toBeNull();
    expect(await repo().get("acc_b", theirs.id)).toStrictEqual(theirs);
  });

  it("remove deletes the account's entry once; another account's is left, and the address may be sent to again", async () => {
    const mine = await repo().add(entry("gone@example.com"));
    const theirs = await repo().add(entry("kept@example.com", { accountId: "acc_b", outboundAccountId: "out_b1" }));
    expect(await repo().remove("acc_b", mine.id)).toBe(false);
    expect(await repo().remove("acc_a", theirs.id)).toBe(false);
    expect(await repo().remove("acc_a", mine.id)).toBe(true);
    expect(await repo().remove("acc_a", mine.id)).toBe(false);
    expect(await repo().get("acc_a", mine.id)).toBeNull();
    expect(await repo().suppressedAmong("out_a1", ["gone@example.com"], NOW_MS)).toStrictEqual(new Set());
    expect(await repo().get("acc_b", theirs.id)).toStrictEqual(theirs);
  });

  it("list: the account's entries newest first (ties by ID, descending), by outbound account, paged by limit, cursor and offset", async () => {
    const e1 = await repo().add(entry("one@example.com", { createdAtMs: NOW_MS + 1 }));
    const e2 = await repo().add(entry("two@example.com", { createdAtMs: NOW_MS + 2, outboundAccountId: "out_a2", id: "tie_B" }));
    const e3 = await repo().add(entry("three@example.com", { createdAtMs: NOW_MS + 2, id: "tie_a" }));
    const e4 = await repo().add(entry("four@example.com", { createdAtMs: NOW_MS + 3 }));
    await repo().add(entry("theirs@example.com", { accountId: "acc_b", outboundAccountId: "out_b1", createdAtMs: NOW_MS + 9 }));
    const newestFirst = [e4, e3, e2, e1]; // byte order: "tie_a" after "tie_B" (a language puts it before)
    expect(await repo().list("acc_a", null, null, { limit: 10 })).toStrictEqual({ items: newestFirst, hasMore: false });
    expect(await repo().list("acc_a", "out_a1", null, { limit: 10 })).toStrictEqual({ items: [e4, e3, e1], hasMore: false });
    expect(await repo().list("acc_a", "out_b1", null, { limit: 10 })).toStrictEqual({ items: [], hasMore: false });
    const first = await repo().list("acc_a", null, null, { limit: 2 });
    expect(first).toStrictEqual({ items: newestFirst.slice(0, 2), hasMore: true });
    const last = first.items.at(-1)!;
    expect(await repo().list("acc_a", null, null, { limit: 2, before: { createdAtMs: last.createdAtMs, id: last.id } })).toStrictEqual({
      items: newestFirst.slice(2),
      hasMore: false,
    });
    expect(await repo().list("acc_a", null, null, { limit: 2, offset: 1 })).toStrictEqual({
      items: newestFirst.slice(1, 3),
      hasMore: true,
    });
    expect(await repo().list("acc_c", null, null, { limit: 2 })).toStrictEqual({ items: [], hasMore: false });
  });

  it("list's query matches part of the address as SQLite's LIKE does: ASCII letters without case, % and _ as themselves, other letters exactly", async () => {
    const plain = await repo().add(entry("mail@example.com", { createdAtMs: NOW_MS + 1 }));
    const underscore = await repo().add(entry("a_b@example.org", { createdAtMs: NOW_MS + 2, outboundAccountId: "out_a2" }));
    const accent = await repo().add(entry("ÉLODIE@example.net", { createdAtMs: NOW_MS + 3 }));
    await repo().add(entry("mail@example.com", { accountId: "acc_b", outboundAccountId: "out_b1" }));
    const found = async (query: string, outbound: string | null = null) =>
      (await repo().list("acc_a", outbound, query, { limit: 10 })).items.map((s) => s.email);
    expect(accent.email).toBe("élodie@example.net");
    expect(await found("EXAMPLE.COM")).toEqual([plain.email]);
    expect(await found("example")).toEqual([accent.email, underscore.email, plain.email]);
    expect(await found("example", "out_a2")).toEqual([underscore.email]);
    expect(await found("a_b")).toEqual([underscore.email]);
    expect(await found("l_e")).toEqual([]);
    expect(await found("%")).toEqual([]);
    expect(await found("\\")).toEqual([]);
    expect(await found("ÉLODIE")).toEqual([accent.email]);
    expect(await found("nobody")).toEqual([]);
    expect(await repo().list("acc_a", null, "example", { limit: 1 })).toStrictEqual({ items: [accent], hasMore: true });
  });
  it("an entry with expires_at stops applying then; a later hard bounce or a complaint takes its place; purgeExpired deletes it", async () => {
    const until = NOW_MS + 1000;
    const first = await repo().add(entry("exp@example.com", { expiresAtMs: until }));
    expect(first.expiresAtMs).toBe(until);
    expect(await repo().suppressedAmong("out_a1", ["exp@example.com"], until - 1)).toStrictEqual(new Set(["exp@example.com"]));
    expect(await repo().suppressedAmong("out_a1", ["exp@example.com"], until)).toStrictEqual(new Set());
    // Still in force: a second bounce changes nothing; a complaint makes it permanent.
    expect(await repo().add(entry("exp@example.com", { expiresAtMs: until + 5000 }))).toStrictEqual(first);
    const complaint = await repo().add(entry("exp@example.com", { reason: "complaint", createdAtMs: NOW_MS + 1, expiresAtMs: null }));
    expect(complaint).toMatchObject({ id: first.id, reason: "complaint", expiresAtMs: null });
    // Expired: a new hard bounce starts a new period.
    await repo().add(entry("old@example.com", { expiresAtMs: until }));
    const renewed = await repo().add(entry("old@example.com", { createdAtMs: until + 10, expiresAtMs: until + 9000 }));
    expect(renewed).toMatchObject({ createdAtMs: until + 10, expiresAtMs: until + 9000 });
    await repo().add(entry("gone@example.com", { expiresAtMs: until }));
    expect(await repo().purgeExpired(until + 20, 100)).toBe(1);
    expect((await repo().list("acc_a", null, null, { limit: 10 })).items.map((s) => s.email).sort()).toEqual([
      "exp@example.com",
      "old@example.com",
    ]);
  });
});
