// The SessionRepo contract, run on both engines: createSessionRepo on SQLite (a store in a
// temp data dir) and on PostgreSQL (a throwaway server with the postgres migration history
// applied). The same cases, the same expectations: a session reads back
// field for field with the same JS types (admin a boolean, milliseconds numbers, never
// the strings PostgreSQL's BIGINT arrives as), lookups match the whole hash only, touch,
// remove and removeExpired change only what they name. A repository that diverges from
// the other fails here.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { DashboardSession } from "../../src/dashboard/session.ts";
import { sessionIdHash, type SessionRepo } from "../../src/dashboard/sessions.port.ts";
import { createSessionRepo } from "../../src/dashboard/sessions.repo.ts";
import { type EngineHandle, STORE_ENGINES, type StoreEngine } from "../helpers/engines.ts";

interface Opened {
  repo: SessionRepo;
  handle: EngineHandle;
}

const open = async (engine: StoreEngine): Promise<Opened> => {
  const handle = await engine.open();
  return { handle, repo: createSessionRepo(handle.db) };
};

// Past 2^32 ms (as Date.now() is), so a 32-bit column or binding would show; the last
// is the largest integer a number holds exactly.
const NOW_MS = 1_795_000_000_000;
const MAX_MS = Number.MAX_SAFE_INTEGER;

const session = (secret: string, over: Partial<DashboardSession> = {}): DashboardSession => ({
  idHash: sessionIdHash(secret),
  accountId: "acc_a",
  admin: false,
  tokenHash: `sha256:${"ab".repeat(32)}`,
  createdAtMs: NOW_MS,
  expiresAtMs: NOW_MS + 86_400_000,
  lastSeenAtMs: NOW_MS,
  ...over,
});

describe.each(STORE_ENGINES)("SessionRepo on $name", (engine) => {
  const it = engine.test;
  let opened: Opened | undefined;
  const repo = (): SessionRepo => opened!.repo;

  beforeAll(async () => {
    if (engine.available()) opened = await open(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(["dashboard_sessions"]);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("a created session reads back field for field, with numbers as numbers and admin as a boolean", async () => {
    const account = session("secret-account", { createdAtMs: NOW_MS - 5, lastSeenAtMs: NOW_MS + 7, expiresAtMs: MAX_MS });
    const admin = session("secret-admin", { accountId: "", admin: true });
    await repo().create(account);
    await repo().create(admin);
    const foundAccount = await repo().find(account.idHash);
    const foundAdmin = await repo().find(admin.idHash);
    // toStrictEqual: "1795000000000" (a string) or 1 (a number for admin) would not pass.
    expect(foundAccount).toStrictEqual(account);
    expect(foundAdmin).toStrictEqual(admin);
    expect(foundAdmin!.admin).toBe(true);
    expect(foundAccount!.admin).toBe(false);
    for (const value of [foundAccount!.createdAtMs, foundAccount!.expiresAtMs, foundAccount!.lastSeenAtMs])
      expect(typeof value).toBe("number");
    expect(foundAccount!.expiresAtMs).toBe(MAX_MS);
  });

  it("find matches the whole hash only: another account's session, a prefix, other case or a pattern find nothing", async () => {
    const a = session("secret-a", { accountId: "acc_a" });
    const b = session("secret-b", { accountId: "acc_b" });
    await repo().create(a);
    await repo().create(b);
    expect((await repo().find(a.idHash))?.accountId).toBe("acc_a");
    expect((await repo().find(b.idHash))?.accountId).toBe("acc_b");
    for (const wrong of [
      sessionIdHash("secret-c"),
      a.idHash.slice(0, 32),
      a.idHash.toUpperCase(),
      `${a.idHash.slice(0, 63)}%`,
      "%",
      "",
      `${a.idHash} `,
    ]) {
      expect(await repo().find(wrong)).toBeNull();
    }
  });

  it("a second session with the same hash is refused, and the first is kept", async () => {
    const first = session("secret-dup");
    await repo().create(first);
    await expect(repo().create(session("secret-dup", { accountId: "acc_b" }))).rejects.toThrow();
    expect(await repo().find(first.idHash)).toStrictEqual(first);
  });

  it("touch moves that session's last_seen_at only", async () => {
    const a = session("secret-touch-a");
    const b = session("secret-touch-b");
    await repo().create(a);
    await repo().create(b);
    await repo().touch(a.idHash, NOW_MS + 60_001);
    await repo().touch(sessionIdHash("secret-unknown"), NOW_MS + 1); // no session: nothing happens
    expect(await repo().find(a.idHash)).toStrictEqual({ ...a, lastSeenAtMs: NOW_MS + 60_001 });
    expect(await repo().find(b.idHash)).toStrictEqual(b);
  });

  it("remove deletes that session only; removing an unknown one is no error", async () => {
    const a = session("secret-remove-a");
    const b = session("secret-remove-b", { accountId: "acc_b" });
    await repo().create(a);
    await repo().create(b);
    await repo().remove(a.idHash);
    await repo().remove(a.idHash);
    await repo().remove(sessionIdHash("secret-unknown"));
    expect(await repo().find(a.idHash)).toBeNull();
    expect(await repo().find(b.idHash)).toStrictEqual(b);
  });

  it("removeExpired deletes sessions whose lifetime ended at or before now, returns how many, and keeps the rest", async () => {
    const past = session("secret-past", { expiresAtMs: NOW_MS - 1 });
    const atNow = session("secret-now", { expiresAtMs: NOW_MS, admin: true, accountId: "" });
    const later = session("secret-later", { expiresAtMs: NOW_MS + 1 });
    for (const s of [past, atNow, later]) await repo().create(s);
    const removed = await repo().removeExpired(NOW_MS);
    expect(removed).toBe(2);
    expect(await repo().find(past.idHash)).toBeNull();
    expect(await repo().find(atNow.idHash)).toBeNull();
    expect(await repo().find(later.idHash)).toStrictEqual(later);
    expect(await repo().removeExpired(NOW_MS)).toBe(0);
    expect(await repo().removeExpired(NOW_MS + 1)).toBe(1);
  });
});
