// `postroom migrate` on PostgreSQL: brings a database to this build's schema
// (migrations/postgres). Several nodes may run it at once: each migration is applied in its
// own transaction that first takes a transaction-scoped advisory lock and then reads what
// is recorded, so a second runner waits, sees the first one's row, and applies nothing
// twice. A database that a newer or a different build migrated is refused, never touched.
import { SQL } from "bun";
import { lookup } from "node:dns/promises";
import type { Migration } from "./migrations/index.ts";
import { POSTGRES_MIGRATIONS } from "./migrations/postgres/index.ts";
import { StoreError } from "./store.ts";
import { describePostgres, withoutPassword, type PostgresLocation } from "../config/store-url.ts";

export interface RecordedMigration {
  version: number;
  name: string;
}

export type MigrationPlan =
  /** `version`: where the database is now; `pending`: what this build applies, in order. */
  { kind: "apply"; version: number; pending: Migration[] } | { kind: "refuse"; reason: string };

/** What to do with a database whose schema_migrations holds `recorded`, for a build that has `build` (ascending). */
export function planMigrations(recorded: readonly RecordedMigration[], build: readonly Migration[]): MigrationPlan {
  const version = Math.max(0, ...recorded.map((r) => r.version));
  const latest = build.at(-1)?.version ?? 0;
  if (version > latest) {
    return {
      kind: "refuse",
      reason: `the database is at schema version ${version}, but this postroom only knows versions up to ${latest}: it was migrated by a newer postroom. Run that version (or newer), or restore a backup taken before the upgrade.`,
    };
  }
  for (const r of recorded) {
    const ours = build.find((m) => m.version === r.version);
    if (ours?.name !== r.name) {
      return {
        kind: "refuse",
        reason: `the database records migration ${r.version} as "${r.name}", but this postroom's migration ${r.version} is ${ours ? `"${ours.name}"` : "missing"}: it was migrated by a different build of postroom, and this one will not change it.`,
      };
    }
  }
  const missing = build.find((m) => m.version <= version && !recorded.some((r) => r.version === m.version));
  if (missing) {
    return {
      kind: "refuse",
      reason: `the database is at schema version ${version} but has no record of migration ${missing.version} "${missing.name}": its schema_migrations was changed by hand, and this postroom will not guess what its schema is.`,
    };
  }
  return { kind: "apply", version, pending: build.filter((m) => m.version > version) };
}

/** The database could not be reached or refused the login; the message is one line without the password. */
export class PostgresConnectError extends Error {
  override name = "PostgresConnectError";
}

/** A migration's SQL failed (its transaction rolled back); the database stays at the version before it. */
export class MigrationFailedError extends Error {
  override name = "MigrationFailedError";
}

export interface PostgresMigrateResult {
  /** The migrations this run applied (another runner's are not among them). */
  applied: Migration[];
  version: number;
}

// One key for every Postroom: the bytes of "postroom" as a 64-bit integer.
export const MIGRATION_LOCK_KEY = "8101821198636117869";

const CREATE_RUNNER_TABLE =
  "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)";

/** Applies the pending migrations. Throws PostgresConnectError, StoreError (refused) or MigrationFailedError. */
export async function migratePostgres(
  at: PostgresLocation,
  opts: { connectTimeoutMs: number; migrations?: readonly Migration[] },
): Promise<PostgresMigrateResult> {
  const migrations = opts.migrations ?? POSTGRES_MIGRATIONS;
  const sql = new SQL(at.url, { max: 1, connectionTimeout: Math.ceil(opts.connectTimeoutMs / 1000) });
  try {
    try {
      await sql`SELECT 1`;
    } catch (err) {
      throw await postgresConnectError(err, at, opts.connectTimeoutMs);
    }
    const applied: Migration[] = [];
    for (;;) {
      const step = await sql.begin(async (tx) => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
        await tx.unsafe(CREATE_RUNNER_TABLE);
        const recorded: RecordedMigration[] = await tx`SELECT version, name FROM schema_migrations ORDER BY version`;
        const plan = planMigrations(recorded, migrations);
        if (plan.kind === "refuse") throw new StoreError(plan.reason);
        const next = plan.pending[0];
        if (!next) return { version: plan.version, applied: null };
        try {
          await tx.unsafe(next.sql);
        } catch (err) {
          throw new MigrationFailedError(
            `migration ${next.version} "${next.name}" failed and was rolled back: ${withoutPassword((err as Error).message, at)}`,
          );
        }
        await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${next.version}, ${next.name}, ${Date.now()})`;
        return { version: next.version, applied: next };
      });
      if (!step.applied) return { applied, version: step.version };
      applied.push(step.applied);
    }
  } finally {
    await sql.close().catch(() => {});
  }
}

/** `err`, thrown by a first query, as one line naming the server without the password. */
export async function postgresConnectError(err: unknown, at: PostgresLocation, timeoutMs: number): Promise<PostgresConnectError> {
  return new PostgresConnectError(
    `cannot connect to ${describePostgres(at)}: ${withoutPassword(await connectReason(err, at, timeoutMs), at)}`,
  );
}

/** Bun's client says "Failed to connect" both for a refused port and an unknown host: tell them apart. */
async function connectReason(err: unknown, at: PostgresLocation, timeoutMs: number): Promise<string> {
  const e = err as { code?: string; message?: string };
  switch (e.code) {
    case "ERR_POSTGRES_CONNECTION_REFUSED":
      return (await resolves(at.host)) ? "connection refused" : "host not found";
    case "ERR_POSTGRES_CONNECTION_TIMEOUT":
      return `no answer within ${timeoutMs / 1000} s (store.connect_timeout)`;
    case "ERR_POSTGRES_CONNECTION_CLOSED":
    case "ERR_POSTGRES_CONNECTION_FAILED":
      return "the server closed the connection before it was established";
    default:
      return (e.message ?? String(err)).split("\n")[0]!;
  }
}

async function resolves(host: string): Promise<boolean> {
  try {
    await lookup(host.replace(/^\[|\]$/g, ""));
    return true;
  } catch {
    return false;
  }
}
