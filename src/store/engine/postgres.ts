// A PostgreSQL that several nodes may share, as an Engine. The schema must be this build's
// already (`postroom migrate` brings it there, once per upgrade, before nodes of the new
// version start): a node never migrates on its own, so a rolling upgrade cannot change the
// schema under nodes of the old version. Caches other nodes' writes can make stale are
// cleared by LISTEN/NOTIFY (listen); claims are leases in the database.
import { SQL } from "bun";
import type { Logger } from "../../lib/logger.ts";
import { secretBox } from "../../lib/secret-key.ts";
import { pgDb } from "../db/pg-db.ts";
import { POSTGRES_MIGRATIONS } from "../migrations/postgres/index.ts";
import { checkSharedKeys, loadSharedKeys } from "../node-keys.pg.ts";
import { subscribe } from "../pg-notify.ts";
import { guardNul } from "../pg-nul-guard.ts";
import { planMigrations, postgresConnectError, type RecordedMigration } from "../postgres-migrate.ts";
import { SECRETS_KEY, StoreError } from "../store.ts";
import { describePostgres, type PostgresLocation, parsePostgresUrl } from "../../config/store-url.ts";
import type { PostgresEngine } from "./engine.ts";
import { pgHealth } from "./pg-health.ts";

export interface PostgresOptions {
  url: string;
  dataDir: string;
  connectTimeoutMs: number;
  /** Connections this node opens at most (store.max_connections). */
  maxConnections: number;
  nodeId: string;
}

/** Connections the main pool keeps at least: a transaction and whatever runs beside it. */
export const MIN_MAIN_POOL = 2;

/**
 * Of store.max_connections, the connections of the pool for leases and logs (logDb): a
 * fifth, at least one. Those are written often and need no WAL flush of their own. With
 * max_connections = 2 there is no second pool (0): logDb is the main one, and waits.
 */
export const logPoolSize = (maxConnections: number): number =>
  maxConnections - MIN_MAIN_POOL < 1 ? 0 : Math.max(1, Math.floor(maxConnections / 5));

export async function openPostgresEngine(opts: PostgresOptions, logger: Logger): Promise<PostgresEngine> {
  const at = parsePostgresUrl(opts.url);
  if (!at) throw new StoreError("store.url is not a PostgreSQL URL");
  const connectionTimeout = Math.ceil(opts.connectTimeoutMs / 1000);
  const logMax = logPoolSize(opts.maxConnections);
  // Every value bound for the database is checked for NUL (pg-nul-guard.ts).
  const sql = guardNul(new SQL(at.url, { max: opts.maxConnections - logMax, connectionTimeout }));
  // Leases and logs (logDb), as SQLite's synchronous=NORMAL connection: their commits do not
  // wait for the WAL flush. A crash of the server may lose the last of them, never mail or
  // an answer: WAL is written in order, so the next commit that does wait (an outcome, a
  // send) makes every earlier one durable too. Other nodes see them at once all the same.
  const logSql =
    logMax > 0 ? guardNul(new SQL(at.url, { max: logMax, connectionTimeout, connection: { synchronous_commit: "off" } })) : sql;
  try {
    await checkSchema(sql, at, opts.connectTimeoutMs);
    // Before anything is read or sealed: a node with other keys would make secrets, signed
    // URLs and DKIM keys the other nodes cannot open.
    const keys = loadSharedKeys(opts.dataDir);
    await checkSharedKeys(sql, keys);
    const health = await pgHealth(sql, opts.nodeId, logger);
    return {
      kind: "postgres",
      sql,
      logSql,
      db: pgDb(sql),
      logDb: pgDb(logSql),
      secrets: secretBox(() => keys[SECRETS_KEY]!),
      listen: (channel, onMessage, onResubscribe) => subscribe(sql, channel, onMessage, onResubscribe),
      checkWritable: (nowMs) => health.check(nowMs),
      close: async () => {
        health.stop();
        await Promise.all([sql.close({ timeout: 5 }).catch(() => {}), logSql !== sql && logSql.close({ timeout: 5 }).catch(() => {})]);
      },
    };
  } catch (err) {
    await Promise.all([sql.close().catch(() => {}), logSql !== sql && logSql.close().catch(() => {})]);
    throw err;
  }
}

/** Refuses a database this build cannot serve: unreachable, or not migrated to exactly its schema. */
async function checkSchema(sql: SQL, at: PostgresLocation, connectTimeoutMs: number): Promise<void> {
  let recorded: RecordedMigration[];
  try {
    const [table] = await sql`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`;
    recorded = table.present ? await sql`SELECT version, name FROM schema_migrations ORDER BY version` : [];
  } catch (err) {
    throw await postgresConnectError(err, at, connectTimeoutMs);
  }
  const plan = planMigrations(recorded, POSTGRES_MIGRATIONS);
  if (plan.kind === "refuse") throw new StoreError(plan.reason);
  if (plan.pending.length > 0) {
    const latest = POSTGRES_MIGRATIONS.at(-1)!.version;
    throw new StoreError(
      `${describePostgres(at)} is at schema version ${plan.version} and this postroom needs version ${latest}: run \`postroom migrate\` with this config first (once, from one node).`,
    );
  }
}
