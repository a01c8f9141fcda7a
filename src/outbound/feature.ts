// The outbound feature: accepting mail to send (the API's E11 and SMTP submission share
// SendDeps), the worker that delivers the queue, and the handler of bounces that come back
// to our bounce addresses. The submission listeners are made here and bound by src/listeners.ts.
import type { SMTPServer } from "smtp-server";
import type { AccountRegistry } from "../auth/accounts.ts";
import type { RateLimits } from "../auth/rate-limit.ts";
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Feature } from "../lib/feature.ts";
import type { Logger } from "../lib/logger.ts";
import type { MemoryBudget } from "../lib/memory-budget.ts";
import { AuthFailures } from "../smtp/auth-failures.ts";
import type { TlsMaterial } from "../tls/certificate.ts";
import { bounceHandler } from "./bounces/bounce-handler.ts";
import type { BounceHandler } from "./bounces/bounce-hook.ts";
import type { StsStore } from "./delivery/mta-sts.port.ts";
import { outboundTls } from "./delivery/destination-tls.ts";
import { copyPreparer } from "./delivery/prepare.ts";
import { poolNamed } from "./delivery/source-address.ts";
import { DeliveryWorker } from "./delivery/worker.ts";
import type { WarmupCounts } from "./delivery/warmup.port.ts";
import { DAY_MS, dayStartMs } from "./delivery/warmup.ts";
import type { DestinationCounters } from "./delivery/worker-deps.ts";
import type { DestinationRepo } from "./destinations/destinations.port.ts";
import type { RecipientUpdate } from "./queue/message.ts";
import type { OutboundRepo } from "./queue/queue.port.ts";
import type { IdempotencyRepo } from "./sending/idempotency.port.ts";
import type { SendDeps } from "./sending/send.ts";
import type { SenderDomains } from "./sending/sender-domains.ts";
import { createSubmissionServer } from "./submission/submission-listener.ts";
import { suppressionExpiryJob } from "./suppressions/expiry-job.ts";
import type { SuppressionRepo } from "./suppressions/suppressions.port.ts";

export interface OutboundFeatureDeps {
  config(): Config;
  repos: {
    outbound: OutboundRepo;
    suppressions: SuppressionRepo;
    idempotency: IdempotencyRepo;
    mtaSts: StsStore;
    destinations: DestinationRepo;
    warmup: WarmupCounts;
  };
  /** Where submission counts sends (shared with the API's account calls: one send budget per outbound account). */
  limiter: RateLimits;
  registry: AccountRegistry;
  domains: SenderDomains;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  budget: MemoryBudget;
  /** What delivery counts (src/metrics/metrics.ts implements it; declared here, as metrics import outbound). */
  metrics: DeliveryCounters;
  trackingKey: Buffer;
  /** Sending addresses on a blocklist now (the deliverability check's): pools avoid them (outbound.avoid_listed_ips). */
  listedIps?(): ReadonlySet<string>;
}

export interface DeliveryCounters {
  /** An attempt's outcome, committed; `acceptedAtMs` is when the message was accepted. */
  delivery(update: Pick<RecipientUpdate, "status">, acceptedAtMs: number): void;
  /** An attempt's outcome dropped: the worker's lease on the recipient had ended. */
  deliveryLeaseLost(): void;
  /** Per destination and source IP: connections opened, deliveries and deferrals. */
  destinations: DestinationCounters;
}

export interface OutboundFeature extends Feature {
  delivery: DeliveryWorker;
  send: SendDeps;
  bounces: BounceHandler;
  /** A submission listener, STARTTLS (587) or implicit TLS (465), for src/listeners.ts to bind. */
  submissionServer(implicitTls: boolean, tls: TlsMaterial | null): SMTPServer;
}

export function outboundFeature(deps: OutboundFeatureDeps): OutboundFeature {
  const { config, repos, resolver, clock, logger, budget, metrics } = deps;
  const nodeId = config().cluster.nodeId;
  const preparer = copyPreparer({
    domains: deps.domains,
    publicUrl: () => config().http.publicUrl,
    trackingKey: deps.trackingKey,
    trackingLinkTtlMs: () => config().outbound.trackingLinkTtlMs,
  });
  const tlsFor = outboundTls({ store: repos.mtaSts, resolver, clock, logger: logger.child({ component: "mta-sts" }), config });
  const delivery = new DeliveryWorker({
    repo: repos.outbound,
    resolver,
    clock,
    config,
    tlsFor,
    budget,
    nodeId,
    warmup: repos.warmup,
    ...preparer,
    logger: logger.child({ component: "delivery" }),
    recorded: (update, acceptedAtMs) => metrics.delivery(update, acceptedAtMs),
    leaseLost: () => metrics.deliveryLeaseLost(),
    destinationRepo: repos.destinations,
    destinationMetrics: metrics.destinations,
    listedIps: deps.listedIps,
    // The registry knows the config's outbound accounts and those made through the operator API.
    poolOf: (outboundAccountId) => poolNamed(config(), deps.registry.outbound(outboundAccountId)?.outbound.ipPool),
  });
  const send: SendDeps = {
    repo: repos.outbound,
    clock,
    domains: deps.domains,
    suppressed: (outboundId, emails) => repos.suppressions.suppressedAmong(outboundId, emails, clock.nowMs()),
    config,
    notify: () => delivery.kick(),
    idempotency: repos.idempotency,
  };
  // Both submission listeners count a client's failed AUTH attempts together.
  const authFailures = new AuthFailures(() => config().smtp.authFailures);
  const submissionServer = (implicitTls: boolean, tls: TlsMaterial | null) =>
    createSubmissionServer({
      config,
      registry: deps.registry,
      limiter: deps.limiter,
      clock,
      send,
      tls,
      implicitTls,
      budget,
      authFailures,
      logger: logger.child({ component: implicitTls ? "submission-tls" : "submission" }),
    });
  return {
    delivery,
    send,
    bounces: bounceHandler({
      repo: repos.outbound,
      clock,
      logger: logger.child({ component: "bounces" }),
      suppressionTtlMs: () => config().outbound.suppressionTtlMs,
    }),
    submissionServer,
    start: () => delivery.start(),
    stop: () => delivery.stop(),
    // A day's warm-up counts matter until it ends; yesterday's is kept for a day in case of clock skew between nodes.
    jobs: [
      {
        name: "warmup-counts-purge",
        every: "0 7 * * * *",
        run: () => repos.warmup.purgeBefore(dayStartMs(clock.nowMs()) - DAY_MS),
        oncePerCluster: true,
      },
      suppressionExpiryJob(repos.suppressions, () => clock.nowMs(), logger.child({ component: "suppressions" })),
    ],
  };
}
