// The appliance as one object: built from a validated Config, started, reloaded and
// stopped as a whole, so a test can run a complete Postroom on ephemeral ports in a
// temp dir. Nothing here reads global state: config, clock, resolver and logger come in.
import { buildElysiaApp } from "./api/elysia-app.ts";
import type { HealthReport } from "./api/deps.ts";
import { bodyLimitFor, createApiHandler, type ApiHandler } from "./api/front.ts";
import { AccountRegistry } from "./auth/accounts.ts";
import type { Config } from "./config/config.ts";
import { createAddressRepo } from "./inbound/addresses.repo.ts";
import { createCustomDomainRepo } from "./inbound/custom-domains.repo.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { createResolver, type DnsResolver } from "./lib/dns.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import { openStore, type Store } from "./store/store.ts";
import { VERSION } from "./version.ts";

export interface AppOptions {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  resolver?: DnsResolver;
}

export class App {
  private constructor(
    private current: Config,
    readonly store: Store,
    readonly registry: AccountRegistry,
    readonly logger: Logger,
    /** The API as a function, for in-process tests (no socket). */
    readonly handle: ApiHandler,
    /** The API's route table (method and path pattern), for guard tests and docs. */
    readonly routes: readonly { method: string; path: string }[],
    private server: ReturnType<typeof Bun.serve> | null,
  ) {}

  static async start(opts: AppOptions): Promise<App> {
    const config = opts.config;
    const logger = opts.logger ?? createLogger({ level: config.log.level });
    const clock = opts.clock ?? systemClock;
    const resolver = opts.resolver ?? createResolver({ servers: config.dns.servers });
    const store = openStore(config.dataDir);
    const registry = AccountRegistry.fromConfig(config);
    let app: App | null = null;
    const deps = {
      config: () => app?.config ?? config,
      registry,
      clock,
      logger,
      resolver,
      addresses: createAddressRepo(store),
      customDomains: createCustomDomainRepo(store),
      health: (): HealthReport => app?.health() ?? { ok: false, checks: { app: "starting" } },
    };
    const elysia = buildElysiaApp(deps, VERSION);
    const handle = createApiHandler(deps, elysia);
    const routes = elysia.routes.map((r) => ({ method: r.method, path: r.path }));
    let server: ReturnType<typeof Bun.serve> | null = null;
    try {
      if (config.http.listen) {
        server = Bun.serve({
          hostname: config.http.listen.host,
          port: config.http.listen.port,
          // A backstop only: the API front refuses oversized bodies with its own 413 first.
          maxRequestBodySize: bodyLimitFor("smtpAuth", config) + 1024 * 1024,
          fetch: (req, srv) => handle(req, srv.requestIP(req)?.address),
        });
        logger.info("http listening", { address: config.http.listen.host, port: server.port });
      }
    } catch (err) {
      store.close();
      throw err;
    }
    app = new App(config, store, registry, logger, handle, routes, server);
    logger.info("postroom started", { version: VERSION, hostname: config.hostname, accounts: config.accounts.length });
    return app;
  }

  get config(): Config {
    return this.current;
  }

  get httpPort(): number | null {
    return this.server?.port ?? null;
  }

  /**
   * Applies a new config without dropping connections: accounts, credentials and limits
   * take effect at once; listener addresses and data_dir need a restart (logged).
   */
  reload(next: Config): void {
    const needRestart: string[] = [];
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (!same(next.http.listen, this.current.http.listen)) needRestart.push("http.listen");
    if (!same(next.smtp, this.current.smtp)) needRestart.push("smtp");
    if (next.dataDir !== this.current.dataDir) needRestart.push("data_dir");
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
    if (this.current.http.listen) checks.http = this.server ? "ok" : "down";
    return { ok: Object.values(checks).every((v) => v === "ok"), checks };
  }

  async stop(): Promise<void> {
    await this.server?.stop(true);
    this.server = null;
    this.store.close();
    this.logger.info("postroom stopped");
  }
}
