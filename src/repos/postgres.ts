// The repositories on a PostgreSQL that several nodes may share, built on its pool (the
// engine, src/store/engine/postgres.ts, checked its schema and keys). Caches other nodes'
// writes can make stale are cleared by LISTEN/NOTIFY; claims are leases in the database.
import { createPgOutboxRepo } from "../events/outbox.pg.repo.ts";
import { createPgLocalAttachments } from "../inbound/attachments/local-attachments.pg.repo.ts";
import { createPgStatusRepo } from "../inbound/statuses/statuses.pg.repo.ts";
import { pgRetentionPurges } from "../jobs/retention-tables.pg.ts";
import type { Logger } from "../lib/logger.ts";
import { createPgRateLimits } from "../auth/rate-limit.pg.repo.ts";
import { createPgOutboundRepo } from "../outbound/queue/queue.pg.repo.ts";
import { pgQueuePorts } from "../outbound/queue/wiring.ts";
import { createIdempotencyRepo } from "../outbound/sending/idempotency.repo.ts";
import type { PostgresEngine } from "../store/engine/engine.ts";
import { commonRepos } from "./common.ts";
import type { RepoHooks, Repos } from "./repos.ts";

export async function postgresRepos(engine: PostgresEngine, hooks: RepoHooks, logger: Logger): Promise<Repos> {
  const { sql } = engine;
  const common = await commonRepos(engine, hooks);
  // Keys are prefixed (account:, outbound:, session:, sign-in:): one table serves every limit.
  const rateLimits = createPgRateLimits(sql, (err) =>
    logger.warn("expired rate counters could not be deleted; the next take tries again", { err }),
  );
  return {
    engine: "postgres",
    ...common.repos,
    // Statuses and leases through the pool whose commits do not wait for the WAL flush
    // (engine.logSql), as on SQLite's synchronous=NORMAL connection.
    statuses: createPgStatusRepo(engine.logSql),
    outbound: createPgOutboundRepo(sql, pgQueuePorts(), hooks.onEvents, engine.logSql),
    outbox: createPgOutboxRepo(sql),
    idempotency: createIdempotencyRepo(engine.db),
    // On the event loop: PostgreSQL does the work in its own processes. The pool is closed with the rest.
    retention: { purges: pgRetentionPurges(sql), close: async () => {} },
    rateLimits: { calls: rateLimits, dashboard: rateLimits },
    localAttachments: (o) => createPgLocalAttachments(sql, { key: o.key, publicUrl: o.publicUrl, purgeBatchRows: o.purgeBatchRows }),
    checkWritable: (nowMs) => engine.checkWritable(nowMs),
    close: async () => {
      await common.stop();
      await engine.close();
    },
  };
}
