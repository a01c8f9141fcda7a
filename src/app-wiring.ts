// Pieces of the composition in app.ts that are plain plumbing: which repositories the
// router's routes read, and what the dashboard's System and Queue pages are given. Kept
// apart so app.ts stays a short list of features; no behaviour of its own.
import type { Clock } from "./lib/clock.ts";
import type { MemoryBudget } from "./lib/memory-budget.ts";
import type { MetricsDeps } from "./metrics/metrics.ts";
import type { DashboardDeps } from "./dashboard/routes.ts";
import type { DeliverabilityFeature } from "./deliverability/feature.ts";
import { pausedDestinations } from "./outbound/destinations/pause-board.ts";
import { type QueueActionDeps, queueActionDepsOf } from "./outbound/queue/queue-actions.ts";
import type { Repos } from "./repos/repos.ts";
import type { RouterDeps } from "./router.ts";
import type { Config } from "./config/config.ts";

/** The repositories the API's routes read and write, by the names RouterDeps gives them. */
export function routeRepos(repos: Repos) {
  return {
    addresses: repos.addresses,
    customDomains: repos.customDomains,
    statuses: repos.statuses,
    outbound: repos.outbound,
    queueControl: repos.queueControl,
    sendingDomains: repos.sendingDomains,
    suppressions: repos.suppressions,
    inboundQueue: repos.inboundQueue,
    stats: repos.stats,
    destinations: repos.destinations,
    webhookEndpoints: repos.webhookEndpoints,
    audit: repos.audit,
  } satisfies Partial<RouterDeps>;
}

/** The dashboard's System page (what this node and the cluster look like now) and its Queue page's actions. */
export function dashboardPages(d: {
  repos: Repos;
  clock: Clock;
  version: string;
  health: () => unknown;
  tls: () => unknown;
  deliverability: DeliverabilityFeature;
  kick: () => void;
  config: () => Config;
}): { system: DashboardDeps["system"]; queue: QueueActionDeps } {
  const { repos, clock } = d;
  return {
    system: async () => ({
      version: d.version,
      health: d.health(),
      tls: d.tls(),
      queue: await repos.outbound.queueDepth(clock.nowMs()),
      webhook_events_pending: await repos.outbox.countPending(),
      sending_ips: await d.deliverability.sending.list(),
      paused_destinations: await pausedDestinations(repos.destinations, clock.nowMs()),
    }),
    queue: queueActionDepsOf({ repo: repos.queueControl, nowMs: () => clock.nowMs(), kick: d.kick, accounts: () => d.config().accounts }),
  };
}

/** What /metrics reads: the queues, the memory budget, the sending IPs' health, the paused destinations. */
export function metricsDeps(d: {
  repos: Repos;
  clock: Clock;
  budget: MemoryBudget;
  deliverability: DeliverabilityFeature;
  nodeId: string;
  version: string;
  tls: MetricsDeps["tls"];
  config: () => Config;
}): MetricsDeps {
  const { repos, budget, deliverability } = d;
  return {
    queue: repos.outbound,
    outbox: repos.outbox,
    inboundQueue: repos.inboundQueue,
    pauses: repos.destinations,
    clock: d.clock,
    tls: d.tls,
    mailInFlight: () => ({ bytes: budget.inFlightBytes, budget: budget.capacityBytes, waiting: budget.waitingCount }),
    version: d.version,
    nodeId: d.nodeId,
    deliverability: {
      sendingIps: () => deliverability.sending.list(),
      zones: () => d.config().outbound.dnsblZones,
      complaintRates: () => deliverability.complaintRates(),
    },
  };
}
