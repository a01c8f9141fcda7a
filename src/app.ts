// The appliance as one object: built from a validated Config, started, reloaded and
// stopped as a whole, so a test can run a complete Postroom on ephemeral ports in a
// temp dir. Nothing here reads global state: config, clock, resolver and logger come in.
import type { HealthReport } from "./api/deps.ts";
import { healthReport } from "./api/health.ts";
import { type HttpHandler, serveHttp } from "./http/serve.ts";
import { buildRouter } from "./router.ts";
import { AccountRegistry } from "./auth/accounts.ts";
import type { Config } from "./config/config.ts";
import { perConfig } from "./config/per-config.ts";
import { restartNeededFor } from "./config/reload.ts";
import { AuthChecker } from "./inbound/parse/auth-checks.ts";
import { ExtractPool } from "./inbound/parse/extract-pool.ts";
import type { Address } from "./inbound/addresses/address.ts";
import { sendTestPost } from "./inbound/test-post.ts";
import { keptMessages } from "./inbound/post-again.ts";
import { spamdFor } from "./inbound/parse/spamd.ts";
import type { BounceHandler } from "./outbound/bounces/bounce-hook.ts";
import { inboundMessageCost, type PostDeps } from "./inbound/post-message.ts";
import { StatusRetry } from "./inbound/statuses/status-retry.ts";
import { createInboundServer } from "./inbound/smtp-listener.ts";
import { createSubmissionServer } from "./outbound/submission/submission-listener.ts";
import { AuthFailures } from "./smtp/auth-failures.ts";
import type { RouteDeps } from "./inbound/addresses/route.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { createResolver, type DnsResolver } from "./lib/dns.ts";
import { DiskFullLog, isDiskFull } from "./lib/disk-full.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import { MemoryBudget } from "./lib/memory-budget.ts";
import { loadOrCreateKey } from "./lib/secret-key.ts";
import { bounceHandler } from "./outbound/bounces/bounce-handler.ts";
import { copyPreparer } from "./outbound/delivery/prepare.ts";
import type { SendDeps } from "./outbound/sending/send.ts";
import { senderDomains } from "./domains/sender-domains.ts";
import { DomainService } from "./domains/service.ts";
import { WebhookDispatcher } from "./events/dispatcher.ts";
import { scheduleAppJobs } from "./jobs/app-jobs.ts";
import type { Scheduler } from "./jobs/scheduler.ts";
import { RetentionPurge } from "./jobs/retention-purge.ts";
import { DeliveryWorker } from "./outbound/delivery/worker.ts";
import { outboundTls } from "./outbound/delivery/destination-tls.ts";
import { lockDataDir, type DataDirLock } from "./store/data-dir-lock.ts";
import type { Store } from "./store/store.ts";
import { openRepos } from "./repos/open.ts";
import type { Repos } from "./repos/repos.ts";
import type { SqliteRepos } from "./repos/sqlite.ts";
import { Listeners } from "./listeners.ts";
import { createMetrics, type Metrics } from "./metrics/metrics.ts";
import { dashboardDeps } from "./dashboard/routes.ts";
import { ChallengeResponder } from "./tls/challenges.ts";
import { tlsHealthWarnings } from "./tls/health-warnings.ts";
import { TlsManager } from "./tls/manager.ts";
import { VERSION } from "./version.ts";

export interface AppOptions {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  resolver?: DnsResolver;
  /** Mail to our bounce addresses; by default the outbound side's handler (tests may replace it). */
  bounces?: BounceHandler;
}

export class App {
  private current: Config;
  private readonly scheduler: Scheduler;
  /** Sending domains (tests run the verifier's due checks through it). */
  readonly domains: DomainService;
  /** The certificate of every listener (tests force renewals through it). */
  readonly tls: TlsManager;
  private readonly listeners: Listeners;
  private readonly metrics: Metrics;
  /** The API as a function, for in-process tests (no socket). */
  readonly handle: HttpHandler;
  /** The API's route table (method and path pattern), for guard tests and docs. */
  readonly routes: readonly { method: string; path: string }[];
  readonly registry: AccountRegistry;
  /** Every repository, on the engine store.url names. */
  readonly repos: Repos;
  readonly logger: Logger;
  private readonly clock: Clock;
  private readonly postDeps: () => PostDeps;
  private readonly routeDeps: () => RouteDeps;
  private readonly extractor: ExtractPool;
  private readonly statusRetry: StatusRetry;
  /** The outgoing queue's worker (tests kick it after moving their clock). */
  readonly delivery: DeliveryWorker;
  /** Posts message events to webhooks (tests kick it after moving their clock). */
  readonly webhooks: WebhookDispatcher;
  /** Deletes what is older than its retention (tests run it after moving their clock). */
  readonly retention: RetentionPurge;
  /** Memory held by mail in flight (limits.mail_in_flight), shared by every listener and E11. */
  readonly budget: MemoryBudget;

  private constructor(
    opts: AppOptions & { logger: Logger; clock: Clock; diskFull: DiskFullLog },
    private readonly dataDirLock: DataDirLock,
    repos: Repos,
  ) {
    const config = (this.current = opts.config);
    const { logger, clock, diskFull } = opts;
    this.logger = logger;
    this.clock = clock;
    this.repos = repos;
    const budget = (this.budget = new MemoryBudget(
      () => this.current.limits.mailInFlightBytes,
      { refused: (listener) => this.metrics.memoryRefusal(listener) },
      () => {
        const l = this.current.limits;
        return {
          perClient: l.mailInFlightPerClient,
          reserved: l.mailInFlightReserved,
          idleMs: l.mailInFlightIdleMs,
          maxWaitMs: l.mailInFlightMaxWaitMs,
        };
      },
    ));
    const resolver = opts.resolver ?? createResolver({ servers: config.dns.servers });
    const registry = (this.registry = AccountRegistry.fromConfig(config));
    const { addresses, customDomains, statuses, outbound, suppressions, sendingDomains, outbox } = repos;
    const localAttachments = repos.localAttachments({
      key: loadOrCreateKey(config.dataDir, "url-signing"),
      publicUrl: () => this.current.http.publicUrl,
      purgeBatchRows: () => this.current.retention.batchSize,
    });
    const auth = new AuthChecker(resolver);
    const extractor = (this.extractor = new ExtractPool(config.inbound.parseWorkers, logger.child({ component: "extract" })));
    const bounces = opts.bounces ?? bounceHandler({ repo: outbound, clock, logger: logger.child({ component: "bounces" }) });
    this.domains = new DomainService({
      repo: sendingDomains,
      resolver,
      clock,
      logger: logger.child({ component: "domains" }),
      config: () => this.current,
      encryptionKey: loadOrCreateKey(config.dataDir, "dkim"),
    });
    const domains = senderDomains(this.domains);
    const trackingKey = loadOrCreateKey(config.dataDir, "tracking");
    const preparer = copyPreparer({
      domains,
      publicUrl: () => this.current.http.publicUrl,
      trackingKey,
      trackingLinkTtlMs: () => this.current.outbound.trackingLinkTtlMs,
    });
    const tlsFor = outboundTls({
      store: repos.mtaSts,
      resolver,
      clock,
      logger: logger.child({ component: "mta-sts" }),
      config: () => this.current,
    });
    this.delivery = new DeliveryWorker({
      repo: outbound,
      resolver,
      clock,
      logger: logger.child({ component: "delivery" }),
      config: () => this.current,
      tlsFor,
      budget,
      ...preparer,
      recorded: (update, acceptedAtMs) => this.metrics.delivery(update, acceptedAtMs),
      leaseLost: () => this.metrics.deliveryLeaseLost(),
      nodeId: config.cluster.nodeId,
    });
    const suppressed = (outboundId: string, emails: readonly string[]) => suppressions.suppressedAmong(outboundId, emails);
    this.webhooks = new WebhookDispatcher({
      repo: outbox,
      registry,
      resolver,
      clock,
      logger: logger.child({ component: "webhooks" }),
      config: () => this.current,
      userAgent: `Postroom/${VERSION}`,
      onExpired: (count) => this.metrics.webhookEventsExpired.inc(count),
      onPosted: (status, timedOut) => this.metrics.webhookPost(status, timedOut),
      posts: repos.webhookPosts,
    });
    const responder = new ChallengeResponder(repos.tls);
    this.tls = new TlsManager({
      config: () => this.current,
      clock,
      resolver,
      responder,
      store: repos.tls,
      logger: logger.child({ component: "tls" }),
    });
    this.metrics = createMetrics({
      queue: outbound,
      outbox,
      clock,
      tls: () => this.tls.status(),
      mailInFlight: () => ({ bytes: budget.inFlightBytes, budget: budget.capacityBytes, waiting: budget.waitingCount }),
      version: VERSION,
      nodeId: config.cluster.nodeId,
    });
    const send: SendDeps = {
      repo: outbound,
      clock,
      domains,
      suppressed,
      config: () => this.current,
      notify: () => this.delivery.kick(),
      idempotency: repos.idempotency,
    };

    const system = async () => ({
      version: VERSION,
      health: this.health(),
      tls: this.tls.status(),
      queue: await outbound.queueDepth(clock.nowMs()),
      webhook_events_pending: await outbox.countPending(),
    });
    const dashboard = dashboardDeps({
      config: () => this.current,
      registry,
      clock,
      logger,
      sessions: repos.sessions,
      limiter: repos.rateLimits.dashboard,
      system,
    });
    const routerDeps = {
      config: () => this.current,
      registry,
      clock,
      logger,
      resolver,
      addresses,
      customDomains,
      statuses,
      localAttachments,
      outbound,
      send,
      sendingDomains,
      domains: this.domains,
      suppressions,
      trackingKey,
      health: () => this.health(),
      nodeId: config.cluster.nodeId,
      metrics: this.metrics,
      diskFull,
      budget,
      dashboard,
      calls: repos.rateLimits.calls,
      version: VERSION,
      stats: repos.stats,
      webhooks: this.webhooks,
      testPost: (a: Address, email: string) => sendTestPost(a, email, this.postDeps()),
      kept: keptMessages(
        () => this.postDeps(),
        () => this.current,
      ),
    };
    const { router, apiRoutes, routeOf } = buildRouter(routerDeps);
    this.handle = serveHttp({
      config: () => this.current,
      logger,
      metrics: this.metrics,
      diskFull,
      handle: (req) => router.handle(req),
      routeOf,
    });
    this.routes = apiRoutes;
    const current = () => this.current;
    this.routeDeps = perConfig(current, (c) => ({
      inboundDomain: c.inbound.domain,
      bounceHost: c.outbound.bounceHost,
      addresses,
      customDomains,
      bounces,
    }));
    const statusRetry = (this.statusRetry = new StatusRetry({
      write: (rows) => statuses.record(rows),
      logger,
      maxRows: () => this.current.inbound.statusRetryRows,
      counted: (outcome, count) => this.metrics.statusWrites(outcome, count),
    }));
    this.postDeps = perConfig(current, (c): PostDeps => {
      return {
        hostname: c.hostname,
        limits: { maxHeaderBytes: c.smtp.maxHeaderBytes, maxMimeDepth: c.smtp.maxMimeDepth, maxMimeParts: c.smtp.maxMimeParts },
        extract: (raw, limits, traceBytes) => extractor.extract(raw, limits, traceBytes),
        attachmentUrlTtlMs: c.inbound.attachmentUrlTtlMs,
        post: {
          resolver,
          policy: { allowPrivate: c.inbound.allowPrivateTargets },
          timeoutMs: c.inbound.targetTimeoutMs,
          maxRedirects: c.inbound.maxRedirects,
          responseMaxBytes: c.inbound.targetResponseMaxBytes,
          userAgent: `Postroom/${VERSION}`,
          observe: (outcome, seconds) => this.metrics.targetPost(outcome, seconds),
        },
        resolver,
        auth,
        statuses,
        statusRetry,
        localAttachments,
        bounces,
        clock,
        logger,
        diskFull,
        spamd: spamdFor(c.inbound.spamd),
      };
    });
    // Both submission listeners count a client's failed AUTH attempts together.
    const authFailures = new AuthFailures(() => this.current.smtp.authFailures);
    this.listeners = new Listeners({
      config: () => this.current,
      logger,
      tls: this.tls,
      responder,
      make: {
        api: this.handle,
        inbound: (tls) =>
          createInboundServer({
            hostname: config.hostname,
            limits: () => this.current.smtp,
            route: this.routeDeps,
            postDeps: this.postDeps,
            tls,
            budget,
            messageCost: () => inboundMessageCost(extractor.workerCount),
            logger: logger.child({ component: "inbound" }),
            metrics: this.metrics,
          }),
        submission: (implicitTls, tls) =>
          createSubmissionServer({
            config: () => this.current,
            registry,
            limiter: repos.rateLimits.calls,
            clock,
            send,
            tls,
            implicitTls,
            budget,
            logger: logger.child({ component: implicitTls ? "submission-tls" : "submission" }),
            authFailures,
          }),
      },
    });
    this.retention = new RetentionPurge({
      ...repos.retention,
      clock,
      logger: logger.child({ component: "retention" }),
      settings: () => this.current.retention,
    });
    this.scheduler = scheduleAppJobs(
      {
        config,
        sharedAttachments: repos.engine === "postgres",
        leases: repos.jobLeases,
        clock,
        logger: logger.child({ component: "jobs" }),
        onRun: (job) => this.metrics.jobRun(job),
      },
      {
        verifySendingDomains: () => this.domains.verifyDue(),
        purgeAttachments: async () => localAttachments.purgeExpired(clock.nowMs()),
        retentionPurge: () => this.retention.run(),
        checkCertificate: () => this.tls.check(),
        reloadStoredCertificate: () => this.tls.reloadStored(),
      },
    );
  }

  static async start(opts: AppOptions): Promise<App> {
    const lock = lockDataDir(opts.config.dataDir);
    const logger = opts.logger ?? createLogger({ level: opts.config.log.level });
    const clock = opts.clock ?? systemClock;
    const diskFull = new DiskFullLog(logger);
    let app: App | null = null;
    let repos: Repos | null = null;
    try {
      repos = await openRepos(opts.config, logger, {
        clock,
        onEvents: () => app?.webhooks.kick(),
        // Tried again every 100 ms: a full disk is reported once a minute, not ten times a second.
        onStatusStoreFailed: (err) =>
          isDiskFull(err)
            ? diskFull.report("incoming statuses", err)
            : logger.error("incoming statuses could not be stored; they stay journaled and are tried again", { err }),
      });
      app = new App({ ...opts, logger, clock, diskFull }, lock, repos);
    } catch (err) {
      await repos?.close();
      lock.release();
      throw err;
    }
    try {
      await app.listen();
    } catch (err) {
      await app.stop();
      throw err;
    }
    app.logger.info("postroom started", { version: VERSION, hostname: app.config.hostname, accounts: app.config.accounts.length });
    return app;
  }

  private async listen(): Promise<void> {
    await this.repos.followSendingDomains(this.domains);
    await this.delivery.start();
    this.webhooks.start();
    await this.tls.start();
    await this.listeners.start();
  }

  /** The SQLite store (tests reach its tables); there is none on PostgreSQL. */
  get store(): Store {
    if (this.repos.engine !== "sqlite") throw new Error("the store is PostgreSQL: App.store is SQLite's");
    return (this.repos as SqliteRepos).store;
  }

  get config(): Config {
    return this.current;
  }

  get httpPort(): number | null {
    return this.listeners.port("http");
  }
  get inboundPort(): number | null {
    return this.listeners.port("inbound");
  }
  get submissionPort(): number | null {
    return this.listeners.port("submission");
  }
  get submissionTlsPort(): number | null {
    return this.listeners.port("submissionTls");
  }
  get challengePort(): number | null {
    return this.listeners.port("challenges");
  }

  /**
   * Applies a new config without dropping connections: accounts, credentials and limits
   * take effect at once; listener addresses and data_dir need a restart (logged).
   */
  reload(next: Config): void {
    const needRestart = restartNeededFor(this.current, next);
    this.registry.replace(next.accounts);
    this.current = next;
    this.logger.info("config reloaded", {
      accounts: next.accounts.length,
      restart_needed_for: needRestart.length ? needRestart : undefined,
    });
  }

  health(): HealthReport {
    const warnings = tlsHealthWarnings(this.tls.status(), this.current.tls.expiryWarningMs, this.clock.nowMs());
    return healthReport(this.repos, this.listeners.checks(), warnings, Date.now());
  }

  async stop(): Promise<void> {
    await this.scheduler.stop();
    await this.retention.stop();
    await this.delivery.stop();
    await this.webhooks.stop();
    await this.listeners.stop();
    await this.statusRetry.close();
    await this.extractor.close();
    this.domains.close();
    await this.repos.close();
    this.dataDirLock.release();
    this.logger.info("postroom stopped");
  }
}
