// The appliance as one object: built from a validated Config, started, reloaded and
// stopped as a whole, so a test can run a complete Postroom on ephemeral ports in a
// temp dir. Nothing here reads global state: config, clock, resolver and logger come in.
// It composes the features (each folder's feature.ts says what it starts, stops, schedules
// and serves): open the repositories, build each feature from what it needs, start them in
// order, stop them in reverse. docs/architecture.md draws the whole.
import type { HealthReport } from "./api/deps.ts";
import { healthReport } from "./api/health.ts";
import { AccountRegistry } from "./auth/accounts.ts";
import { tenantsFeature } from "./auth/feature.ts";
import type { Config } from "./config/config.ts";
import { restartNeededFor } from "./config/reload.ts";
import { dashboardDeps } from "./dashboard/routes.ts";
import { type DeliverabilityFeature, deliverabilityFeature } from "./deliverability/feature.ts";
import type { DomainService } from "./domains/service.ts";
import { domainsFeature } from "./domains/feature.ts";
import type { SendingDomainCaches } from "./domains/sending-domains.port.ts";
import type { WebhookDispatcher } from "./events/dispatcher.ts";
import { eventsFeature } from "./events/feature.ts";
import { type HttpHandler, serveHttp } from "./http/serve.ts";
import { inboundFeature } from "./inbound/feature.ts";
import { jobsFeature } from "./jobs/feature.ts";
import type { RetentionPurge } from "./jobs/retention-purge.ts";
import { type Clock, systemClock } from "./lib/clock.ts";
import { DiskFullLog, isDiskFull } from "./lib/disk-full.ts";
import { createResolver, type DnsResolver } from "./lib/dns.ts";
import type { Feature } from "./lib/feature.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import { type BudgetListener, budgetOfLimits, type MemoryBudget } from "./lib/memory-budget.ts";
import { loadOrCreateKey } from "./lib/secret-key.ts";
import { Listeners } from "./listeners.ts";
import { dashboardPages, metricsDeps, routeRepos } from "./app-wiring.ts";
import { createMetrics, type Metrics } from "./metrics/metrics.ts";
import type { BounceHandler } from "./outbound/bounces/bounce-hook.ts";
import type { DeliveryWorker } from "./outbound/delivery/worker.ts";
import { outboundFeature } from "./outbound/feature.ts";
import { openRepos } from "./repos/open.ts";
import type { Repos } from "./repos/repos.ts";
import type { SqliteRepos } from "./repos/sqlite.ts";
import { buildRouter } from "./router.ts";
import { type DataDirLock, lockDataDir } from "./store/data-dir-lock.ts";
import type { Store } from "./store/store.ts";
import { tlsFeature } from "./tls/feature.ts";
import { tlsHealthWarnings } from "./tls/health-warnings.ts";
import type { TlsManager } from "./tls/manager.ts";
import { startLineFields } from "./start-line.ts";
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
  /** Sending domains (tests run the verifier's due checks through it). */
  readonly domains: DomainService;
  /** The certificate of every listener (tests force renewals through it). */
  readonly tls: TlsManager;
  /** The API as a function, for in-process tests (no socket). */
  readonly handle: HttpHandler;
  /** The API's route table (method and path pattern), for guard tests and docs. */
  readonly routes: readonly { method: string; path: string }[];
  readonly registry: AccountRegistry;
  readonly logger: Logger;
  /** The outgoing queue's worker (tests kick it after moving their clock). */
  readonly delivery: DeliveryWorker;
  /** Posts message events to webhooks (tests kick it after moving their clock). */
  readonly webhooks: WebhookDispatcher;
  /** Deletes what is older than its retention (tests run it after moving their clock). */
  readonly retention: RetentionPurge;
  /** Memory held by mail in flight (limits.mail_in_flight), shared by every listener and E11. */
  readonly budget: MemoryBudget;
  private readonly clock: Clock;
  private readonly metrics: Metrics;
  /** The sending IPs' health and the complaint rates (tests run a check through it). */
  readonly deliverability: DeliverabilityFeature;
  private readonly listeners: Listeners;
  /** In the order they start; they stop in reverse. */
  private readonly features: readonly Feature[];

  private constructor(
    opts: AppOptions & { logger: Logger; clock: Clock; diskFull: DiskFullLog },
    private readonly dataDirLock: DataDirLock,
    /** Every repository, on the engine store.url names. */
    readonly repos: Repos,
  ) {
    const config = (this.current = opts.config);
    const current = () => this.current;
    const { logger, clock, diskFull } = opts;
    this.logger = logger;
    this.clock = clock;
    const refused = (listener: BudgetListener) => this.metrics.memoryRefusal(listener);
    const budget = (this.budget = budgetOfLimits(() => this.current.limits, { refused }));
    const resolver = opts.resolver ?? createResolver({ servers: config.dns.servers });
    const registry = (this.registry = AccountRegistry.fromConfig(config));
    const nodeId = config.cluster.nodeId;
    const key = (name: string) => loadOrCreateKey(config.dataDir, name);
    const trackingKey = key("tracking");

    // What most features take; each declares the part it uses.
    const common = { config: current, clock, resolver, logger, registry, budget, diskFull };
    const tenants = tenantsFeature({ ...common, repo: repos.tenants, follow: (onChange) => repos.followTenants(onChange) });
    const tls = tlsFeature({ ...common, store: repos.tls });
    this.tls = tls.manager;
    const deliverability = (this.deliverability = deliverabilityFeature({ ...common, repos }));
    const metrics = (this.metrics = createMetrics(
      metricsDeps({ repos, clock, budget, deliverability, nodeId, version: VERSION, tls: () => tls.manager.status(), config: current }),
    ));
    const follow = (caches: SendingDomainCaches) => repos.followSendingDomains(caches);
    const domains = domainsFeature({ ...common, repo: repos.sendingDomains, follow, encryptionKey: key("dkim") });
    this.domains = domains.service;
    const limiter = repos.rateLimits.calls;
    const outbound = outboundFeature({
      ...common,
      repos,
      limiter,
      domains: domains.senders,
      metrics,
      trackingKey,
      listedIps: () => deliverability.sending.listedIps(),
    });
    this.delivery = outbound.delivery;
    const localAttachments = repos.localAttachments({
      key: key("url-signing"),
      publicUrl: () => this.current.http.publicUrl,
      purgeBatchRows: () => this.current.retention.batchSize,
    });
    const sharedAttachments = repos.engine === "postgres";
    const bounces = opts.bounces ?? outbound.bounces;
    const inbound = inboundFeature({ ...common, repos, localAttachments, sharedAttachments, bounces, metrics });
    const events = eventsFeature({
      ...common,
      repo: repos.outbox,
      posts: repos.webhookPosts,
      endpoints: repos.webhookEndpoints,
      userAgent: `Postroom/${VERSION}`,
      onExpired: (count) => metrics.webhookEventsExpired.inc(count),
      onPosted: (status, timedOut) => metrics.webhookPost(status, timedOut),
    });
    this.webhooks = events.webhooks;

    // The HTTP side: the dashboard's sessions and every route, behind one handler.
    const dashboard = dashboardDeps({
      ...common,
      sessions: repos.sessions,
      limiter: repos.rateLimits.dashboard,
      ...dashboardPages({
        repos,
        clock,
        version: VERSION,
        health: () => this.health(),
        tls: () => tls.manager.status(),
        deliverability,
        kick: () => outbound.send.notify(),
        config: current,
      }),
    });
    const { router, apiRoutes, routeOf } = buildRouter({
      ...common,
      metrics,
      trackingKey,
      nodeId,
      version: VERSION,
      health: () => this.health(),
      ...routeRepos(repos),
      localAttachments,
      calls: limiter,
      send: outbound.send,
      domains: domains.service,
      webhooks: events.webhooks,
      testPost: inbound.testPost,
      kept: inbound.kept,
      tenants: tenants.admin,
      deliverability,
      dashboard,
    });
    this.handle = serveHttp({ config: current, logger, metrics, diskFull, handle: (req) => router.handle(req), routeOf });
    this.routes = apiRoutes;
    this.listeners = new Listeners({
      config: current,
      logger,
      tls: tls.manager,
      responder: tls.responder,
      make: { api: this.handle, inbound: inbound.server, submission: outbound.submissionServer },
    });

    const onRun = (job: string) => metrics.jobRun(job);
    const featureJobs = [domains, inbound, outbound, tls, deliverability].flatMap((f) => f.jobs ?? []);
    const jobs = jobsFeature({ ...common, leases: repos.jobLeases, retention: repos.retention, onRun }, featureJobs);
    this.retention = jobs.retention;
    this.features = [tenants, domains, inbound, outbound, events, deliverability, tls, this.listeners, jobs];
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
    app.logger.info("postroom started", startLineFields({ version: VERSION, config: app.config, port: (k) => app.listeners.port(k) }));
    return app;
  }

  /** Starts each feature in order; the listeners come after all they hand mail to, the jobs last. */
  private async listen(): Promise<void> {
    for (const feature of this.features) await feature.start?.();
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
  reload(next: Config, changed: string[] = []): void {
    const needRestart = restartNeededFor(this.current, next);
    const previous = this.current;
    this.registry.replace(next.accounts);
    this.current = next;
    for (const feature of this.features) feature.reloaded?.(previous, next);
    this.logger.info("config reloaded", {
      accounts: next.accounts.length,
      changed,
      restart_needed_for: needRestart.length ? needRestart : undefined,
    });
  }

  health(): HealthReport {
    const warnings = tlsHealthWarnings(this.tls.status(), this.current.tls.expiryWarningMs, this.clock.nowMs());
    warnings.push(...this.deliverability.sending.warnings());
    return healthReport(this.repos, this.listeners.checks(), warnings, Date.now());
  }

  /** Stops each feature in the reverse of their start, then closes the store and frees data_dir. */
  async stop(): Promise<void> {
    for (const feature of this.features.toReversed()) await feature.stop?.();
    await this.repos.close();
    this.dataDirLock.release();
    this.logger.info("postroom stopped");
  }
}
