// The StsStore contract (the MTA-STS policy cache), run on both engines: createStsRepo on
// SQLite (a store in a temp data dir) and on PostgreSQL (a throwaway server with the
// postgres migration history applied). The same cases, the same
// expectations: a policy reads back field for field with the same JS types (max age and
// expiry numbers, never PostgreSQL's BIGINT strings; mx an array), expired or not; a
// refresh replaces the domain's row in place with the time it was fetched; lookups match
// the whole domain name exactly.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import type { StsStore } from "../../src/outbound/delivery/mta-sts.port.ts";
import { createStsRepo } from "../../src/outbound/delivery/mta-sts.repo.ts";
import type { StsPolicy } from "../../src/outbound/delivery/tls-policy.ts";
import { type EngineHandle, STORE_ENGINES, type StoreEngine } from "../helpers/engines.ts";

// Past 2^32 ms (as Date.now() is), so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;

interface Opened {
  repo: StsStore;
  handle: EngineHandle;
  clock: ManualClock;
}

const open = async (engine: StoreEngine): Promise<Opened> => {
  const handle = await engine.open();
  const clock = new ManualClock(NOW_MS);
  return { handle, clock, repo: createStsRepo(handle.db, clock) };
};

interface StoredRow {
  domain: string;
  policyId: string;
  fetchedAtMs: number;
}

/** The mta_sts_policies rows as stored, read around the repository. */
async function storedRows(handle: EngineHandle): Promise<StoredRow[]> {
  type Raw = { domain: string; policy_id: string; fetched_at: unknown };
  const rows: Raw[] =
    handle.kind === "sqlite"
      ? handle.store.db.query<Raw, []>("SELECT domain, policy_id, fetched_at FROM mta_sts_policies ORDER BY domain").all()
      : await handle.sql`SELECT domain, policy_id, fetched_at FROM mta_sts_policies ORDER BY domain`;
  return rows.map((r) => ({ domain: r.domain, policyId: r.policy_id, fetchedAtMs: Number(r.fetched_at) }));
}

const policy = (id: string, over: Partial<StsPolicy> = {}): StsPolicy => ({
  id,
  mode: "enforce",
  mx: ["mx1.example.com", "*.mx.example.net"],
  maxAgeSeconds: 604_800,
  expiresAtMs: NOW_MS + 604_800_000,
  ...over,
});

describe.each(STORE_ENGINES)("StsStore on $name", (engine) => {
  const it = engine.test;
  let opened: Opened | undefined;
  const repo = (): StsStore => opened!.repo;

  beforeAll(async () => {
    if (engine.available()) opened = await open(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(["mta_sts_policies"]);
    opened?.clock.set(NOW_MS);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("a stored policy reads back field for field, numbers as numbers, mx an array, expired or not; no policy is null", async () => {
    const enforce = policy("20261122T000000");
    const testing = policy("t1", { mode: "testing", mx: [], maxAgeSeconds: 31_557_600, expiresAtMs: Number.MAX_SAFE_INTEGER });
    const expired = policy("old", {
      mode: "none",
      mx: ['mx."quoted".example', "ünïcode.example"],
      maxAgeSeconds: 0,
      expiresAtMs: NOW_MS - 1,
    });
    await repo().put("enforce.example", enforce);
    await repo().put("testing.example", testing);
    await repo().put("expired.example", expired);
    // toStrictEqual: "604800" or "1795604800000" (strings) would not pass.
    expect(await repo().get("enforce.example")).toStrictEqual(enforce);
    expect(await repo().get("testing.example")).toStrictEqual(testing);
    expect(await repo().get("expired.example")).toStrictEqual(expired);
    expect(await repo().get("none.example")).toBeNull();
  });

  it("a refresh replaces the domain's policy in place, stamped with the clock's time; other domains keep theirs", async () => {
    const other = policy("other");
    await repo().put("other.example", other);
    await repo().put("example.com", policy("first"));
    opened!.clock.set(NOW_MS + 86_400_000);
    const second = policy("second", {
      mode: "testing",
      mx: ["mx.example.com"],
      maxAgeSeconds: 86_400,
      expiresAtMs: NOW_MS + 2 * 86_400_000,
    });
    await repo().put("example.com", second);
    expect(await repo().get("example.com")).toStrictEqual(second);
    expect(await repo().get("other.example")).toStrictEqual(other);
    expect(await storedRows(opened!.handle)).toStrictEqual([
      { domain: "example.com", policyId: "second", fetchedAtMs: NOW_MS + 86_400_000 },
      { domain: "other.example", policyId: "other", fetchedAtMs: NOW_MS },
    ]);
  });

  it("get matches the whole domain exactly: other case, a part, a parent or a pattern find nothing", async () => {
    await repo().put("mail.example.com", policy("p"));
    for (const wrong of [
      "MAIL.example.com",
      "mail.example.co",
      "example.com",
      "ail.example.com",
      "%",
      "mail.example.co_",
      "mail.example.com.",
    ]) {
      expect(await repo().get(wrong)).toBeNull();
    }
    expect((await repo().get("mail.example.com"))?.id).toBe("p");
  });
});
