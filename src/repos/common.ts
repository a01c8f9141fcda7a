// The repositories written once for both engines (src/store/db/), each built by its
// feature's factory from the engine's Db: the same on SQLite and PostgreSQL.
import { createSessionRepo } from "../dashboard/sessions.repo.ts";
import { createWebhookPostRepo } from "../events/webhook-posts.repo.ts";
import { createJobLeaseRepo } from "../jobs/job-lease.repo.ts";
import { createStsRepo } from "../outbound/delivery/mta-sts.repo.ts";
import { createSuppressionRepo } from "../outbound/suppressions/suppressions.repo.ts";
import { createStatsRepo } from "../stats/stats.repo.ts";
import type { Engine } from "../store/engine/engine.ts";
import { TlsStore } from "../tls/tls-store.port.ts";
import { createTlsStateRepo } from "../tls/tls-store.repo.ts";
import type { RepoHooks, Repos } from "./repos.ts";

export function commonRepos(engine: Engine, hooks: RepoHooks) {
  const { db, secrets } = engine;
  const { clock } = hooks;
  return {
    secrets,
    sessions: createSessionRepo(db),
    tls: new TlsStore(createTlsStateRepo(db), secrets, () => clock.nowMs()),
    mtaSts: createStsRepo(db, clock),
    jobLeases: createJobLeaseRepo(db),
    webhookPosts: createWebhookPostRepo(db),
    suppressions: createSuppressionRepo(db),
    stats: createStatsRepo(db),
  } satisfies Partial<Repos>;
}
