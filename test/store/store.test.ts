import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { MIGRATIONS } from "../../src/store/migrations/index.ts";
import { openStore, schemaVersion, StoreError } from "../../src/store/store.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";

const fresh = tempDirsPerTest();

describe("openStore", () => {
  test("creates the database in data_dir with WAL, synchronous=FULL and foreign keys", () => {
    const dir = fresh() + "/nested/data";
    const store = openStore(dir);
    expect(store.path).toBe(`${dir}/postroom.db`);
    expect(store.db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(store.db.query("PRAGMA synchronous").get()).toEqual({ synchronous: 2 });
    expect(store.db.query("PRAGMA foreign_keys").get()).toEqual({ foreign_keys: 1 });
    store.close();
  });

  test("applies every migration once and records it", () => {
    const dir = fresh();
    openStore(dir).close();
    const store = openStore(dir);
    expect(schemaVersion(store.db)).toBe(MIGRATIONS.at(-1)!.version);
    const rows = store.db.query("SELECT version, name FROM schema_migrations ORDER BY version").all();
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    store.close();
  });

  test("a later migration runs on an existing database, in one transaction", () => {
    const dir = fresh();
    openStore(dir).close();
    const next = [...MIGRATIONS, { version: 999, name: "add_thing", sql: "CREATE TABLE thing (id TEXT PRIMARY KEY)" }];
    const store = openStore(dir, next);
    expect(schemaVersion(store.db)).toBe(999);
    store.close();

    const broken = [...MIGRATIONS, { version: 998, name: "half", sql: "CREATE TABLE half (id TEXT); THIS IS NOT SQL" }];
    const dir2 = fresh();
    openStore(dir2).close();
    expect(() => openStore(dir2, broken)).toThrow();
    const after = openStore(dir2);
    expect(after.db.query("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeNull();
    after.close();
  });

  test("a database of a development build from before the first release is refused, untouched, with what to do", () => {
    const dir = fresh();
    const db = new Database(`${dir}/postroom.db`, { create: true });
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    db.exec("INSERT INTO schema_migrations VALUES (1, 'init', 0), (2, 'incoming_statuses', 0)");
    db.exec("CREATE TABLE addresses (id TEXT PRIMARY KEY)");
    db.close();
    expect(() => openStore(dir)).toThrow(
      new StoreError(
        "the database was made by a development build of postroom, before its first release, and cannot be upgraded: move data_dir aside and start with a new one.",
      ),
    );
    const after = new Database(`${dir}/postroom.db`);
    expect(after.query("SELECT COUNT(*) AS n FROM schema_migrations").get()).toEqual({ n: 2 });
    after.close();
  });

  test("a store without secrets makes no key: it is made when the first secret is sealed", () => {
    const dir = fresh();
    openStore(dir).close();
    expect(existsSync(`${dir}/keys/secrets.key`)).toBe(false);
  });

  test("a database from a newer postroom is refused with a clear message", () => {
    const dir = fresh();
    openStore(dir, [...MIGRATIONS, { version: 999, name: "future", sql: "SELECT 1" }]).close();
    let error: unknown;
    try {
      openStore(dir);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toBe(
      `the database is at schema version 999, but this postroom only knows versions up to ${MIGRATIONS.at(-1)!.version}: ` +
        "it was written by a newer postroom. Run that version (or newer), or restore a backup taken before the upgrade.",
    );
  });

  test("tx takes the write lock at its start: another connection (the purge thread) cannot commit between its read and its write", () => {
    const store = openStore(fresh());
    const other = new Database(store.path);
    other.exec("PRAGMA busy_timeout = 0");
    store.tx(() => {
      store.db.query("SELECT * FROM store_meta").all();
      // Deferred, this insert would commit, and the write below fail with SQLITE_BUSY_SNAPSHOT.
      expect(() => other.query("INSERT INTO store_meta (key, value) VALUES ('other', '1')").run()).toThrow(/locked/);
      store.db.query("INSERT INTO store_meta (key, value) VALUES ('mine', '1')").run();
    });
    expect(store.db.query("SELECT key FROM store_meta ORDER BY key").all()).toEqual([{ key: "mine" }]);
    other.close();
    store.close();
  });

  test("tx commits all or nothing", () => {
    const store = openStore(fresh());
    expect(() =>
      store.tx(() => {
        store.db.query("INSERT INTO store_meta (key, value) VALUES ('a', '1')").run();
        throw new Error("stop");
      }),
    ).toThrow("stop");
    expect(store.db.query("SELECT * FROM store_meta WHERE key = 'a'").get()).toBeNull();
    store.close();
  });
});
