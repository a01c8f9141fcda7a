// The TlsStore contract, run on both engines: createTlsStateRepo on SQLite (a store in a
// temp data dir) and on PostgreSQL (a throwaway server with the postgres migration
// history applied). The same cases, the same expectations: the certificate, the
// account key, the account and the last order failure read back as written and are
// replaced as a whole; the account key is kept once (a second node's key does not replace
// it); private keys are not in the clear in the table; a challenge answer is kept, replaced,
// deleted, and not answered once expired, and expired rows go when the next is written.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { readFileSync } from "node:fs";
import { secretBox } from "../../src/lib/secret-key.ts";
import type { TlsMaterial } from "../../src/tls/certificate.ts";
import { ACME_CHALLENGE_TTL_MS, TlsStore } from "../../src/tls/tls-store.port.ts";
import { createTlsStateRepo, sqliteTlsStore } from "../../src/tls/tls-store.repo.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { tempDir } from "../helpers/tmp.ts";

// Past 2^32 ms (as Date.now() is), so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;
const TABLES = ["tls_state", "acme_challenges"] as const;

const certs = tempDir();
const pair = (name: string): TlsMaterial => {
  const { certFile, keyFile } = makeSelfSignedCert(certs.path, name, name);
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
};
/** The base64 body of a PEM: what must not be found in a table in the clear. */
const body = (pem: string): string => pem.split("\n")[1]!;

afterAll(() => certs.remove());

describe.each(STORE_ENGINES)("TlsStore on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  let store: TlsStore;
  const clock = { nowMs: NOW_MS };
  let first: TlsMaterial;
  let second: TlsMaterial;

  /** Every row of a table, column for column, as stored. */
  const rows = async (table: (typeof TABLES)[number]): Promise<Record<string, unknown>[]> =>
    handle!.kind === "sqlite"
      ? handle!.store.db.query<Record<string, unknown>, []>(`SELECT * FROM ${table}`).all()
      : [...(await handle!.sql`SELECT * FROM ${handle!.sql(table)}`)];

  beforeAll(async () => {
    first = pair("first.postroom.test");
    second = pair("second.postroom.test");
    if (!engine.available()) return;
    handle = await engine.open();
    const nowMs = () => clock.nowMs;
    // PostgreSQL's key is this test's (SQLite's store makes its own in data_dir/keys).
    store =
      handle.kind === "sqlite"
        ? sqliteTlsStore(handle.store, nowMs)
        : new TlsStore(
            createTlsStateRepo(handle.db),
            secretBox(() => Buffer.alloc(32, 7)),
            nowMs,
          );
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(TABLES);
    clock.nowMs = NOW_MS;
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("an empty store has no certificate, account, account key or order failure", async () => {
    expect(await store.certificate()).toBeNull();
    expect(await store.accountKey()).toBeNull();
    expect(await store.account()).toBeNull();
    expect(await store.orderFailure()).toBeNull();
  });

  it("the certificate reads back with its key, a second replaces both, and the key is not in the clear", async () => {
    await store.saveCertificate(first);
    expect(await store.certificate()).toStrictEqual(first);
    clock.nowMs += 1000;
    await store.saveCertificate(second);
    expect(await store.certificate()).toStrictEqual(second);
    const stored = await rows("tls_state");
    expect(stored.length).toBe(1);
    const raw = JSON.stringify(stored);
    expect(raw).toContain(body(second.cert));
    expect(raw).not.toContain(body(second.key));
    expect(raw).not.toContain("PRIVATE KEY");
    expect(Number(stored[0]!.updated_at)).toBe(NOW_MS + 1000);
  });

  it("the account key is kept once: a second one offered (another node's) is refused and the first returned", async () => {
    expect(await store.keepAccountKey(first.key)).toBe(first.key);
    expect(await store.keepAccountKey(second.key)).toBe(first.key);
    expect(await store.accountKey()).toBe(first.key);
    expect(JSON.stringify(await rows("tls_state"))).not.toContain(body(first.key));
  });

  it("the account and the last order failure are replaced as a whole; a success removes the failure", async () => {
    await store.saveAccount({ directoryUrl: "https://ca.test/dir", accountUrl: "https://ca.test/acct/1" });
    await store.saveAccount({ directoryUrl: "https://ca2.test/dir", accountUrl: "https://ca2.test/acct/9" });
    expect(await store.account()).toStrictEqual({ directoryUrl: "https://ca2.test/dir", accountUrl: "https://ca2.test/acct/9" });
    await store.saveOrderFailure({ atMs: NOW_MS, reason: "CAA forbids", retryAtMs: NOW_MS + 300_000 });
    await store.saveOrderFailure({ atMs: NOW_MS + 1, reason: "rate limited", retryAtMs: NOW_MS + 600_000 });
    expect(await store.orderFailure()).toStrictEqual({ atMs: NOW_MS + 1, reason: "rate limited", retryAtMs: NOW_MS + 600_000 });
    await store.saveOrderFailure(null);
    expect(await store.orderFailure()).toBeNull();
    expect(await store.account()).not.toBeNull();
  });

  it("a challenge answer is kept, replaced and deleted; an unknown token has none", async () => {
    await store.setChallenge("tok-a", "tok-a.thumb1");
    await store.setChallenge("tok-b", "tok-b.thumb");
    await store.setChallenge("tok-a", "tok-a.thumb2");
    expect(await store.challenge("tok-a")).toBe("tok-a.thumb2");
    expect(await store.challenge("tok-b")).toBe("tok-b.thumb");
    expect(await store.challenge("tok-c")).toBeNull();
    await store.deleteChallenge("tok-a");
    expect(await store.challenge("tok-a")).toBeNull();
    expect(await store.challenge("tok-b")).toBe("tok-b.thumb");
  });

  it("an answer left behind is not given past its expiry, and the next one written removes its row", async () => {
    await store.setChallenge("left", "left.thumb");
    clock.nowMs = NOW_MS + ACME_CHALLENGE_TTL_MS - 1;
    expect(await store.challenge("left")).toBe("left.thumb");
    clock.nowMs = NOW_MS + ACME_CHALLENGE_TTL_MS;
    expect(await store.challenge("left")).toBeNull();
    expect((await rows("acme_challenges")).length).toBe(1);
    await store.setChallenge("next", "next.thumb");
    expect((await rows("acme_challenges")).map((r) => r.token)).toEqual(["next"]);
    expect(Number((await rows("acme_challenges"))[0]!.expires_at)).toBe(NOW_MS + 2 * ACME_CHALLENGE_TTL_MS);
  });
});
