// Keeps this node's account registry in step with the accounts in the store: reloads them
// when tenant_version moves (polled every TENANT_POLL_MS, so a change made on another node
// is seen within a second even when its notice was lost) or when PostgreSQL announces a
// change (at once). The node that makes a change reloads before it answers, so a revoked
// token or a suspended account is refused there immediately. Also writes the tokens'
// last_used_at, gathered in memory between two polls rather than one write per call.
import { FailureStreak } from "../lib/failure-streak.ts";
import type { Logger } from "../lib/logger.ts";
import type { AccountRegistry } from "./accounts.ts";
import type { TenantRepo } from "./tenants.port.ts";

/** How often the version is read: under half the second API.md allows for every node to see a change. */
export const TENANT_POLL_MS = 400;

export interface TenantSyncDeps {
  repo: TenantRepo;
  registry: AccountRegistry;
  logger: Logger;
  /** Hears another node's change at once (PostgreSQL LISTEN); SQLite has none to hear. */
  follow(onChange: () => void): Promise<void>;
  pollMs?: number;
}

export class TenantSync {
  private known = -1;
  /** The reloads, one after another. */
  private queue: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** Reloads that failed in a row (the store is away): logged once, not once per poll. */
  private readonly failures: FailureStreak;

  constructor(private readonly deps: TenantSyncDeps) {
    this.failures = new FailureStreak(deps.logger, "warn", "accounts in the store could not be reloaded; trying again");
  }

  async start(): Promise<void> {
    await this.refresh();
    await this.deps.follow(() => void this.refresh().catch((err) => this.failed(err)));
    this.timer = setInterval(() => void this.tick().catch((err) => this.failed(err)), this.deps.pollMs ?? TENANT_POLL_MS);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.queue;
    await this.flushUses().catch((err) => this.failed(err));
  }

  /** Reloads the stored accounts now, after any reload under way (so it sees every change committed before the call). */
  refresh(): Promise<void> {
    const next = this.queue.then(async () => {
      const version = await this.deps.repo.version();
      this.deps.registry.replaceStored(await this.deps.repo.loadAll());
      this.known = version;
    });
    this.queue = next.catch(() => {});
    return next;
  }

  private async tick(): Promise<void> {
    await this.flushUses();
    if ((await this.deps.repo.version()) !== this.known) await this.refresh();
    this.failures.succeeded();
  }

  private async flushUses(): Promise<void> {
    const used = this.deps.registry.takeUses();
    if (used.size > 0) await this.deps.repo.touchTokens(used);
  }

  private failed(err: unknown): void {
    this.failures.failed(err);
  }
}
