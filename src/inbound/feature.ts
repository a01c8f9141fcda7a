// The inbound feature: mail to our addresses, received on port 25, parsed on worker threads,
// posted to each address's target, with a status per recipient. What it serves besides the
// listener: a test POST (E7) and posting a kept message again (E15). Its job deletes
// attachments kept locally once their signed URLs have expired.
import type { SMTPServer } from "smtp-server";
import type { AccountRegistry } from "../auth/accounts.ts";
import type { Config } from "../config/config.ts";
import { perConfig } from "../config/per-config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DiskFullLog } from "../lib/disk-full.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Feature } from "../lib/feature.ts";
import type { Logger } from "../lib/logger.ts";
import type { MemoryBudget } from "../lib/memory-budget.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { BounceHandler } from "../outbound/bounces/bounce-hook.ts";
import type { TlsMaterial } from "../tls/certificate.ts";
import { VERSION } from "../version.ts";
import type { AddressRepo } from "./addresses/addresses.port.ts";
import type { CustomDomainRepo } from "./addresses/custom-domains.port.ts";
import type { RouteDeps } from "./addresses/route.ts";
import type { LocalAttachments } from "./attachments/local-attachments.port.ts";
import { AuthChecker } from "./parse/auth-checks.ts";
import { ExtractPool } from "./parse/extract-pool.ts";
import { spamdFor } from "./parse/spamd.ts";
import { type KeptMessages, keptMessages } from "./post-again.ts";
import type { InboundQueueRepo } from "./queue/inbound-queue.port.ts";
import { postDueMessages } from "./queue/queue-worker.ts";
import { inboundMessageCost, type PostDeps } from "./post-message.ts";
import { createInboundServer } from "./smtp-listener.ts";
import { StatusRetry } from "./statuses/status-retry.ts";
import type { StatusRepo } from "./statuses/statuses.port.ts";
import { sendTestPost, type TestPost } from "./test-post.ts";

export interface InboundFeatureDeps {
  config(): Config;
  repos: { addresses: AddressRepo; customDomains: CustomDomainRepo; statuses: StatusRepo; inboundQueue: InboundQueueRepo };
  localAttachments: LocalAttachments;
  /** In the database (PostgreSQL): any node reaches them all, so their purge runs once per cluster. */
  sharedAttachments: boolean;
  /** Mail to our bounce addresses (the outbound feature's handler). */
  bounces: BounceHandler;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  diskFull: DiskFullLog;
  budget: MemoryBudget;
  metrics: Metrics;
  /** Whose addresses may receive: a deleted account's are unknown, a suspended one's refused. */
  registry: Pick<AccountRegistry, "account" | "suspended">;
}

export interface InboundFeature extends Feature {
  /** The port 25 listener, for src/listeners.ts to bind. */
  server(tls: TlsMaterial | null): SMTPServer;
  testPost: TestPost;
  kept: KeptMessages;
}

export function inboundFeature(deps: InboundFeatureDeps): InboundFeature {
  const { config, repos, resolver, clock, logger, metrics, localAttachments, bounces } = deps;
  const auth = new AuthChecker(resolver);
  const extractor = new ExtractPool(config().inbound.parseWorkers, logger.child({ component: "extract" }), auth);
  const statusRetry = new StatusRetry({
    write: (rows) => repos.statuses.record(rows),
    logger,
    maxRows: () => config().inbound.statusRetryRows,
    counted: (outcome, count) => metrics.statusWrites(outcome, count),
  });
  const routeDeps = perConfig(
    config,
    (c): RouteDeps => ({
      inboundDomain: c.inbound.domain,
      bounceHost: c.outbound.bounceHost,
      addresses: repos.addresses,
      customDomains: repos.customDomains,
      bounces,
      accountStanding: (id) => (!deps.registry.account(id) ? "unknown" : deps.registry.suspended(id) ? "suspended" : "ok"),
    }),
  );
  const postDeps = perConfig(
    config,
    (c): PostDeps => ({
      hostname: c.hostname,
      limits: { maxHeaderBytes: c.smtp.maxHeaderBytes, maxMimeDepth: c.smtp.maxMimeDepth, maxMimeParts: c.smtp.maxMimeParts },
      extract: (raw, limits, traceBytes) => extractor.extract(raw, limits, traceBytes),
      examine: (raw, limits, traceBytes, session) => extractor.examine(raw, limits, traceBytes, session),
      attachmentUrlTtlMs: c.inbound.attachmentUrlTtlMs,
      post: {
        resolver,
        policy: { allowPrivate: c.inbound.allowPrivateTargets },
        timeoutMs: c.inbound.targetTimeoutMs,
        maxRedirects: c.inbound.maxRedirects,
        responseMaxBytes: c.inbound.targetResponseMaxBytes,
        userAgent: `Postroom/${VERSION}`,
        observe: (outcome, seconds) => metrics.targetPost(outcome, seconds),
      },
      resolver,
      auth,
      statuses: repos.statuses,
      statusRetry,
      localAttachments,
      bounces,
      clock,
      logger,
      diskFull: deps.diskFull,
      spamd: spamdFor(c.inbound.spamd),
      queue: {
        repo: repos.inboundQueue,
        retryDelaysMs: c.inbound.retryDelaysMs,
        maxQueueTimeMs: c.inbound.maxQueueTimeMs,
        maxQueuedBytesPerAccount: c.inbound.maxQueuedBytesPerAccount,
      },
    }),
  );
  let stopping = false;
  let round: Promise<number> | null = null;
  const postQueued = () => {
    const post = postDeps();
    const c = config();
    round = postDueMessages({
      queue: post.queue!,
      addresses: repos.addresses,
      customDomains: repos.customDomains,
      statuses: repos.statuses,
      post,
      holder: c.cluster.nodeId,
      // Past one POST (its timeout covers redirects) and the stores' uploads before it.
      leaseMs: 2 * c.inbound.targetTimeoutMs + 60_000,
      logger: logger.child({ component: "inbound-queue" }),
      stopping: () => stopping,
    }).finally(() => {
      round = null;
    });
    return round;
  };
  const hostname = config().hostname;
  return {
    server: (tls) =>
      createInboundServer({
        hostname,
        limits: () => config().smtp,
        route: routeDeps,
        postDeps,
        tls,
        budget: deps.budget,
        messageCost: () => inboundMessageCost(extractor.workerCount),
        logger: logger.child({ component: "inbound" }),
        metrics,
      }),
    testPost: (address, email) => sendTestPost(address, email, postDeps()),
    kept: keptMessages(postDeps, config),
    jobs: [
      // Every node, every second: each kept message is claimed with its own lease, so one node posts it.
      { name: "inbound-queue", every: 1000, run: postQueued, oncePerCluster: false },
      {
        name: "purge-attachments",
        // In files (SQLite) on every node: each deletes those on its own disk, which no other can reach.
        every: "0 17 * * * *",
        run: async () => localAttachments.purgeExpired(clock.nowMs()),
        oncePerCluster: deps.sharedAttachments,
      },
    ],
    async start() {
      // After a crash this node's leases outlive it: its messages are taken back at once, not when they run out.
      const released = await repos.inboundQueue.releaseHeld(config().cluster.nodeId);
      if (released > 0) logger.info("kept inbound messages taken back after a restart", { count: released });
    },
    async stop() {
      // The message being posted finishes (within inbound.target_timeout); the others are let go.
      stopping = true;
      await round?.catch(() => {});
      await statusRetry.close();
      await extractor.close();
    },
  };
}
