// The repositories written once for both engines (src/store/db/), each built by its
// feature's factory from the engine's Db: the same on SQLite and PostgreSQL. The caches
// other nodes' writes can make stale listen for their notices (Engine.listen: PostgreSQL's
// LISTEN; nothing to hear on SQLite, where one process writes).
import { createAuditRepo } from "../auth/audit.repo.ts";
import { createTenantRepo, TENANT_CHANGES_CHANNEL } from "../auth/tenants.repo.ts";
import { createSessionRepo } from "../dashboard/sessions.repo.ts";
import { createSendingIpHealthRepo } from "../deliverability/sending-ip-health.repo.ts";
import { createSendingDomainRepo, listenForSendingDomainChanges } from "../domains/sending-domains.repo.ts";
import { createWebhookPostRepo } from "../events/webhook-posts.repo.ts";
import { createWebhookEndpointRepo } from "../events/webhook-endpoints.repo.ts";
import { createAddressRepo, listenForAddressChanges } from "../inbound/addresses/addresses.repo.ts";
import { routingCache } from "../inbound/addresses/addresses.port.ts";
import { createCustomDomainRepo } from "../inbound/addresses/custom-domains.repo.ts";
import { createInboundQueueRepo } from "../inbound/queue/inbound-queue.repo.ts";
import { createJobLeaseRepo } from "../jobs/job-lease.repo.ts";
import { createStsRepo } from "../outbound/delivery/mta-sts.repo.ts";
import { createWarmupRepo } from "../outbound/delivery/warmup.repo.ts";
import { createQueueControlRepo } from "../outbound/queue/queue-control.repo.ts";
import { controlEvents } from "../outbound/queue/wiring.ts";
import { createDestinationRepo } from "../outbound/destinations/destinations.repo.ts";
import { createSuppressionRepo } from "../outbound/suppressions/suppressions.repo.ts";
import { createStatsRepo } from "../stats/stats.repo.ts";
import type { Engine } from "../store/engine/engine.ts";
import type { ChannelSubscription } from "../store/pg-notify.ts";
import { TlsStore } from "../tls/tls-store.port.ts";
import { createTlsStateRepo } from "../tls/tls-store.repo.ts";
import type { RepoHooks, Repos } from "./repos.ts";

export async function commonRepos(engine: Engine, hooks: RepoHooks) {
  const { db, secrets } = engine;
  const { clock } = hooks;
  const routes = routingCache(() => clock.nowMs());
  const subscriptions: ChannelSubscription[] = [await listenForAddressChanges(engine.listen, routes)];
  const repos = {
    secrets,
    addresses: createAddressRepo(db, secrets, () => clock.nowMs(), routes),
    customDomains: createCustomDomainRepo(db, secrets),
    sendingDomains: createSendingDomainRepo(db),
    sessions: createSessionRepo(db),
    tls: new TlsStore(createTlsStateRepo(db), secrets, () => clock.nowMs()),
    mtaSts: createStsRepo(db, clock),
    jobLeases: createJobLeaseRepo(db),
    inboundQueue: createInboundQueueRepo(db),
    webhookPosts: createWebhookPostRepo(db),
    webhookEndpoints: createWebhookEndpointRepo(db, secrets),
    suppressions: createSuppressionRepo(db),
    queueControl: createQueueControlRepo(db, controlEvents, () => hooks.onEvents()),
    stats: createStatsRepo(db),
    warmup: createWarmupRepo(db),
    tenants: createTenantRepo(db),
    audit: createAuditRepo(db),
    sendingIpHealth: createSendingIpHealthRepo(db),
    destinations: createDestinationRepo(db, engine.logDb),
    async followSendingDomains(caches) {
      subscriptions.push(await listenForSendingDomainChanges(engine.listen, caches));
    },
    async followTenants(onChange) {
      subscriptions.push(await engine.listen(TENANT_CHANGES_CHANNEL, onChange, onChange));
    },
  } satisfies Partial<Repos>;
  return {
    repos,
    /** Stops listening; before the engine closes. */
    stop: async () => {
      for (const s of subscriptions) await s.stop().catch(() => {});
    },
  };
}
