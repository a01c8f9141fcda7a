// The appliance as one object: built from a validated Config, started, reloaded and
// stopped as a whole, so a test can run a complete Postroom on ephemeral ports in a
// temp dir. Nothing here reads global state: config, clock, resolver and logger come in.
import { readFileSync } from "node:fs";
import type { SMTPServer } from "smtp-server";
import type { HealthReport } from "./api/deps.ts";
import { buildElysiaApp } from "./api/elysia-app.ts";
import { bodyLimitFor, createApiHandler, type ApiHandler } from "./api/front.ts";
import { AccountRegistry } from "./auth/accounts.ts";
import type { Config } from "./config/config.ts";
import { LocalAttachmentStore } from "./inbound/attachment-files.ts";
import { AuthChecker } from "./inbound/auth-checks.ts";
import { ExtractPool } from "./inbound/extract-pool.ts";
import { createAddressRepo } from "./inbound/addresses.repo.ts";
import type { BounceHandler } from "./inbound/bounce-hook.ts";
import { createCustomDomainRepo } from "./inbound/custom-domains.repo.ts";
import type { DeliverDeps } from "./inbound/deliver-message.ts";
import { createInboundServer } from "./inbound/smtp-listener.ts";
import { closeSmtp, listenSmtp } from "./lib/smtp-listen.ts";
import { createSubmissionServer } from "./outbound/submission-listener.ts";
import type { RouteDeps } from "./inbound/route.ts";
import { createStatusRepo, type StatusRepo } from "./inbound/statuses.repo.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { createResolver, type DnsResolver } from "./lib/dns.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import { RateLimiter } from "./lib/rate-limit.ts";
import { loadOrCreateKey } from "./lib/secret-key.ts";
import { MessageBlobs } from "./outbound/blobs.ts";
import { bounceHandler } from "./outbound/bounce-handler.ts";
import { copyPreparer } from "./outbound/prepare.ts";
import { createSuppressionRepo } from "./outbound/suppressions.repo.ts";
import { createOutboundRepo } from "./outbound/outbound.repo.ts";
import type { SendDeps } from "./outbound/send.ts";
import { senderDomains } from "./domains/sender-domains.ts";
import { createSendingDomainRepo } from "./domains/sending-domains.repo.ts";
import { DomainService } from "./domains/service.ts";
import { WebhookDispatcher } from "./events/dispatcher.ts";
import { createOutboxRepo } from "./events/outbox.repo.ts";
import { Scheduler } from "./jobs/scheduler.ts";
import { DeliveryWorker } from "./outbound/worker.ts";
import { openStore, type Store } from "./store/store.ts";
import { VERSION } from "./version.ts";

export interface AppOptions {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  resolver?: DnsResolver;
  /** Mail to our bounce addresses; by default the outbound side's handler (tests may replace it). */
  bounces?: BounceHandler;
}


function tlsFiles(config: Config): { key: string; cert: string } | null {
  if (config.tls.mode !== "files") return null;
  return { key: readFileSync(config.tls.keyFile, "utf8"), cert: readFileSync(config.tls.certFile, "utf8") };
}

export class App {
  private current: Config;
  private readonly scheduler: Scheduler;
  /** Sending domains (tests run the verifier's due checks through it). */
  readonly domains: DomainService;
  private http: ReturnType<typeof Bun.serve> | null = null;
  private inbound: SMTPServer | null = null;
  private submission: SMTPServer | null = null;
  private submissionTls: SMTPServer | null = null;
  private ports: { http: number | null; inbound: number | null; submission: number | null; submissionTls: number | null } = { http: null, inbound: null, submission: null, submissionTls: null };
  private readonly send: SendDeps;
  /** The API as a function, for in-process tests (no socket). */
  readonly handle: ApiHandler;
  /** The API's route table (method and path pattern), for guard tests and docs. */
  readonly routes: readonly { method: string; path: string }[];
  readonly registry: AccountRegistry;
  readonly store: Store;
  readonly logger: Logger;
  private readonly clock: Clock;
  private readonly deliverDeps: () => DeliverDeps;
  private readonly routeDeps: () => RouteDeps;
  private readonly statuses: StatusRepo;
  private readonly extractor: ExtractPool;
  private readonly limiter = new RateLimiter();
  /** The outgoing queue's worker (tests kick it after moving their clock). */
  readonly delivery: DeliveryWorker;
  /** Posts message events to webhooks (tests kick it after moving their clock). */
  readonly webhooks: WebhookDispatcher;

  private constructor(private readonly opts: AppOptions) {
    const config = (this.current = opts.config);
    const logger = (this.logger = opts.logger ?? createLogger({ level: config.log.level }));
    const clock = (this.clock = opts.clock ?? systemClock);
    const resolver = opts.resolver ?? createResolver({ servers: config.dns.servers });
    const store = (this.store = openStore(config.dataDir));
    const registry = (this.registry = AccountRegistry.fromConfig(config));
    const addresses = createAddressRepo(store);
    const customDomains = createCustomDomainRepo(store);
    const statuses = (this.statuses = createStatusRepo(store));
    const localAttachments = new LocalAttachmentStore(config.dataDir, loadOrCreateKey(config.dataDir, "url-signing"), () => this.current.http.publicUrl);
    const auth = new AuthChecker(resolver);
    const extractor = (this.extractor = new ExtractPool(config.inbound.parseWorkers, logger.child({ component: "extract" })));
    const outbound = createOutboundRepo(store, () => this.webhooks?.kick());
    const bounces = opts.bounces ?? bounceHandler({ repo: outbound, clock, logger: logger.child({ component: "bounces" }) });
    const blobs = new MessageBlobs(config.dataDir);
    const suppressions = createSuppressionRepo(store);
    const sendingDomains = createSendingDomainRepo(store);
    this.domains = new DomainService({ repo: sendingDomains, resolver, clock, logger: logger.child({ component: "domains" }), config: () => this.current, encryptionKey: loadOrCreateKey(config.dataDir, "dkim") });
    const domains = senderDomains(this.domains);
    const trackingKey = loadOrCreateKey(config.dataDir, "tracking");
    const preparer = copyPreparer({ domains, publicUrl: () => this.current.http.publicUrl, trackingKey });
    this.delivery = new DeliveryWorker({ repo: outbound, blobs, resolver, clock, logger: logger.child({ component: "delivery" }), config: () => this.current, ...preparer });
    const suppressed = (outboundId: string, emails: readonly string[]) => suppressions.suppressedAmong(outboundId, emails);
    this.webhooks = new WebhookDispatcher({
      repo: createOutboxRepo(store),
      registry,
      resolver,
      clock,
      logger: logger.child({ component: "webhooks" }),
      config: () => this.current,
      userAgent: `Postroom/${VERSION}`,
    });
    const send: SendDeps = (this.send = { repo: outbound, blobs, clock, domains, suppressed, config: () => this.current, notify: () => this.delivery.kick() });

    const apiDeps = { config: () => this.current, registry, clock, logger, resolver, addresses, customDomains, statuses, localAttachments, outbound, send, sendingDomains, domains: this.domains, suppressions, trackingKey, health: () => this.health() };
    const elysia = buildElysiaApp(apiDeps, VERSION);
    this.handle = createApiHandler(apiDeps, elysia, this.limiter);
    this.routes = elysia.routes.map((r) => ({ method: r.method, path: r.path }));
    this.routeDeps = () => ({ inboundDomain: this.current.inbound.domain, bounceHost: this.current.outbound.bounceHost, addresses, customDomains, bounces });
    this.deliverDeps = () => {
      const c = this.current;
      return {
        hostname: c.hostname,
        limits: { maxHeaderBytes: c.smtp.maxHeaderBytes, maxMimeDepth: c.smtp.maxMimeDepth, maxMimeParts: c.smtp.maxMimeParts },
        extract: (raw, limits) => extractor.extract(raw, limits),
        attachmentUrlTtlMs: c.inbound.attachmentUrlTtlMs,
        post: {
          resolver,
          policy: { allowPrivate: c.inbound.allowPrivateTargets },
          timeoutMs: c.inbound.targetTimeoutMs,
          maxRedirects: c.inbound.maxRedirects,
          responseMaxBytes: c.inbound.targetResponseMaxBytes,
          userAgent: `Postroom/${VERSION}`,
        },
        resolver,
        auth,
        statuses,
        localAttachments,
        bounces,
        clock,
        logger,
      };
    };
    this.scheduler = new Scheduler(logger.child({ component: "jobs" }));
    this.scheduler.every("verify-sending-domains", "0 * * * * *", () => this.domains.verifyDue());
    this.scheduler.every("purge-attachments", "0 17 * * * *", async () => localAttachments.purgeExpired(clock.nowMs()));
  }

  static async start(opts: AppOptions): Promise<App> {
    const app = new App(opts);
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
    const config = this.current;
    await this.delivery.start();
    this.webhooks.start();
    if (config.http.listen) {
      const handle = this.handle;
      this.http = Bun.serve({
        hostname: config.http.listen.host,
        port: config.http.listen.port,
        // A backstop only: the API front refuses oversized bodies with its own 413 first.
        maxRequestBodySize: bodyLimitFor("smtpAuth", config) + 1024 * 1024,
        fetch: (req, srv) => handle(req, srv.requestIP(req)?.address),
      });
      this.ports.http = this.http.port ?? null;
      this.logger.info("http listening", { address: config.http.listen.host, port: this.ports.http });
    }
    if (config.smtp.inboundListen) {
      this.inbound = createInboundServer({
        hostname: config.hostname,
        limits: () => this.current.smtp,
        route: this.routeDeps,
        deliver: this.deliverDeps,
        tls: tlsFiles(config),
        logger: this.logger.child({ component: "inbound" }),
      });
      this.ports.inbound = await listenSmtp(this.inbound, config.smtp.inboundListen);
      this.logger.info("inbound smtp listening", { address: config.smtp.inboundListen.host, port: this.ports.inbound, starttls: config.tls.mode === "files" });
    }
    for (const implicitTls of [false, true]) {
      const at = implicitTls ? config.smtp.submissionTlsListen : config.smtp.submissionListen;
      if (!at) continue;
      const server = createSubmissionServer({
        config: () => this.current,
        registry: this.registry,
        limiter: this.limiter,
        clock: this.clock,
        send: this.send,
        tls: tlsFiles(config),
        implicitTls,
        logger: this.logger.child({ component: implicitTls ? "submission-tls" : "submission" }),
      });
      const port = await listenSmtp(server, at);
      if (implicitTls) [this.submissionTls, this.ports.submissionTls] = [server, port];
      else [this.submission, this.ports.submission] = [server, port];
      this.logger.info("submission smtp listening", { address: at.host, port, implicit_tls: implicitTls });
    }
  }

  get config(): Config {
    return this.current;
  }

  get httpPort(): number | null {
    return this.ports.http;
  }

  get inboundPort(): number | null {
    return this.ports.inbound;
  }

  get submissionPort(): number | null {
    return this.ports.submission;
  }

  get submissionTlsPort(): number | null {
    return this.ports.submissionTls;
  }

  /**
   * Applies a new config without dropping connections: accounts, credentials and limits
   * take effect at once; listener addresses and data_dir need a restart (logged).
   */
  reload(next: Config): void {
    const needRestart: string[] = [];
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (!same(next.http.listen, this.current.http.listen)) needRestart.push("http.listen");
    for (const key of ["inboundListen", "submissionListen", "submissionTlsListen"] as const) {
      if (!same(next.smtp[key], this.current.smtp[key])) needRestart.push(`smtp.${key}`);
    }
    if (next.dataDir !== this.current.dataDir) needRestart.push("data_dir");
    if (!same(next.tls, this.current.tls)) needRestart.push("tls");
    this.registry.replace(next.accounts);
    this.current = next;
    this.logger.info("config reloaded", { accounts: next.accounts.length, restart_needed_for: needRestart.length ? needRestart : undefined });
  }

  health(): HealthReport {
    const checks: Record<string, string> = {};
    try {
      this.store.checkWritable(Date.now());
      checks.store = "ok";
    } catch (err) {
      checks.store = `not writable: ${(err as Error).message}`;
    }
    if (this.current.http.listen) checks.http = this.http ? "ok" : "down";
    if (this.current.smtp.inboundListen) checks.smtp_inbound = this.inbound?.server.listening ? "ok" : "down";
    if (this.current.smtp.submissionListen) checks.smtp_submission = this.submission?.server.listening ? "ok" : "down";
    if (this.current.smtp.submissionTlsListen) checks.smtp_submission_tls = this.submissionTls?.server.listening ? "ok" : "down";
    return { ok: Object.values(checks).every((v) => v === "ok"), checks };
  }

  async stop(): Promise<void> {
    this.scheduler.stop();
    await this.delivery.stop();
    await this.webhooks.stop();
    await Promise.all([this.inbound, this.submission, this.submissionTls].map((s) => s && closeSmtp(s)));
    this.inbound = this.submission = this.submissionTls = null;
    await this.http?.stop(true);
    this.http = null;
    await this.extractor.close();
    await this.statuses.flush();
    this.store.close();
    this.logger.info("postroom stopped");
  }
}
