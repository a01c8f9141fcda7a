// `postroom migrate`: brings the store named by the config to this build's schema and says
// what it did. SQLite migrates whenever it is opened, serve does it too
// (src/store/sqlite-migrate.ts); PostgreSQL only here (src/store/postgres-migrate.ts).
import { join } from "node:path";
import type { Config } from "../config/config.ts";
import { MIGRATIONS, type Migration } from "../store/migrations/index.ts";
import { POSTGRES_MIGRATIONS } from "../store/migrations/postgres/index.ts";
import { migratePostgres, MigrationFailedError, PostgresConnectError } from "../store/postgres-migrate.ts";
import { migrateSqlite } from "../store/sqlite-migrate.ts";
import { DATABASE_FILE, StoreError } from "../store/store.ts";
import { describePostgres, parsePostgresUrl, withoutPassword } from "../config/store-url.ts";

/** What to print and the exit code: 0 done, 1 refused or unreachable, 2 a migration or PostgreSQL failed. */
export interface MigrateOutcome {
  exitCode: 0 | 1 | 2;
  stdout: string[];
  stderr: string[];
}

const label = (m: Migration) => `${String(m.version).padStart(4, "0")} ${m.name}`;

/** The two lines of a finished run: what was applied where, and the version now. */
export function migrationReport(where: string, applied: readonly Migration[], version: number, latest: number): string[] {
  return [
    applied.length === 0 ? `${where}: up to date, nothing to apply` : `${where}: applied ${applied.map(label).join(", ")}`,
    `schema version ${version} (the latest this postroom knows: ${latest})`,
  ];
}

export async function runMigrate(config: Config): Promise<MigrateOutcome> {
  if (config.store.postgresUrl === null) return sqlite(config.dataDir);
  // The config schema accepted the URL, so it parses.
  const at = parsePostgresUrl(config.store.postgresUrl)!;
  try {
    const result = await migratePostgres(at, { connectTimeoutMs: config.store.connectTimeoutMs });
    return {
      exitCode: 0,
      stdout: migrationReport(describePostgres(at), result.applied, result.version, POSTGRES_MIGRATIONS.at(-1)?.version ?? 0),
      stderr: [],
    };
  } catch (err) {
    if (err instanceof PostgresConnectError) return { exitCode: 1, stdout: [], stderr: [err.message] };
    if (err instanceof StoreError) return { exitCode: 1, stdout: [], stderr: [`${describePostgres(at)}: refused: ${err.message}`] };
    if (err instanceof MigrationFailedError) return { exitCode: 2, stdout: [], stderr: [`${describePostgres(at)}: ${err.message}`] };
    // Anything else PostgreSQL answered (a permission it refuses, a connection lost midway):
    // its message, on one line, never a stack.
    const message = (err as Error).message?.split("\n")[0] ?? String(err);
    return { exitCode: 2, stdout: [], stderr: [`${describePostgres(at)}: ${withoutPassword(message, at)}`] };
  }
}

function sqlite(dataDir: string): MigrateOutcome {
  const where = `SQLite at ${join(dataDir, DATABASE_FILE)}`;
  try {
    const result = migrateSqlite(dataDir);
    return { exitCode: 0, stdout: migrationReport(where, result.applied, result.version, MIGRATIONS.at(-1)?.version ?? 0), stderr: [] };
  } catch (err) {
    if (err instanceof StoreError) return { exitCode: 1, stdout: [], stderr: [`${where}: refused: ${err.message}`] };
    return { exitCode: 2, stdout: [], stderr: [`${where}: ${(err as Error).message}`] };
  }
}
