// Nodes on one PostgreSQL must hold the same data_dir/keys (checkSharedKeys): the first
// node records a fingerprint of each key, a node with the same keys starts, a node with
// another key is refused with one sentence naming the file and saying to copy keys/ from
// the first node. The database holds fingerprints only, never a key. Each node here has
// its own data dir and SQL client on one throwaway PostgreSQL.
import { SQL } from "bun";
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkSharedKeys, loadSharedKeys, SHARED_KEY_NAMES } from "../../src/store/node-keys.pg.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";

const engine = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;
const it = engine.test;
const dataDir = tempDirsPerTest();
const ONE_SENTENCE = /^[^.]*(?:\.[a-z][^.]*)*\.$/; // dots only inside file names, one at the end

describe("checkSharedKeys on PostgreSQL", () => {
  let handle: EngineHandle | undefined;
  const clients: SQL[] = [];
  /** A node's own connection to the shared database. */
  const node = (): SQL => {
    if (handle?.kind !== "postgres") throw new Error("PostgreSQL is not open");
    const sql = new SQL(handle.url, { max: 1 });
    clients.push(sql);
    return sql;
  };

  beforeAll(async () => {
    if (engine.available()) handle = await engine.open();
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(["key_fingerprints"]);
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await handle?.close();
  });

  it("a node whose keys/ was copied from the first starts; the database holds a fingerprint of each key, not the key", async () => {
    const first = dataDir();
    const keys = loadSharedKeys(first);
    expect(Object.keys(keys).sort()).toEqual(["dkim", "secrets", "tracking", "url-signing"]);
    await checkSharedKeys(node(), keys);
    const second = dataDir();
    cpSync(join(first, "keys"), join(second, "keys"), { recursive: true });
    await checkSharedKeys(node(), loadSharedKeys(second));
    await checkSharedKeys(node(), loadSharedKeys(first));

    const rows: { name: string; fingerprint: string }[] = await handle!.sql!`SELECT name, fingerprint FROM key_fingerprints ORDER BY name`;
    expect(rows.map((r) => r.name)).toEqual([...SHARED_KEY_NAMES].sort());
    for (const r of rows) {
      const key = readFileSync(join(first, "keys", `${r.name}.key`));
      expect(r.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect([key.toString("hex"), key.toString("base64")]).not.toContain(r.fingerprint);
      expect(Buffer.from(r.fingerprint, "hex").includes(key)).toBe(false);
    }
  });

  it("a node with another dkim key is refused in one sentence naming that file and saying to copy keys/ from the first node", async () => {
    const first = dataDir();
    await checkSharedKeys(node(), loadSharedKeys(first));
    const other = { ...loadSharedKeys(first), dkim: Buffer.alloc(32, 1) };
    const refused = await checkSharedKeys(node(), other).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(refused).toContain("data_dir/keys/dkim.key");
    expect(refused).toContain("copy data_dir/keys from the first node");
    for (const name of ["secrets", "tracking", "url-signing"]) expect(refused).not.toContain(`${name}.key`);
    expect(refused).toMatch(ONE_SENTENCE);
    // The refused node changed nothing: the first node's keys still pass.
    await checkSharedKeys(node(), loadSharedKeys(first));
  });

  it("a second node started with an empty data_dir makes keys of its own, and is refused naming all four files", async () => {
    await checkSharedKeys(node(), loadSharedKeys(dataDir()));
    const refused = await checkSharedKeys(node(), loadSharedKeys(dataDir())).catch((err: Error) => err.message);
    for (const name of SHARED_KEY_NAMES) expect(refused).toContain(`data_dir/keys/${name}.key`);
    expect(refused).toMatch(ONE_SENTENCE);
  });

  it("two nodes with different keys starting at once: the first to record wins, the other is refused", async () => {
    const a = loadSharedKeys(dataDir());
    const b = loadSharedKeys(dataDir());
    const results = await Promise.allSettled([checkSharedKeys(node(), a), checkSharedKeys(node(), b)]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const winner = results[0]!.status === "fulfilled" ? a : b;
    await checkSharedKeys(node(), winner);
  });
});
