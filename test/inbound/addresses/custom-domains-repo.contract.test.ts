// The CustomDomainRepo contract, run on both engines: createCustomDomainRepo on SQLite (a
// store in a temp data dir) and on PostgreSQL (a throwaway server with the postgres
// migrations applied). The same cases, the same expectations: a domain
// reads back field for field with the same JS types and its target password stored
// encrypted; a second live claim of a domain is DomainTakenError on both (a taken ID or an
// unknown address is another error); reads are scoped by account and address and skip
// deleted rows; the list pages newest first with ties broken by ID in byte order, and its
// search folds ASCII letters only and takes % _ \ literally. A repository that diverges
// from the other fails here.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { DomainTakenError } from "../../../src/inbound/addresses/custom-domain.ts";
import type { PageRequest } from "../../../src/store/paging.ts";
import { POSTGRES_LINGUISTIC, STORE_ENGINES } from "../../helpers/engines.ts";
import { address, customDomain, INBOUND_TABLES, NOW_MS, openInboundRepos, type InboundRepos } from "../inbound-repos.ts";

describe.each([...STORE_ENGINES, POSTGRES_LINGUISTIC])("CustomDomainRepo on $name", (engine) => {
  const it = engine.test;
  let opened: InboundRepos | undefined;
  const repo = () => opened!.customDomains;
  const ids = async (query: string | null, page: Partial<PageRequest> = {}, accountId = "acc_a", addressId = "addr_a") =>
    (await repo().list(accountId, addressId, query, { limit: 50, ...page })).items.map((d) => d.id);

  beforeAll(async () => {
    if (engine.available()) opened = await openInboundRepos(engine);
  }, 60_000);
  beforeEach(async () => {
    if (!opened) return;
    await opened.handle.clear(INBOUND_TABLES);
    await opened.addresses.insert(address("addr_a"));
    await opened.addresses.insert(address("addr_a2"));
    await opened.addresses.insert(address("addr_b", { accountId: "acc_b" }));
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("an inserted domain reads back field for field, its target password decrypted, numbers as numbers and mx_verified as a boolean", async () => {
    const full = customDomain("cd_full", "mail.example.com", {
      authRegex: "(alice|bob)@mail\\.example\\.com",
      domainTarget: { url: "https://hook@example.net/in", password: "dömain-secret" },
      mxVerified: true,
      mxCheckedAtMs: Number.MAX_SAFE_INTEGER,
      createdAtMs: NOW_MS - 3,
    });
    const noPassword = customDomain("cd_nopass", "b.example", { domainTarget: { url: "https://example.net/b", password: null } });
    const bare = customDomain("cd_bare", "a.example");
    for (const d of [full, noPassword, bare]) await repo().insert(d);
    // toStrictEqual: "1795000000000" (a string) or 1 (a number for mxVerified) would not pass.
    expect(await repo().get("acc_a", "addr_a", "cd_full")).toStrictEqual(full);
    expect(await repo().get("acc_a", "addr_a", "cd_nopass")).toStrictEqual(noPassword);
    expect(await repo().get("acc_a", "addr_a", "cd_bare")).toStrictEqual(bare);
    expect(await repo().findLiveByDomain("mail.example.com")).toStrictEqual(full);
    const row = (await opened!.stored("custom_domains", "cd_full"))!;
    expect(JSON.stringify(row)).not.toContain("dömain-secret");
    expect(row.domain_target).toBe("https://hook@example.net/in");
  });

  it("a second live claim of a domain is DomainTakenError, from any account; once deleted, it can be claimed again", async () => {
    const first = customDomain("cd_1", "taken.example");
    await repo().insert(first);
    for (const again of [
      customDomain("cd_2", "taken.example"),
      customDomain("cd_3", "taken.example", { accountId: "acc_b", addressId: "addr_b" }),
    ]) {
      const err = await repo()
        .insert(again)
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(DomainTakenError);
      expect((err as Error).message).toBe("taken.example");
    }
    expect(await repo().findLiveByDomain("taken.example")).toStrictEqual(first);
    expect(await repo().get("acc_a", "addr_a", "cd_2")).toBeNull();
    expect(await repo().softDelete("acc_a", "addr_a", "cd_1", NOW_MS)).toBe(true);
    const second = customDomain("cd_4", "taken.example", { accountId: "acc_b", addressId: "addr_b" });
    await repo().insert(second);
    expect(await repo().findLiveByDomain("taken.example")).toStrictEqual(second);
  });

  it("a taken ID or an unknown address is refused with another error than DomainTakenError", async () => {
    await repo().insert(customDomain("cd_1", "one.example"));
    for (const wrong of [customDomain("cd_1", "other.example"), customDomain("cd_9", "nine.example", { addressId: "addr_none" })]) {
      const err = await repo()
        .insert(wrong)
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(DomainTakenError);
    }
    expect(await repo().findLiveByDomain("other.example")).toBeNull();
    expect(await repo().findLiveByDomain("nine.example")).toBeNull();
  });

  it("get finds the domain under its own account and address only; findLiveByDomain the whole name only", async () => {
    await repo().insert(customDomain("cd_1", "one.example"));
    await repo().insert(customDomain("cd_b", "b.example", { accountId: "acc_b", addressId: "addr_b" }));
    expect((await repo().get("acc_a", "addr_a", "cd_1"))?.domain).toBe("one.example");
    expect(await repo().get("acc_b", "addr_a", "cd_1")).toBeNull();
    expect(await repo().get("acc_a", "addr_a2", "cd_1")).toBeNull();
    expect(await repo().get("acc_a", "addr_a", "cd_b")).toBeNull();
    expect(await repo().get("acc_a", "addr_a", "CD_1")).toBeNull();
    expect((await repo().findLiveByDomain("b.example"))?.accountId).toBe("acc_b");
    for (const wrong of ["ONE.example", "one.example.", "ne.example", "%.example", "one_example", ""])
      expect(await repo().findLiveByDomain(wrong)).toBeNull();
  });

  it("softDelete marks the account's address's domain deleted, once", async () => {
    await repo().insert(customDomain("cd_1", "one.example"));
    expect(await repo().softDelete("acc_b", "addr_a", "cd_1", NOW_MS)).toBe(false);
    expect(await repo().softDelete("acc_a", "addr_a2", "cd_1", NOW_MS)).toBe(false);
    expect(await repo().softDelete("acc_a", "addr_a", "cd_1", NOW_MS + 5)).toBe(true);
    expect(await repo().softDelete("acc_a", "addr_a", "cd_1", NOW_MS + 6)).toBe(false);
    expect(await repo().get("acc_a", "addr_a", "cd_1")).toBeNull();
    expect(await repo().findLiveByDomain("one.example")).toBeNull();
    expect(Number((await opened!.stored("custom_domains", "cd_1"))?.deleted_at)).toBe(NOW_MS + 5);
  });

  it("recordMxCheck sets that domain's verdict and time only, on any account", async () => {
    await repo().insert(customDomain("cd_1", "one.example"));
    await repo().insert(customDomain("cd_2", "two.example"));
    await repo().recordMxCheck("cd_1", true, NOW_MS + 10);
    await repo().recordMxCheck("cd_none", true, NOW_MS + 10);
    expect(await repo().get("acc_a", "addr_a", "cd_1")).toStrictEqual(
      customDomain("cd_1", "one.example", { mxVerified: true, mxCheckedAtMs: NOW_MS + 10 }),
    );
    expect(await repo().get("acc_a", "addr_a", "cd_2")).toStrictEqual(customDomain("cd_2", "two.example"));
    await repo().recordMxCheck("cd_1", false, NOW_MS + 20);
    expect(await repo().get("acc_a", "addr_a", "cd_1")).toStrictEqual(
      customDomain("cd_1", "one.example", { mxVerified: false, mxCheckedAtMs: NOW_MS + 20 }),
    );
  });

  it("list pages newest first, ties on created_at broken by ID in byte order, scoped to the account's address and live domains", async () => {
    // Byte order: "cd_B" (0x42) < "cd_Z" < "cd_a" (0x61) < "cd_b"; a language's collation would put B after a.
    for (const [id, at] of [
      ["cd_a", NOW_MS],
      ["cd_B", NOW_MS],
      ["cd_b", NOW_MS],
      ["cd_Z", NOW_MS],
      ["cd_old", NOW_MS - 1],
      ["cd_new", NOW_MS + 1],
    ] as const) {
      await repo().insert(customDomain(id, `${id}.example`, { createdAtMs: at }));
    }
    await repo().insert(customDomain("cd_other_address", "x.example", { addressId: "addr_a2" }));
    await repo().insert(customDomain("cd_gone", "gone.example", { createdAtMs: NOW_MS + 2 }));
    await repo().softDelete("acc_a", "addr_a", "cd_gone", NOW_MS);
    expect(await ids(null)).toEqual(["cd_new", "cd_b", "cd_a", "cd_Z", "cd_B", "cd_old"]);
    expect(await ids(null, {}, "acc_a", "addr_a2")).toEqual(["cd_other_address"]);
    expect(await ids(null, {}, "acc_b", "addr_a")).toEqual([]);
    const first = await repo().list("acc_a", "addr_a", null, { limit: 2 });
    expect(first.items.map((d) => d.id)).toEqual(["cd_new", "cd_b"]);
    expect(first.hasMore).toBe(true);
    expect(await ids(null, { limit: 2, before: { createdAtMs: NOW_MS, id: "cd_b" } })).toEqual(["cd_a", "cd_Z"]);
    expect(await ids(null, { before: { createdAtMs: NOW_MS, id: "cd_B" } })).toEqual(["cd_old"]);
    const exact = await repo().list("acc_a", "addr_a", null, { limit: 6 });
    expect(exact.items).toHaveLength(6);
    expect(exact.hasMore).toBe(false);
    expect(await ids(null, { limit: 2, offset: 3 })).toEqual(["cd_Z", "cd_B"]);
  });

  it("list searches the domain for a part, ASCII letters without case, % _ and \\ as themselves", async () => {
    await repo().insert(customDomain("cd_1", "Mail.Example.com"));
    await repo().insert(customDomain("cd_2", "my_host.example"));
    await repo().insert(customDomain("cd_3", "myXhost.example"));
    await repo().insert(customDomain("cd_4", "bücher.example"));
    await repo().insert(customDomain("cd_5", "ÜBER.example"));
    await repo().insert(customDomain("cd_b", "mail.example.org", { accountId: "acc_b", addressId: "addr_b" }));
    expect(await ids("mail")).toEqual(["cd_1"]);
    expect(await ids("EXAMPLE.COM")).toEqual(["cd_1"]);
    expect(await ids("y_h")).toEqual(["cd_2"]);
    expect(await ids("%")).toEqual([]);
    expect(await ids("\\")).toEqual([]);
    expect(await ids("BÜCHER")).toEqual(["cd_4"]);
    // The stored name folds ASCII letters only (SQLite's LIKE), on both engines.
    expect(await ids("über")).toEqual([]);
    expect(await ids("ber.")).toEqual(["cd_5"]);
    expect(await ids("example", { limit: 2 })).toEqual(["cd_5", "cd_4"]);
    expect(await ids("mail", {}, "acc_b", "addr_b")).toEqual(["cd_b"]);
  });
});
