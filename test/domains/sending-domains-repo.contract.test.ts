// The SendingDomainRepo contract, run on both engines: createSendingDomainRepo on SQLite (a
// store in a temp data dir) and on PostgreSQL (a throwaway server with the postgres
// migration history applied). The same cases, the same expectations: a
// domain reads back field for field with the same JS types (flags booleans, times numbers
// or null, never PostgreSQL's BIGINT strings), its encrypted DKIM keys unchanged and
// decryptable; reads see one account's live domains only; a live domain is taken once per
// account; search and paging order and match as SQLite's LIKE does; a check's outcome and
// its events commit together; the verifier sees what is due in a stable order.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { randomBytes } from "node:crypto";
import { decryptSecret, encryptSecret } from "../../src/domains/keys.ts";
import { SendingDomainTakenError, type CheckOutcome, type SendingDomain } from "../../src/domains/sending-domain.ts";
import type { SendingDomainRepo } from "../../src/domains/sending-domains.port.ts";
import { createSendingDomainRepo } from "../../src/domains/sending-domains.repo.ts";
import { type EngineHandle, POSTGRES_LINGUISTIC, STORE_ENGINES, type StoreEngine } from "../helpers/engines.ts";

interface Opened {
  repo: SendingDomainRepo;
  handle: EngineHandle;
  /** Domain IDs the repository announced as changed, in order. */
  changes: string[];
}

const open = async (engine: StoreEngine): Promise<Opened> => {
  const handle = await engine.open();
  const repo = createSendingDomainRepo(handle.db);
  const changes: string[] = [];
  repo.onChange((id) => changes.push(id));
  return { handle, repo, changes };
};

interface StoredEvent {
  kind: string;
  details: unknown;
  createdAtMs: number;
}

/** The sending_domain_events rows of a domain as stored, read around the repository. */
async function storedEvents(handle: EngineHandle, domainId: string): Promise<StoredEvent[]> {
  type Raw = { kind: string; details_json: string; created_at: unknown };
  const rows: Raw[] =
    handle.kind === "sqlite"
      ? handle.store.db
          .query<Raw, [string]>("SELECT kind, details_json, created_at FROM sending_domain_events WHERE domain_id = ? ORDER BY kind")
          .all(domainId)
      : await handle.sql`SELECT kind, details_json, created_at FROM sending_domain_events WHERE domain_id = ${domainId} ORDER BY kind`;
  return rows.map((r) => ({ kind: r.kind, details: JSON.parse(r.details_json), createdAtMs: Number(r.created_at) }));
}

// Past 2^32 ms (as Date.now() is), so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;
const KEY = randomBytes(32);
const RSA_PEM = "-----BEGIN PRIVATE KEY-----\nrsa key for the contract\n-----END PRIVATE KEY-----\n";
const ED_PEM = "-----BEGIN PRIVATE KEY-----\ned25519 key for the contract\n-----END PRIVATE KEY-----\n";

let serial = 0;
const domain = (name: string, over: Partial<SendingDomain> = {}): SendingDomain => ({
  id: `d${String(++serial).padStart(15, "0")}`,
  accountId: "acc_a",
  domain: name,
  dkimSelector: "sel1abc",
  dkimPublicKey: "MIIBIjANBgkq",
  dkimPrivateKeyEnc: encryptSecret(RSA_PEM, KEY),
  ed25519Selector: "sel2xyz",
  ed25519PublicKey: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
  ed25519PrivateKeyEnc: encryptSecret(ED_PEM, KEY),
  checks: { dkim: false, ed25519: false, return_path: false, spf: false },
  reasons: {},
  health: null,
  verifiedAtMs: null,
  failingSinceMs: null,
  checkedAtMs: null,
  nextCheckAtMs: NOW_MS + 60_000,
  createdAtMs: NOW_MS,
  ...over,
});

const outcome = (over: Partial<CheckOutcome> = {}): CheckOutcome => ({
  checks: { dkim: true, ed25519: false, return_path: true, spf: true },
  reasons: { ed25519: "no TXT record at sel2xyz._domainkey" },
  health: {
    dmarc: "quarantine",
    dmarc_record: "v=DMARC1; p=quarantine",
    dkim_aligned: true,
    return_path_aligned: true,
    fix: { dmarc: null, dkim_aligned: null, return_path_aligned: null },
    unknown: null,
  },
  verifiedAtMs: NOW_MS + 10,
  failingSinceMs: null,
  checkedAtMs: NOW_MS + 10,
  nextCheckAtMs: NOW_MS + 3_600_000,
  ...over,
});

// POSTGRES_LINGUISTIC too: a database that sorts and lowers text by language (en-US) must
// still page, search and order ties as SQLite does.
describe.each([...STORE_ENGINES, POSTGRES_LINGUISTIC])("SendingDomainRepo on $name", (engine) => {
  const it = engine.test;
  let opened: Opened | undefined;
  const repo = (): SendingDomainRepo => opened!.repo;
  const handle = (): EngineHandle => opened!.handle;

  beforeAll(async () => {
    if (engine.available()) opened = await open(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(["sending_domain_events", "sending_domains"]);
    opened?.changes.splice(0);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("an inserted domain reads back field for field: flags booleans, times numbers or null, reasons an object, keys still encrypted", async () => {
    const fresh = domain("fresh.example");
    const checked = domain("checked.example", {
      checks: { dkim: true, ed25519: true, return_path: false, spf: true },
      reasons: { return_path: "bounces.example.com has no CNAME" },
      verifiedAtMs: NOW_MS - 5,
      failingSinceMs: Number.MAX_SAFE_INTEGER,
      checkedAtMs: NOW_MS + 7,
      nextCheckAtMs: 0,
    });
    await repo().insert(fresh);
    await repo().insert(checked);
    const foundFresh = await repo().get("acc_a", fresh.id);
    const foundChecked = await repo().get("acc_a", checked.id);
    // toStrictEqual: "1795000000000" (a string), 1 for true or undefined for null would not pass.
    expect(foundFresh).toStrictEqual(fresh);
    expect(foundChecked).toStrictEqual(checked);
    expect(decryptSecret(foundChecked!.dkimPrivateKeyEnc, KEY)).toBe(RSA_PEM);
    expect(decryptSecret(foundChecked!.ed25519PrivateKeyEnc, KEY)).toBe(ED_PEM);
    expect(foundChecked!.dkimPrivateKeyEnc).not.toContain("PRIVATE KEY");
    expect(opened!.changes).toEqual([fresh.id, checked.id]);
  });

  it("get finds the account's live domain only: another account's, a deleted or an unknown one is null", async () => {
    const a = domain("a.example");
    const b = domain("b.example", { accountId: "acc_b" });
    await repo().insert(a);
    await repo().insert(b);
    expect(await repo().get("acc_b", a.id)).toBeNull();
    expect(await repo().get("acc_a", b.id)).toBeNull();
    expect(await repo().get("acc_a", "0000000000000000")).toBeNull();
    expect(await repo().get("acc_a", "%")).toBeNull();
    expect(await repo().softDelete("acc_a", a.id, NOW_MS)).toBe(true);
    expect(await repo().get("acc_a", a.id)).toBeNull();
    expect(await repo().get("acc_b", b.id)).toStrictEqual(b);
  });

  it("a live domain is taken once per account (SendingDomainTakenError); another account or after deletion may have it; a repeated ID is another error", async () => {
    const first = domain("taken.example");
    await repo().insert(first);
    opened!.changes.splice(0);
    const again = repo().insert(domain("taken.example"));
    await expect(again).rejects.toBeInstanceOf(SendingDomainTakenError);
    await expect(again).rejects.toThrow("taken.example");
    expect(opened!.changes).toEqual([]);
    const sameId = repo().insert(domain("other.example", { id: first.id }));
    await expect(sameId).rejects.toThrow();
    await expect(sameId).rejects.not.toBeInstanceOf(SendingDomainTakenError);
    await repo().insert(domain("taken.example", { accountId: "acc_b" }));
    await repo().softDelete("acc_a", first.id, NOW_MS);
    const second = domain("taken.example");
    await repo().insert(second);
    expect((await repo().findForAccount("acc_a", ["taken.example"])).map((d) => d.id)).toEqual([second.id]);
  });

  it("findLiveByDomains: every account's live domains among the names, oldest first, exact names only, deleted ones left out", async () => {
    const a = domain("held.example", { createdAtMs: NOW_MS - 2 });
    const b = domain("held.example", { accountId: "acc_b", createdAtMs: NOW_MS - 1 });
    const base = domain("shop.example", { accountId: "acc_c" });
    const gone = domain("held.example", { accountId: "acc_d" });
    for (const d of [a, b, base, gone, domain("sub.held.example"), domain("held.example.org", { accountId: "acc_b" })])
      await repo().insert(d);
    await repo().softDelete("acc_d", gone.id, NOW_MS);
    expect(await repo().findLiveByDomains(["held.example"])).toStrictEqual([a, b]);
    expect((await repo().findLiveByDomains(["mta.shop.example", "shop.example"])).map((d) => d.id)).toEqual([base.id]);
    expect(await repo().findLiveByDomains(["HELD.example", "held.%", "nobody.example"])).toEqual([]);
    expect(await repo().findLiveByDomains([])).toEqual([]);
  });

  it("list: the account's live domains newest first (ties by ID, descending), paged by limit, cursor and offset", async () => {
    const ds = [
      domain("one.example", { createdAtMs: NOW_MS + 1 }),
      domain("two.example", { createdAtMs: NOW_MS + 2, id: "tie_B" }),
      domain("three.example", { createdAtMs: NOW_MS + 2, id: "tie_a" }),
      domain("four.example", { createdAtMs: NOW_MS + 3 }),
    ];
    for (const d of ds) await repo().insert(d);
    await repo().insert(domain("theirs.example", { accountId: "acc_b", createdAtMs: NOW_MS + 9 }));
    const gone = domain("gone.example", { createdAtMs: NOW_MS + 9 });
    await repo().insert(gone);
    await repo().softDelete("acc_a", gone.id, NOW_MS);
    const newestFirst = [ds[3]!, ds[2]!, ds[1]!, ds[0]!]; // byte order: "tie_a" after "tie_B" (a language puts it before)
    const all = await repo().list("acc_a", null, { limit: 10 });
    expect(all).toStrictEqual({ items: newestFirst, hasMore: false });
    const first = await repo().list("acc_a", null, { limit: 2 });
    expect(first).toStrictEqual({ items: newestFirst.slice(0, 2), hasMore: true });
    const last = first.items.at(-1)!;
    const next = await repo().list("acc_a", null, { limit: 2, before: { createdAtMs: last.createdAtMs, id: last.id } });
    expect(next).toStrictEqual({ items: newestFirst.slice(2), hasMore: false });
    expect(await repo().list("acc_a", null, { limit: 2, offset: 1 })).toStrictEqual({ items: newestFirst.slice(1, 3), hasMore: true });
    expect(await repo().list("acc_c", null, { limit: 2 })).toStrictEqual({ items: [], hasMore: false });
  });

  it("list's query matches part of the domain as SQLite's LIKE does: ASCII letters without case, % and _ as themselves, other letters exactly", async () => {
    const plain = domain("mail.example.com", { createdAtMs: NOW_MS + 1 });
    const underscore = domain("a_b.example.org", { createdAtMs: NOW_MS + 2 });
    const accent = domain("école.example", { createdAtMs: NOW_MS + 3 });
    const accentUpper = domain("ÉTÉ.example", { createdAtMs: NOW_MS - 1 });
    const upper = domain("SHOUT.Example.NET", { createdAtMs: NOW_MS + 4 });
    for (const d of [plain, underscore, accent, upper, accentUpper]) await repo().insert(d);
    await repo().insert(domain("mail.example.com", { accountId: "acc_b" }));
    const found = async (query: string) => (await repo().list("acc_a", query, { limit: 10 })).items.map((d) => d.domain);
    expect(await found("EXAMPLE.COM")).toEqual(["mail.example.com"]);
    expect(await found("example")).toEqual(["SHOUT.Example.NET", "école.example", "a_b.example.org", "mail.example.com", "ÉTÉ.example"]);
    expect(await found("shout.example.net")).toEqual(["SHOUT.Example.NET"]);
    expect(await found("a_b")).toEqual(["a_b.example.org"]);
    expect(await found("l_e")).toEqual([]);
    expect(await found("%")).toEqual([]);
    expect(await found("\\")).toEqual([]);
    expect(await found("ÉCOLE")).toEqual(["école.example"]);
    // SQLite's LIKE folds ASCII only: "été" does not find "ÉTÉ", "tÉ" does.
    expect(await found("été")).toEqual([]);
    expect(await found("TÉ")).toEqual([]);
    expect(await found("t")).toContain("ÉTÉ.example");
    expect(await found("nothing")).toEqual([]);
    const paged = await repo().list("acc_a", "example", { limit: 1 });
    expect(paged).toStrictEqual({ items: [upper], hasMore: true });
  });

  it("findForAccount: the account's live domains among the names, exactly as written; none for no names", async () => {
    const parent = domain("example.com");
    const child = domain("mail.example.com");
    const deleted = domain("old.example.com");
    for (const d of [parent, child, deleted]) await repo().insert(d);
    await repo().softDelete("acc_a", deleted.id, NOW_MS);
    await repo().insert(domain("example.com", { accountId: "acc_b" }));
    const found = await repo().findForAccount("acc_a", ["a.mail.example.com", "mail.example.com", "example.com", "old.example.com"]);
    expect([...found].sort((x, y) => x.domain.localeCompare(y.domain))).toStrictEqual([parent, child]);
    expect(await repo().findForAccount("acc_a", ["example.com"])).toStrictEqual([parent]);
    expect(await repo().findForAccount("acc_a", ["EXAMPLE.COM", "example.co%", "example.com."])).toStrictEqual([]);
    expect(await repo().findForAccount("acc_a", [])).toStrictEqual([]);
    expect(await repo().findForAccount("acc_c", ["example.com"])).toStrictEqual([]);
  });

  it("softDelete: once, by its account only; it tells the listeners, a refused one does not", async () => {
    const a = domain("delete.example");
    await repo().insert(a);
    opened!.changes.splice(0);
    expect(await repo().softDelete("acc_b", a.id, NOW_MS)).toBe(false);
    expect(await repo().softDelete("acc_a", "0000000000000000", NOW_MS)).toBe(false);
    expect(opened!.changes).toEqual([]);
    expect(await repo().softDelete("acc_a", a.id, NOW_MS)).toBe(true);
    expect(await repo().softDelete("acc_a", a.id, NOW_MS + 1)).toBe(false);
    expect(opened!.changes).toEqual([a.id]);
  });

  it("recordCheck stores the outcome on that domain only and its events at the check's time", async () => {
    const a = domain("check.example");
    const b = domain("untouched.example");
    await repo().insert(a);
    await repo().insert(b);
    opened!.changes.splice(0);
    const o = outcome();
    await repo().recordCheck(a.id, o, [
      { kind: "verified", details: { checks: ["dkim", "spf"] } },
      { kind: "failing", details: { reason: 'ünïcode, "quotes" and a\nnewline' } },
    ]);
    expect(await repo().get("acc_a", a.id)).toStrictEqual({ ...a, ...o });
    expect(await repo().get("acc_a", b.id)).toStrictEqual(b);
    expect(await storedEvents(handle(), a.id)).toStrictEqual([
      { kind: "failing", details: { reason: 'ünïcode, "quotes" and a\nnewline' }, createdAtMs: o.checkedAtMs },
      { kind: "verified", details: { checks: ["dkim", "spf"] }, createdAtMs: o.checkedAtMs },
    ]);
    expect(await storedEvents(handle(), b.id)).toEqual([]);
    expect(opened!.changes).toEqual([a.id]);

    const failing = outcome({
      checks: { dkim: false, ed25519: false, return_path: false, spf: false },
      reasons: {},
      verifiedAtMs: null,
      failingSinceMs: NOW_MS + 20,
      checkedAtMs: NOW_MS + 20,
    });
    await repo().recordCheck(a.id, failing, []);
    expect(await repo().get("acc_a", a.id)).toStrictEqual({ ...a, ...failing });
    expect(await storedEvents(handle(), a.id)).toHaveLength(2);
  });

  it("recordCheck is one commit: when an event cannot be stored, the outcome is not either", async () => {
    const a = domain("atomic.example");
    await repo().insert(a);
    opened!.changes.splice(0);
    // A bigint cannot be written as JSON: the second event fails after the update ran.
    const events = [
      { kind: "verified", details: {} },
      { kind: "failing", details: { n: 1n } },
    ];
    await expect(repo().recordCheck(a.id, outcome(), events)).rejects.toThrow();
    expect(await repo().get("acc_a", a.id)).toStrictEqual(a);
    expect(await storedEvents(handle(), a.id)).toEqual([]);
    expect(opened!.changes).toEqual([]);
  });

  it("due: live domains of every account whose check is due, the longest due first, ties by ID, at most limit", async () => {
    const late = domain("late.example", { nextCheckAtMs: NOW_MS - 100, accountId: "acc_b" });
    // IDs in byte order, as SQLite compares them (a language would put "due_a" before "due_B").
    const ties = ["due_A", "due_B", "due_C", "due_a", "due_b"].map((id) =>
      domain(`${id.toLowerCase()}${id}.example`, { id, nextCheckAtMs: NOW_MS - 50 }),
    );
    const atNow = domain("now.example", { nextCheckAtMs: NOW_MS });
    const later = domain("later.example", { nextCheckAtMs: NOW_MS + 1 });
    const deleted = domain("deleted.example", { nextCheckAtMs: NOW_MS - 1000 });
    // Inserted out of order (the ties by descending ID), so an order by insertion would show.
    for (const d of [...ties].reverse()) await repo().insert(d);
    for (const d of [later, atNow, deleted, late]) await repo().insert(d);
    await repo().softDelete("acc_a", deleted.id, NOW_MS);
    expect(await repo().due(NOW_MS, 10)).toStrictEqual([late, ...ties, atNow]);
    expect(await repo().due(NOW_MS, 3)).toStrictEqual([late, ...ties.slice(0, 2)]);
    expect(await repo().due(NOW_MS - 101, 10)).toStrictEqual([]);
  });
});
