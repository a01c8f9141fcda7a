// The SQLite store: opening, pragmas, migrations and transactions. Feature SQL lives
// in each feature's *.repo.ts; this module knows no table but its own bookkeeping.
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../lib/logger.ts";
import { loadOrCreateKey, secretBox, type SecretBox } from "../lib/secret-key.ts";
import type { Db } from "./db/db.ts";
import { sqliteDb } from "./db/sqlite-db.ts";
import { MIGRATIONS, PRE_RELEASE_FIRST_MIGRATION, type Migration } from "./migrations/index.ts";

export class StoreError extends Error {
  override name = "StoreError";
}

export interface Store {
  readonly db: Database;
  /**
   * A second connection to the same database for logs (incoming statuses) that need not
   * wait for fsync: synchronous=NORMAL. Its commits survive a crash of the process (they
   * are in the WAL, in the OS); a power cut may lose the last of them, never mail, whose
   * rows go through `db` with synchronous=FULL.
   */
  readonly logDb: Database;
  /** `db` as the Db the engine-neutral repositories take (db/db.ts). */
  readonly main: Db;
  /** `logDb` as a Db: for what may take the cheaper durable path (claims, logs). */
  readonly log: Db;
  readonly path: string;
  /** Encrypts the secrets repositories keep (passwords, keys), under data_dir/keys/secrets.key. */
  readonly secrets: SecretBox;
  /**
   * Runs fn in one transaction: all of its writes commit together or none do. It takes the
   * write lock at once (BEGIN IMMEDIATE): the retention purge commits from a thread of its
   * own, and a transaction that read before that commit could not write after it
   * (SQLITE_BUSY_SNAPSHOT); waiting for the lock first, it reads what it then writes on.
   */
  tx<T>(fn: () => T): T;
  /** Proves the database accepts a durable write (for /healthz). */
  checkWritable(nowMs: number): void;
  /**
   * Copies what the WAL holds into the database file now, as far as it can without waiting
   * for readers or writers (PASSIVE). The purge thread calls it after each window: else a
   * commit on the event loop would find the WAL full of purged pages and copy them there.
   */
  checkpoint(): void;
  close(): void;
}

export const DATABASE_FILE = "postroom.db";

/** The key (data_dir/keys/secrets.key) secrets in the database are encrypted with. */
export const SECRETS_KEY = "secrets";

/** Mode of the database file and of SQLite's -wal and -shm files beside it: the owner's only. */
export const DATABASE_FILE_MODE = 0o600;

/** `logger` hears of a database file found empty (0 bytes): a restore gone wrong, usually. */
export function openStore(dataDir: string, migrations: readonly Migration[] = MIGRATIONS, logger?: Pick<Logger, "warn">): Store {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, DATABASE_FILE);
  if (fileSize(path) === 0) {
    logger?.warn("the database file is empty (0 bytes): starting with an empty database. If a restore wrote it, the restore went wrong", {
      path,
    });
  }
  ownerOnly(path);
  const secrets = secretBox(() => loadOrCreateKey(dataDir, SECRETS_KEY));
  const db = new Database(path, { create: true, strict: true });
  try {
    // WAL lets readers run during writes; synchronous=FULL makes every commit durable
    // before we answer 250 or 202 (DESIGN.md section 3).
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA busy_timeout = 5000");
    migrate(db, migrations);
  } catch (err) {
    db.close();
    throw err;
  }
  const logDb = new Database(path, { strict: true });
  logDb.exec("PRAGMA synchronous = NORMAL");
  logDb.exec("PRAGMA foreign_keys = ON");
  logDb.exec("PRAGMA busy_timeout = 5000");
  return {
    db,
    logDb,
    main: sqliteDb(db),
    log: sqliteDb(logDb),
    path,
    secrets,
    tx: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    checkWritable: (nowMs) => {
      db.query("INSERT INTO store_meta (key, value) VALUES ('healthz_at', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
        String(nowMs),
      );
    },
    checkpoint: () => {
      logDb.exec("PRAGMA wal_checkpoint(PASSIVE)");
    },
    close: () => {
      logDb.close();
      db.close();
    },
  };
}

function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/**
 * Creates the database file with mode 0600 before SQLite writes to it (SQLite gives the
 * -wal and -shm files it creates the database file's mode), and brings an existing file
 * and its -wal and -shm, made by an older postroom under the process umask, down to 0600.
 */
function ownerOnly(path: string): void {
  closeSync(openSync(path, "a", DATABASE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const mode = fileMode(file);
    if (mode === null || mode === DATABASE_FILE_MODE) continue;
    try {
      chmodSync(file, DATABASE_FILE_MODE);
    } catch (err) {
      // Another user's file that we may still write to: left as it is.
      if ((err as { code?: string }).code !== "EPERM") throw err;
    }
  }
}

function fileMode(path: string): number | null {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return null;
  }
}

export function schemaVersion(db: Database): number {
  const row = db.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null } | null;
  return row?.v ?? 0;
}

function migrate(db: Database, migrations: readonly Migration[]): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  const first = db.query("SELECT name FROM schema_migrations WHERE version = 1").get() as { name: string } | null;
  if (first?.name === PRE_RELEASE_FIRST_MIGRATION) {
    throw new StoreError(
      "the database was made by a development build of postroom, before its first release, and cannot be upgraded: move data_dir aside and start with a new one.",
    );
  }
  const current = schemaVersion(db);
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new StoreError(
      `the database is at schema version ${current}, but this postroom only knows versions up to ${latest}: ` +
        `it was written by a newer postroom. Run that version (or newer), or restore a backup taken before the upgrade.`,
    );
  }
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)").run(m.version, m.name, Date.now());
    })();
  }
}
