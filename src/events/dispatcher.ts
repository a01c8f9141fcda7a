// Posts message events to each outbound account's webhook (or its account's) and to each
// of its endpoints (webhook-endpoint.ts), every receiver a target of its own in the outbox
// (outbox.port.ts): batches of up to 100 in event order, one batch in flight per target
// (so events of a message never overtake each other there, and a receiver that is down
// holds only its own events), retried with backoff until a 2xx or until they expire.
// Each POST carries the receiver's Bearer token and Standard Webhooks signature headers,
// and passes the egress guard. A batch is claimed under a lease (webhooks.lease_time), renewed
// by a heartbeat while its POST waits (held-batches.ts), and its outcome is recorded only
// while the lease is still this node's, so nodes sharing one PostgreSQL post each batch
// once, however slow the receiver, and a node that dies mid-POST leaves its batch to
// another when the lease ends (the receiver then gets it again: at least once).
import type { AccountRegistry } from "../auth/accounts.ts";
import { isoTime } from "../lib/clock.ts";
import { FailureStreak } from "../lib/failure-streak.ts";
import type { Logger } from "../lib/logger.ts";
import { WakeTimer } from "../lib/wake-timer.ts";
import type { PageRequest } from "../store/paging.ts";
import { HeldBatches } from "./held-batches.ts";
import { endpointOfTarget, type LeasedBatch, type OutboxRepo } from "./outbox.port.ts";
import type { WebhookEndpointRepo } from "./webhook-endpoints.port.ts";
import { type ExchangeDeps, postTestEvent, postToWebhook, type Receiver, webhookBody } from "./webhook-exchange.ts";
import type { WebhookPost } from "./webhook-post.ts";
import { webhookRetryAt } from "./webhook-schedule.ts";

/** The POST itself, and its deps, are in webhook-exchange.ts. */
export interface DispatcherDeps extends ExchangeDeps {
  repo: OutboxRepo;
  registry: AccountRegistry;
  /** The endpoints made through the API; without it their targets are dropped. */
  endpoints?: Pick<WebhookEndpointRepo, "get">;
  logger: Logger;
  /** Counts expired events (metrics). */
  onExpired?(count: number): void;
}

/** A webhook URL as the dashboard shows it: no credentials, no query (it may carry a token). */
export function shownUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}${u.search ? "?…" : ""}`;
}

const IDLE_POLL_MS = 1000;
/**
 * How long a new event waits for company before its batch is posted: during a burst this
 * turns one POST per event into one per window, at a cost of this much latency.
 */
export const BATCH_WINDOW_MS = 25;
/** Expiry is a scan of the backlog's age index; once a minute is enough for a 3-day limit. */
const EXPIRE_INTERVAL_MS = 60_000;

export class WebhookDispatcher {
  private readonly inFlight = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly timer = new WakeTimer(() => void this.tick());
  /** Ticks that failed in a row (the store is away): logged once, not once per tick. */
  private readonly tickFailures: FailureStreak;
  private stopping = false;
  private ticking = false;
  /** A wake-up arrived during a tick: tick again right after it. */
  private again = false;
  private lastExpireMs = -Infinity;
  /** The batches being posted, their leases renewed by a heartbeat. */
  private readonly held: HeldBatches;

  constructor(private readonly deps: DispatcherDeps) {
    this.held = new HeldBatches(deps.repo, deps.clock, deps.logger, () => deps.config().webhooks.leaseMs);
    this.tickFailures = new FailureStreak(deps.logger, "error", "webhook dispatcher tick failed");
  }

  start(): void {
    this.held.start();
    this.wake(0);
  }

  /** New events were committed: post them within BATCH_WINDOW_MS. */
  kick(): void {
    this.wake(BATCH_WINDOW_MS);
  }

  async idle(): Promise<void> {
    while (this.running.size > 0 || this.ticking) await Promise.all([...this.running, Bun.sleep(1)]);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.timer.cancel();
    await Promise.race([Promise.all(this.running), Bun.sleep(this.deps.config().webhooks.timeoutMs + 1000)]);
    this.held.stop();
  }

  /** The webhook for an outbound account: its own, else its account's. */
  private webhookFor(outboundAccountId: string): Receiver | null {
    const found = this.deps.registry.outbound(outboundAccountId);
    return found ? (found.outbound.webhook ?? found.account.webhook) : null;
  }

  /** Where a target's events go: its endpoint (while it and its outbound account exist), or the outbound account's webhook. */
  private async receiverOf(target: string): Promise<Receiver | null> {
    const endpointId = endpointOfTarget(target);
    if (endpointId === null) return this.webhookFor(target);
    const endpoint = (await this.deps.endpoints?.get(endpointId)) ?? null;
    if (!endpoint || !this.deps.registry.outbound(endpoint.outboundAccountId)) return null;
    return endpoint;
  }

  /** Ticks within `delayMs`; an earlier wake-up already planned stands. */
  private wake(delayMs: number): void {
    if (this.stopping) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.timer.wake(delayMs);
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    this.again = false;
    let nextWake = IDLE_POLL_MS;
    try {
      const now = this.deps.clock.nowMs();
      if (now - this.lastExpireMs >= EXPIRE_INTERVAL_MS || now < this.lastExpireMs) {
        this.lastExpireMs = now;
        const expired = await this.deps.repo.expire(now, this.deps.config().webhooks.maxAgeMs);
        if (expired > 0) {
          this.deps.logger.warn("webhook events expired unacknowledged", { count: expired });
          this.deps.onExpired?.(expired);
        }
      }
      for (const { target, dueMs } of await this.deps.repo.pendingTargets()) {
        if (this.inFlight.has(target)) continue;
        if (dueMs > now) {
          nextWake = Math.min(nextWake, dueMs - now);
          continue;
        }
        const webhook = await this.receiverOf(target);
        if (!webhook) {
          const dropped = await this.deps.repo.drop(target);
          const endpointId = endpointOfTarget(target);
          if (dropped > 0 && endpointId === null)
            this.deps.logger.info("events not posted: no webhook configured", { outbound_account_id: target, count: dropped });
          else if (dropped > 0)
            this.deps.logger.info("events not posted: the webhook endpoint or its outbound account is gone", {
              endpoint_id: endpointId,
              count: dropped,
            });
          continue;
        }
        const { batchSize, leaseMs } = this.deps.config().webhooks;
        const batch = await this.deps.repo.claimBatch(target, now, batchSize, leaseMs);
        if (!batch) continue;
        this.held.add(batch.lease);
        this.inFlight.add(target);
        // Its outcome's write may fail (the store went away during the POST): said here, as
        // nobody awaits the POST; the lease, no longer renewed, ends and the batch goes again.
        const run = this.post(target, webhook, batch)
          .catch((err) => {
            void this.held.release(batch.lease);
            this.deps.logger.error("webhook batch outcome not recorded; it is posted again once its lease ends", {
              err,
              target,
              batch: batch.id,
            });
          })
          .finally(() => {
            this.inFlight.delete(target);
            this.running.delete(run);
            // What piled up during the POST is due now: no extra batch window.
            this.wake(0);
          });
        this.running.add(run);
      }
      this.tickFailures.succeeded();
    } catch (err) {
      this.tickFailures.failed(err);
    } finally {
      this.ticking = false;
    }
    this.wake(this.again ? 0 : Math.max(0, nextWake));
  }

  /**
   * The dashboard's "send a test event" (webhook-exchange.ts). Null when the outbound
   * account has no webhook.
   */
  async testPost(outboundAccountId: string): Promise<WebhookPost | null> {
    const webhook = this.webhookFor(outboundAccountId);
    if (!webhook) return null;
    return postTestEvent(this.deps, webhook, outboundAccountId);
  }

  /** What the dashboard's webhook page shows of an outbound account: its webhook (without secrets), its backlog, its recent POSTs. */
  async overview(outboundAccountId: string, page: PageRequest) {
    const webhook = this.webhookFor(outboundAccountId);
    return {
      webhook: webhook ? { url: shownUrl(webhook.url), signed: webhook.signingSecret !== null } : null,
      pending: await this.deps.repo.pendingOf(outboundAccountId),
      posts: (await this.deps.posts?.list(outboundAccountId, page)) ?? { items: [], hasMore: false },
    };
  }

  /** The dashboard's "retry now": the outbound account's pending events are due at once. Returns how many wait. */
  async retryNow(outboundAccountId: string): Promise<number> {
    // While this node posts the account's batch nothing of it waits for a retry, and making
    // the leased rows due would end the lease: the batch would be posted twice.
    const pending = this.inFlight.has(outboundAccountId)
      ? (await this.deps.repo.pendingOf(outboundAccountId)).events
      : await this.deps.repo.dueNow(outboundAccountId, this.deps.clock.nowMs());
    this.wake(0);
    return pending;
  }

  private async post(target: string, webhook: Receiver, batch: LeasedBatch): Promise<void> {
    const c = this.deps.config().webhooks;
    // The webhook page's list of POSTs is the config webhook's: an endpoint's are logged and counted, not listed there.
    const deps = endpointOfTarget(target) === null ? this.deps : { ...this.deps, posts: undefined };
    const { status, retryAfter, problem } = await postToWebhook(
      deps,
      webhook,
      batch.events[0]!.outboundAccountId,
      batch.id,
      webhookBody(batch),
      batch.events.length,
      false,
    );
    await this.held.release(batch.lease);
    if (status !== null && status >= 200 && status < 300) {
      if (!(await this.deps.repo.finishSent(batch.lease))) await this.leaseLost(target, batch, status);
      return;
    }
    const attempts = batch.attempts + 1;
    const at = webhookRetryAt(attempts, this.deps.clock.nowMs(), c.retryDelaysMs, retryAfter);
    if (!(await this.deps.repo.finishRetry(batch.lease, at))) {
      await this.leaseLost(target, batch, status);
      return;
    }
    this.deps.logger.warn("webhook post failed; will retry", {
      url: new URL(webhook.url).origin,
      target,
      status,
      problem,
      batch: batch.id,
      events: batch.events.length,
      attempt: attempts,
      retry_at: isoTime(at),
    });
  }

  /**
   * The batch is no longer this node's (its lease ran out and another node claimed it, a
   * "retry now" elsewhere ended it, or its events expired): whoever holds it now decides.
   * Only said; the receiver may get or have got the batch again, which at-least-once allows.
   * An endpoint deleted during the POST dropped the batch's events: that is no lost lease.
   */
  private async leaseLost(target: string, batch: LeasedBatch, status: number | null): Promise<void> {
    const endpointId = endpointOfTarget(target);
    if (endpointId !== null && !(await this.deps.endpoints?.get(endpointId))) {
      this.deps.logger.info("webhook endpoint deleted while its batch was posted; its events are dropped", {
        endpoint_id: endpointId,
        batch: batch.id,
        events: batch.events.length,
        status,
      });
      return;
    }
    this.deps.logger.warn("webhook batch lease lost; its outcome is not recorded", {
      batch: batch.id,
      outbound_account_id: batch.events[0]!.outboundAccountId,
      events: batch.events.length,
      status,
      lease_until: isoTime(batch.lease.untilMs),
    });
  }
}
