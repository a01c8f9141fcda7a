// The repositories on a PostgreSQL that several nodes may share. The schema must be this
// build's already (`postroom migrate` brings it there, once per upgrade, before nodes of the
// new version start): a node never migrates on its own, so a rolling upgrade cannot change
// the schema under nodes of the old version. Caches other nodes' writes can make stale are
// cleared by LISTEN/NOTIFY; claims are leases in the database.
import { SQL } from "bun";
import { createSessionRepo } from "../../dashboard/sessions.repo.ts";
import { createPgSendingDomainRepo, listenForSendingDomainChanges } from "../../domains/sending-domains.pg.repo.ts";
import { createPgOutboxRepo } from "../../events/outbox.pg.repo.ts";
import { createPgWebhookPostRepo } from "../../events/webhook-posts.pg.repo.ts";
import { createPgAddressRepo, listenForAddressChanges } from "../../inbound/addresses/addresses.pg.repo.ts";
import { routingCache } from "../../inbound/addresses/addresses.port.ts";
import { createPgCustomDomainRepo } from "../../inbound/addresses/custom-domains.pg.repo.ts";
import { createPgLocalAttachments } from "../../inbound/attachments/local-attachments.pg.repo.ts";
import { createPgStatusRepo } from "../../inbound/statuses/statuses.pg.repo.ts";
import { createPgJobLeaseRepo } from "../../jobs/job-lease.pg.repo.ts";
import { pgRetentionPurges } from "../../jobs/retention-tables.pg.ts";
import type { Logger } from "../../lib/logger.ts";
import { createPgRateLimits } from "../../lib/rate-limit.pg.repo.ts";
import { secretBox, type SecretBox } from "../../lib/secret-key.ts";
import { createPgStsRepo } from "../../outbound/delivery/mta-sts.pg.repo.ts";
import { createPgOutboundRepo } from "../../outbound/queue/queue.pg.repo.ts";
import { pgQueuePorts } from "../../outbound/queue/wiring.ts";
import { createPgIdempotencyRepo } from "../../outbound/sending/idempotency.pg.repo.ts";
import { createPgSuppressionRepo } from "../../outbound/suppressions/suppressions.pg.repo.ts";
import { createPgStatsRepo } from "../../stats/stats.pg.repo.ts";
import { createPgTlsStateRepo } from "../../tls/tls-store.pg.repo.ts";
import { TlsStore } from "../../tls/tls-store.port.ts";
import { POSTGRES_MIGRATIONS } from "../migrations/postgres/index.ts";
import { planMigrations, postgresConnectError, type RecordedMigration } from "../postgres-migrate.ts";
import { SECRETS_KEY, StoreError } from "../store.ts";
import { describePostgres, parsePostgresUrl, type PostgresLocation } from "../store-url.ts";
import { checkSharedKeys, loadSharedKeys } from "../node-keys.pg.ts";
import { pgHealth } from "./pg-health.ts";
import { guardNul } from "../pg-nul-guard.ts";
import { pgDb } from "../db/pg-db.ts";
import type { RepoHooks, Repos } from "./repos.ts";

export interface PostgresOptions {
  url: string;
  dataDir: string;
  connectTimeoutMs: number;
  /** Connections this node opens at most (store.max_connections). */
  maxConnections: number;
  nodeId: string;
}

export async function openPostgresRepos(opts: PostgresOptions, hooks: RepoHooks, logger: Logger): Promise<Repos> {
  const at = parsePostgresUrl(opts.url);
  if (!at) throw new StoreError("store.url is not a PostgreSQL URL");
  // Every value bound for the database is checked for NUL (pg-nul-guard.ts).
  const sql = guardNul(new SQL(at.url, { max: opts.maxConnections, connectionTimeout: Math.ceil(opts.connectTimeoutMs / 1000) }));
  try {
    await checkSchema(sql, at, opts.connectTimeoutMs);
    // Before anything is read or sealed: a node with other keys would make secrets, signed
    // URLs and DKIM keys the other nodes cannot open.
    const keys = loadSharedKeys(opts.dataDir);
    await checkSharedKeys(sql, keys);
    return await build(
      sql,
      secretBox(() => keys[SECRETS_KEY]!),
      opts,
      hooks,
      logger,
    );
  } catch (err) {
    await sql.close().catch(() => {});
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

async function build(sql: SQL, secrets: SecretBox, opts: PostgresOptions, hooks: RepoHooks, logger: Logger): Promise<Repos> {
  const { clock } = hooks;
  const db = pgDb(sql);
  const routes = routingCache(() => clock.nowMs());
  const subscriptions = [await listenForAddressChanges(sql, routes)];
  // Keys are prefixed (account:, outbound:, session:, sign-in:): one table serves every limit.
  const rateLimits = createPgRateLimits(sql, (err) =>
    logger.warn("expired rate counters could not be deleted; the next take tries again", { err }),
  );
  const health = await pgHealth(sql, opts.nodeId, logger);
  return {
    engine: "postgres",
    secrets,
    addresses: createPgAddressRepo(sql, secrets, () => clock.nowMs(), routes),
    customDomains: createPgCustomDomainRepo(sql, secrets),
    statuses: createPgStatusRepo(sql),
    outbound: createPgOutboundRepo(sql, pgQueuePorts(), hooks.onEvents),
    suppressions: createPgSuppressionRepo(sql),
    sendingDomains: createPgSendingDomainRepo(sql),
    outbox: createPgOutboxRepo(sql),
    webhookPosts: createPgWebhookPostRepo(sql),
    tls: new TlsStore(createPgTlsStateRepo(sql), secrets, () => clock.nowMs()),
    stats: createPgStatsRepo(sql),
    sessions: createSessionRepo(db),
    idempotency: createPgIdempotencyRepo(sql),
    mtaSts: createPgStsRepo(sql, clock),
    jobLeases: createPgJobLeaseRepo(sql),
    // On the event loop: PostgreSQL does the work in its own processes. The pool is closed with the rest.
    retention: { purges: pgRetentionPurges(sql), close: async () => {} },
    rateLimits: { calls: rateLimits, dashboard: rateLimits },
    async followSendingDomains(caches) {
      subscriptions.push(await listenForSendingDomainChanges(sql, caches));
    },
    localAttachments: (o) => createPgLocalAttachments(sql, { key: o.key, publicUrl: o.publicUrl, purgeBatchRows: o.purgeBatchRows }),
    checkWritable: (nowMs) => health.check(nowMs),
    close: async () => {
      health.stop();
      for (const s of subscriptions) await s.stop().catch(() => {});
      await sql.close({ timeout: 5 }).catch(() => {});
    },
  };
}
