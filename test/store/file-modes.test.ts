// What lies in data_dir is the owner's only: the database with its -wal and -shm files
// 0600, keys/ 0700 with 0600 keys, from the first byte and after an upgrade from files
// made under a looser umask. A database file found empty is reported, and Postroom starts.
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/lib/logger.ts";
import { loadOrCreateKey } from "../../src/lib/secret-key.ts";
import { openStore } from "../../src/store/store.ts";
import { startTestApp } from "../helpers/app.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";

const fresh = tempDirsPerTest();
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("file modes", () => {
  test("a new database, its -wal and -shm are 0600 whatever the umask", () => {
    const dir = fresh();
    const previous = process.umask(0o002);
    try {
      const store = openStore(dir);
      store.db.exec("INSERT INTO store_meta (key, value) VALUES ('k', 'v')");
      expect([modeOf(join(dir, "postroom.db")), modeOf(join(dir, "postroom.db-wal")), modeOf(join(dir, "postroom.db-shm"))]).toEqual([
        "600",
        "600",
        "600",
      ]);
      store.close();
    } finally {
      process.umask(previous);
    }
  });

  test("an existing database and its -wal and -shm made 0644 by an older postroom become 0600", () => {
    const dir = fresh();
    const store = openStore(dir);
    store.db.exec("INSERT INTO store_meta (key, value) VALUES ('k', 'v')");
    for (const f of ["postroom.db", "postroom.db-wal", "postroom.db-shm"]) chmodSync(join(dir, f), 0o644);
    const again = openStore(dir);
    expect([modeOf(join(dir, "postroom.db")), modeOf(join(dir, "postroom.db-wal")), modeOf(join(dir, "postroom.db-shm"))]).toEqual([
      "600",
      "600",
      "600",
    ]);
    again.close();
    store.close();
  });

  test("keys/ is 0700 and each key 0600, also when they were made looser", () => {
    const dir = fresh();
    const key = loadOrCreateKey(dir, "url-signing");
    expect([modeOf(join(dir, "keys")), modeOf(join(dir, "keys", "url-signing.key"))]).toEqual(["700", "600"]);
    chmodSync(join(dir, "keys"), 0o755);
    chmodSync(join(dir, "keys", "url-signing.key"), 0o644);
    expect(loadOrCreateKey(dir, "url-signing")).toEqual(key);
    expect([modeOf(join(dir, "keys")), modeOf(join(dir, "keys", "url-signing.key"))]).toEqual(["700", "600"]);

    const other = fresh();
    mkdirSync(join(other, "keys"), { mode: 0o755 });
    chmodSync(join(other, "keys"), 0o755);
    loadOrCreateKey(other, "tracking");
    expect([modeOf(join(other, "keys")), modeOf(join(other, "keys", "tracking.key"))]).toEqual(["700", "600"]);
  });

  test("a running appliance: every file under keys/ 0600, the database files 0600", async () => {
    const t = await startTestApp();
    try {
      await t.json("GET", "/healthz");
      expect(modeOf(join(t.dataDir, "keys"))).toBe("700");
      for (const name of ["url-signing", "dkim", "tracking"]) expect(modeOf(join(t.dataDir, "keys", `${name}.key`))).toBe("600");
      for (const f of ["postroom.db", "postroom.db-wal", "postroom.db-shm"]) expect(modeOf(join(t.dataDir, f))).toBe("600");
    } finally {
      await t.stop();
    }
  });
});

describe("an empty (0-byte) database file", () => {
  test("is reported with a warning at start, and Postroom starts with an empty database", async () => {
    const dir = fresh();
    writeFileSync(join(dir, "postroom.db"), "");
    const lines: string[] = [];
    const t = await startTestApp({ dataDir: dir, logger: createLogger({ level: "warn", sink: (l) => lines.push(l) }) });
    try {
      const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === "warn");
      expect(warnings).toEqual([
        expect.objectContaining({
          msg: "the database file is empty (0 bytes): starting with an empty database. If a restore wrote it, the restore went wrong",
          path: join(dir, "postroom.db"),
        }),
      ]);
      const res = await t.json("GET", "/api/v0.1/a000000000000001/addresses", { auth: "Bearer pr_token_account_a" });
      expect(res).toMatchObject({ status: 200, body: [] });
    } finally {
      await t.stop();
    }
  });

  test("a new or a non-empty database file gives no warning", async () => {
    const dir = fresh();
    const warned: string[] = [];
    const logger = { warn: (msg: string) => void warned.push(msg) };
    openStore(dir, undefined, logger).close();
    openStore(dir, undefined, logger).close();
    expect(warned).toEqual([]);
  });
});
