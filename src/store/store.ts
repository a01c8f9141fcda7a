// The SQLite store: opening, pragmas, migrations and transactions. Feature SQL lives
// in each feature's *.repo.ts; this module knows no table but its own bookkeeping.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS, type Migration } from "./migrations/index.ts";

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
  readonly path: string;
  /** Runs fn in one transaction: all of its writes commit together or none do. */
  tx<T>(fn: () => T): T;
  /** Proves the database accepts a durable write (for /healthz). */
  checkWritable(nowMs: number): void;
  close(): void;
}

export const DATABASE_FILE = "postroom.db";

export function openStore(dataDir: string, migrations: readonly Migration[] = MIGRATIONS): Store {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, DATABASE_FILE);
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
    path,
    tx: <T>(fn: () => T): T => db.transaction(fn)(),
    checkWritable: (nowMs) => {
      db.query("INSERT INTO store_meta (key, value) VALUES ('healthz_at', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(String(nowMs));
    },
    close: () => {
      logDb.close();
      db.close();
    },
  };
}

export function schemaVersion(db: Database): number {
  const row = db.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null } | null;
  return row?.v ?? 0;
}

function migrate(db: Database, migrations: readonly Migration[]): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
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
