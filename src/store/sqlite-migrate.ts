// `postroom migrate` on the embedded SQLite: opening the store migrates it (serve does
// the same at start); this says which migrations that opening applied, by reading the
// version the file was at before.
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS, type Migration } from "./migrations/index.ts";
import { DATABASE_FILE, openStore, schemaVersion } from "./store.ts";

export interface SqliteMigrateResult {
  applied: Migration[];
  version: number;
}

/** Migrates data_dir's database. Throws StoreError for a database it refuses (newer, pre-release). */
export function migrateSqlite(dataDir: string, migrations: readonly Migration[] = MIGRATIONS): SqliteMigrateResult {
  const before = versionBefore(join(dataDir, DATABASE_FILE));
  const store = openStore(dataDir, migrations);
  const version = schemaVersion(store.db);
  store.close();
  return { applied: migrations.filter((m) => m.version > before && m.version <= version), version };
}

/** The schema version of an existing database file: 0 for none, an empty one, or one openStore will report on. */
function versionBefore(path: string): number {
  if (!existsSync(path)) return 0;
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    const table = db.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").get();
    return table ? schemaVersion(db) : 0;
  } catch {
    return 0;
  } finally {
    db?.close();
  }
}
