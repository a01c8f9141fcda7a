// The repositories on a PostgreSQL that several nodes may share, built on its pool (the
// engine, src/store/engine/postgres.ts, checked its schema and keys). Caches other nodes'
// writes can make stale are cleared by LISTEN/NOTIFY; claims are leases in the database.
import { createPgSendingDomainRepo, listenForSendingDomainChanges } from "../domains/sending-domains.pg.repo.ts";
import { createPgOutboxRepo } from "../events/outbox.pg.repo.ts";
import { createPgAddressRepo, listenForAddressChanges } from "../inbound/addresses/addresses.pg.repo.ts";
import { routingCache } from "../inbound/addresses/addresses.port.ts";
import { createPgCustomDomainRepo } from "../inbound/addresses/custom-domains.pg.repo.ts";
import { createPgLocalAttachments } from "../inbound/attachments/local-attachments.pg.repo.ts";
import { createPgStatusRepo } from "../inbound/statuses/statuses.pg.repo.ts";
import { pgRetentionPurges } from "../jobs/retention-tables.pg.ts";
import type { Logger } from "../lib/logger.ts";
import { createPgRateLimits } from "../lib/rate-limit.pg.repo.ts";
import { createPgOutboundRepo } from "../outbound/queue/queue.pg.repo.ts";
import { pgQueuePorts } from "../outbound/queue/wiring.ts";
import { createIdempotencyRepo } from "../outbound/sending/idempotency.repo.ts";
import type { PostgresEngine } from "../store/engine/engine.ts";
import { commonRepos } from "./common.ts";
import type { RepoHooks, Repos } from "./repos.ts";

export async function postgresRepos(engine: PostgresEngine, hooks: RepoHooks, logger: Logger): Promise<Repos> {
  const { clock } = hooks;
  const { sql, secrets } = engine;
  const routes = routingCache(() => clock.nowMs());
  const subscriptions = [await listenForAddressChanges(sql, routes)];
  // Keys are prefixed (account:, outbound:, session:, sign-in:): one table serves every limit.
  const rateLimits = createPgRateLimits(sql, (err) =>
    logger.warn("expired rate counters could not be deleted; the next take tries again", { err }),
  );
  return {
    engine: "postgres",
    ...commonRepos(engine, hooks),
    addresses: createPgAddressRepo(sql, secrets, () => clock.nowMs(), routes),
    customDomains: createPgCustomDomainRepo(sql, secrets),
    statuses: createPgStatusRepo(sql),
    outbound: createPgOutboundRepo(sql, pgQueuePorts(), hooks.onEvents),
    sendingDomains: createPgSendingDomainRepo(sql),
    outbox: createPgOutboxRepo(sql),
    idempotency: createIdempotencyRepo(engine.db),
    // On the event loop: PostgreSQL does the work in its own processes. The pool is closed with the rest.
    retention: { purges: pgRetentionPurges(sql), close: async () => {} },
    rateLimits: { calls: rateLimits, dashboard: rateLimits },
    async followSendingDomains(caches) {
      subscriptions.push(await listenForSendingDomainChanges(sql, caches));
    },
    localAttachments: (o) => createPgLocalAttachments(sql, { key: o.key, publicUrl: o.publicUrl, purgeBatchRows: o.purgeBatchRows }),
    checkWritable: (nowMs) => engine.checkWritable(nowMs),
    close: async () => {
      for (const s of subscriptions) await s.stop().catch(() => {});
      await engine.close();
    },
  };
}
