// The AddressRepo contract, run on both engines: createAddressRepo on SQLite (a store in a
// temp data dir) and on PostgreSQL (a throwaway server with the postgres migrations
// applied). The same cases, the same expectations: an address reads back field
// for field with the same JS types (numbers, booleans, nulls, the attachment store's JSON)
// and its secrets stored encrypted; reads are scoped by account and skip deleted rows
// (findLive excepted: any account); the list pages newest first with ties broken by ID in
// byte order, and its search folds ASCII letters only and takes % _ \ literally; a soft
// delete takes the address's custom domains with it; findLive's cache forgets a change at
// once. A repository that diverges from the other fails here.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { ROUTING_CACHE_MAX_AGE_MS } from "../../../src/inbound/addresses/addresses.port.ts";
import type { PageRequest } from "../../../src/store/paging.ts";
import { POSTGRES_LINGUISTIC, STORE_ENGINES } from "../../helpers/engines.ts";
import { address, customDomain, INBOUND_TABLES, NOW_MS, openInboundRepos, type InboundRepos } from "../inbound-repos.ts";

describe.each([...STORE_ENGINES, POSTGRES_LINGUISTIC])("AddressRepo on $name", (engine) => {
  const it = engine.test;
  let opened: InboundRepos | undefined;
  const repos = (): InboundRepos => opened!;
  const ids = async (accountId: string, query: string | null, page: Partial<PageRequest> = {}) =>
    (await repos().addresses.list(accountId, query, { limit: 50, ...page })).items.map((a) => a.id);

  beforeAll(async () => {
    if (engine.available()) opened = await openInboundRepos(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(INBOUND_TABLES);
    if (opened) opened.clock.nowMs = NOW_MS;
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("an inserted address reads back field for field, secrets decrypted, numbers as numbers and store_messages as a boolean", async () => {
    const full = address("addr_full", {
      target: { url: "https://bob@example.com/in?x=1", password: "pässword" },
      targetFormat: "multipart",
      nickname: "Support ✉",
      attachments: { store: "s3", bucket: "b", region: "eu-west-1", access_key_id: "AKIA", secret_access_key: "s3-secret" },
      signingSecret: "whsec_c2lnbmluZw==",
      storeMessages: true,
      onTargetFailure: "queue",
      spamThreshold: 5.5,
      createdAtMs: NOW_MS - 5,
      updatedAtMs: Number.MAX_SAFE_INTEGER,
    });
    const bare = address("addr_bare");
    await repos().addresses.insert(full);
    await repos().addresses.insert(bare);
    // toStrictEqual: "1795000000000" (a string) or 1 (a number for storeMessages) would not pass.
    expect(await repos().addresses.get("acc_a", "addr_full")).toStrictEqual(full);
    expect(await repos().addresses.get("acc_a", "addr_bare")).toStrictEqual(bare);
    expect(await repos().addresses.findLive("addr_full")).toStrictEqual(full);
    // The secrets are not kept in the clear.
    const row = (await repos().stored("addresses", "addr_full"))!;
    for (const secret of ["pässword", "s3-secret", "whsec_c2lnbmluZw=="]) expect(JSON.stringify(row)).not.toContain(secret);
    expect(row.target).toBe("https://bob@example.com/in?x=1");
    expect(JSON.parse(row.attachments_json as string)).toMatchObject({ store: "s3", bucket: "b" });
  });

  it("a second address with the same ID is refused, and the first is kept", async () => {
    const first = address("addr_dup");
    await repos().addresses.insert(first);
    await expect(repos().addresses.insert(address("addr_dup", { accountId: "acc_b" }))).rejects.toThrow();
    expect(await repos().addresses.get("acc_a", "addr_dup")).toStrictEqual(first);
    expect(await repos().addresses.get("acc_b", "addr_dup")).toBeNull();
  });

  it("get finds the account's own live address only; findLive finds it on any account", async () => {
    await repos().addresses.insert(address("addr_a"));
    await repos().addresses.insert(address("addr_b", { accountId: "acc_b" }));
    expect((await repos().addresses.get("acc_a", "addr_a"))?.id).toBe("addr_a");
    expect(await repos().addresses.get("acc_b", "addr_a")).toBeNull();
    expect(await repos().addresses.get("acc_a", "addr_b")).toBeNull();
    for (const wrong of ["ADDR_A", "addr_", "addr_%", "%", ""]) {
      expect(await repos().addresses.get("acc_a", wrong)).toBeNull();
      expect(await repos().addresses.findLive(wrong)).toBeNull();
    }
    expect((await repos().addresses.findLive("addr_b"))?.accountId).toBe("acc_b");
    await repos().addresses.softDelete("acc_a", "addr_a", NOW_MS);
    expect(await repos().addresses.get("acc_a", "addr_a")).toBeNull();
    expect(await repos().addresses.findLive("addr_a")).toBeNull();
  });

  it("update changes the editable fields and updated_at of the account's address only", async () => {
    const before = address("addr_up", { nickname: "old", attachments: { store: "local" } });
    await repos().addresses.insert(before);
    const changed = address("addr_up", {
      target: { url: "https://new@example.net/x", password: "new-pass" },
      targetFormat: "raw",
      nickname: null,
      attachments: { store: "s3", bucket: "b2", region: "r", access_key_id: "k", secret_access_key: "new-s3" },
      signingSecret: "whsec_bmV3",
      storeMessages: true,
      onTargetFailure: "queue",
      spamThreshold: -2.25,
      createdAtMs: NOW_MS - 999, // not an editable field
      updatedAtMs: NOW_MS + 1,
    });
    await repos().addresses.update({ ...changed, accountId: "acc_b" }); // another account's: nothing happens
    expect(await repos().addresses.get("acc_a", "addr_up")).toStrictEqual(before);
    await repos().addresses.update(changed);
    expect(await repos().addresses.get("acc_a", "addr_up")).toStrictEqual({ ...changed, createdAtMs: NOW_MS });
    expect(JSON.stringify(await repos().stored("addresses", "addr_up"))).not.toContain("new-s3");
  });

  it("softDelete marks the account's address and its live custom domains deleted, once", async () => {
    await repos().addresses.insert(address("addr_del"));
    await repos().addresses.insert(address("addr_keep"));
    await repos().customDomains.insert(customDomain("cd_1", "one.example", { addressId: "addr_del" }));
    await repos().customDomains.insert(customDomain("cd_2", "two.example", { addressId: "addr_keep" }));
    expect(await repos().addresses.softDelete("acc_b", "addr_del", NOW_MS + 1)).toBe(false);
    expect((await repos().customDomains.findLiveByDomain("one.example"))?.id).toBe("cd_1");
    expect(await repos().addresses.softDelete("acc_a", "addr_del", NOW_MS + 1)).toBe(true);
    expect(await repos().addresses.softDelete("acc_a", "addr_del", NOW_MS + 2)).toBe(false);
    expect(await repos().addresses.softDelete("acc_a", "addr_none", NOW_MS + 2)).toBe(false);
    expect(await repos().customDomains.findLiveByDomain("one.example")).toBeNull();
    expect((await repos().customDomains.findLiveByDomain("two.example"))?.id).toBe("cd_2");
    expect((await repos().stored("addresses", "addr_del"))?.deleted_at).toEqual(expect.anything());
    expect(Number((await repos().stored("custom_domains", "cd_1"))?.deleted_at)).toBe(NOW_MS + 1);
    expect((await repos().addresses.get("acc_a", "addr_keep"))?.id).toBe("addr_keep");
  });

  it("list pages newest first, ties on created_at broken by ID in byte order, scoped to the account's live addresses", async () => {
    // Byte order: "addr_B" (0x42) < "addr_Z" < "addr_a" (0x61) < "addr_b"; a language's collation would put B after a.
    for (const [id, at] of [
      ["addr_a", NOW_MS],
      ["addr_B", NOW_MS],
      ["addr_b", NOW_MS],
      ["addr_Z", NOW_MS],
      ["addr_old", NOW_MS - 1],
      ["addr_new", NOW_MS + 1],
    ] as const) {
      await repos().addresses.insert(address(id, { createdAtMs: at }));
    }
    await repos().addresses.insert(address("addr_other", { accountId: "acc_b" }));
    await repos().addresses.insert(address("addr_gone", { createdAtMs: NOW_MS + 2 }));
    await repos().addresses.softDelete("acc_a", "addr_gone", NOW_MS);
    const all = ["addr_new", "addr_b", "addr_a", "addr_Z", "addr_B", "addr_old"];
    expect(await ids("acc_a", null)).toEqual(all);
    expect(await ids("acc_b", null)).toEqual(["addr_other"]);
    expect(await ids("acc_none", null)).toEqual([]);

    const first = await repos().addresses.list("acc_a", null, { limit: 2 });
    expect(first.items.map((a) => a.id)).toEqual(["addr_new", "addr_b"]);
    expect(first.hasMore).toBe(true);
    const last = first.items.at(-1)!;
    // The cursor is strict: the next page starts after addr_b, among records of the same time.
    expect(await ids("acc_a", null, { limit: 2, before: { createdAtMs: last.createdAtMs, id: last.id } })).toEqual(["addr_a", "addr_Z"]);
    expect(await ids("acc_a", null, { limit: 50, before: { createdAtMs: NOW_MS, id: "addr_B" } })).toEqual(["addr_old"]);
    expect(await ids("acc_a", null, { limit: 50, before: { createdAtMs: NOW_MS - 1, id: "addr_old" } })).toEqual([]);
    const exact = await repos().addresses.list("acc_a", null, { limit: 6 });
    expect(exact.items).toHaveLength(6);
    expect(exact.hasMore).toBe(false);
    expect(await ids("acc_a", null, { limit: 2, offset: 3 })).toEqual(["addr_Z", "addr_B"]);
    expect(await ids("acc_a", null, { limit: 2, offset: 6 })).toEqual([]);
  });

  it("list searches ID, nickname and target for a part, ASCII letters without case, % _ and \\ as themselves", async () => {
    await repos().addresses.insert(address("addr_1", { nickname: "Sales Team", target: { url: "https://a.example/x", password: null } }));
    await repos().addresses.insert(
      address("addr_2", { nickname: "100% done", target: { url: "https://b.example/x", password: "HOOK-secret" } }),
    );
    await repos().addresses.insert(address("addr_3", { nickname: null, target: { url: "https://c.example/under_score", password: null } }));
    await repos().addresses.insert(
      address("addr_4", { nickname: "back\\slash", target: { url: "https://d.example/Path", password: null } }),
    );
    await repos().addresses.insert(address("addr_5", { nickname: "élodie", target: { url: "https://e.example/x", password: null } }));
    await repos().addresses.insert(address("addr_6", { nickname: "Élise", target: { url: "https://f.example/x", password: null } }));
    await repos().addresses.insert(address("addr_7", { accountId: "acc_b", nickname: "Sales Team" }));
    expect(await ids("acc_a", "sales")).toEqual(["addr_1"]);
    expect(await ids("acc_a", "SALES tEAM")).toEqual(["addr_1"]);
    expect(await ids("acc_a", "B.EXAMPLE")).toEqual(["addr_2"]);
    expect(await ids("acc_a", "path")).toEqual(["addr_4"]);
    expect(await ids("acc_a", "ADDR_3")).toEqual(["addr_3"]);
    expect(await ids("acc_a", "%")).toEqual(["addr_2"]);
    expect(await ids("acc_a", "r_s")).toEqual(["addr_3"]); // "under_score", not "addr_..." with _ as any character
    expect(await ids("acc_a", "k\\s")).toEqual(["addr_4"]);
    expect(await ids("acc_a", "\\")).toEqual(["addr_4"]);
    expect(await ids("acc_a", "secret")).toEqual([]); // the password is not searched
    expect(await ids("acc_a", "ÉLODIE")).toEqual(["addr_5"]); // the query is lowered as a whole
    // The stored text folds ASCII letters only (SQLite's LOWER and LIKE), on both engines.
    expect(await ids("acc_a", "élise")).toEqual([]);
    expect(await ids("acc_a", "lise")).toEqual(["addr_6"]);
    expect(await ids("acc_a", "nothing")).toEqual([]);
    expect(await ids("acc_b", "sales")).toEqual(["addr_7"]);
    // Search and paging together.
    const page = await repos().addresses.list("acc_a", "example", { limit: 4 });
    expect(page.items.map((a) => a.id)).toEqual(["addr_6", "addr_5", "addr_4", "addr_3"]);
    expect(page.hasMore).toBe(true);
  });

  it("findLive serves a change made through the repository at once, one made elsewhere after the cache's age limit", async () => {
    await repos().addresses.insert(address("addr_live", { nickname: "one" }));
    expect((await repos().addresses.findLive("addr_live"))?.nickname).toBe("one");
    await repos().addresses.update(address("addr_live", { nickname: "two" }));
    expect((await repos().addresses.findLive("addr_live"))?.nickname).toBe("two");
    // A change behind the repository's back (by hand, or another node): the cached copy until it is too old.
    await repos().handle.clear(["addresses"]);
    expect((await repos().addresses.findLive("addr_live"))?.nickname).toBe("two");
    repos().clock.nowMs = NOW_MS + ROUTING_CACHE_MAX_AGE_MS;
    expect(await repos().addresses.findLive("addr_live")).toBeNull();
    await repos().addresses.insert(address("addr_live", { nickname: "three" }));
    expect((await repos().addresses.findLive("addr_live"))?.nickname).toBe("three");
    await repos().addresses.softDelete("acc_a", "addr_live", NOW_MS);
    expect(await repos().addresses.findLive("addr_live")).toBeNull();
  });
});
