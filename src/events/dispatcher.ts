// Posts message events to each outbound account's webhook (or its account's): batches of
// up to 100 in event order, one batch in flight per outbound account (so events of a
// message never overtake each other), retried with backoff until a 2xx or until they
// expire. Each POST carries the Bearer token and Standard Webhooks signature headers, and
// passes the egress guard.
import { Webhook } from "standardwebhooks";
import type { AccountRegistry } from "../auth/accounts.ts";
import type { Config, WebhookConfig } from "../config/config.ts";
import { isoTime, type Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import { guardedFetch, readBodyPrefix } from "../lib/egress-fetch.ts";
import type { Logger } from "../lib/logger.ts";
import type { Batch, OutboxRepo } from "./outbox.repo.ts";
import type { WebhookBody, WebhookEvent } from "./event-schema.ts";
import { WakeTimer } from "../lib/wake-timer.ts";
import { retryAfterMs, webhookRetryAt } from "./webhook-schedule.ts";

export interface DispatcherDeps {
  repo: OutboxRepo;
  registry: AccountRegistry;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  config(): Config;
  userAgent: string;
  /** Counts expired events (metrics). */
  onExpired?(count: number): void;
  /** Counts POSTs by result: the answer's status, or none and whether it timed out (metrics). */
  onPosted?(status: number | null, timedOut: boolean): void;
}

const IDLE_POLL_MS = 1000;
/**
 * How long a new event waits for company before its batch is posted: during a burst this
 * turns one POST per event into one per window, at a cost of this much latency.
 */
export const BATCH_WINDOW_MS = 25;
/** Expiry is a scan of the backlog's age index; once a minute is enough for a 3-day limit. */
const EXPIRE_INTERVAL_MS = 60_000;

export function webhookBody(batch: Batch): string {
  const body: WebhookBody = {
    events: batch.events.map((e) => ({
      id: e.id,
      // Only lifecycle kinds reach the outbox (internal kinds are never posted).
      kind: e.kind as WebhookEvent["kind"],
      recipient: e.recipient,
      message_id: e.messageId,
      outbound_account_id: e.outboundAccountId,
      created_at: isoTime(e.createdAtMs),
      details: e.details,
    })),
  };
  return JSON.stringify(body);
}

export class WebhookDispatcher {
  private readonly inFlight = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly timer = new WakeTimer(() => void this.tick());
  private stopping = false;
  private ticking = false;
  /** A wake-up arrived during a tick: tick again right after it. */
  private again = false;
  private lastExpireMs = -Infinity;

  constructor(private readonly deps: DispatcherDeps) {}

  start(): void {
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
  }

  /** The webhook for an outbound account: its own, else its account's. */
  private webhookFor(outboundAccountId: string): WebhookConfig | null {
    const found = this.deps.registry.outbound(outboundAccountId);
    return found ? (found.outbound.webhook ?? found.account.webhook) : null;
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
      for (const { outboundAccountId, dueMs } of await this.deps.repo.pendingTargets()) {
        if (this.inFlight.has(outboundAccountId)) continue;
        if (dueMs > now) {
          nextWake = Math.min(nextWake, dueMs - now);
          continue;
        }
        const webhook = this.webhookFor(outboundAccountId);
        if (!webhook) {
          const dropped = await this.deps.repo.drop(outboundAccountId);
          if (dropped > 0) this.deps.logger.info("events not posted: no webhook configured", { outbound_account_id: outboundAccountId, count: dropped });
          continue;
        }
        const batch = await this.deps.repo.takeBatch(outboundAccountId, now, this.deps.config().webhooks.batchSize);
        if (!batch) continue;
        this.inFlight.add(outboundAccountId);
        const run = this.post(webhook, batch).finally(() => {
          this.inFlight.delete(outboundAccountId);
          this.running.delete(run);
          // What piled up during the POST is due now: no extra batch window.
          this.wake(0);
        });
        this.running.add(run);
      }
    } catch (err) {
      this.deps.logger.error("webhook dispatcher tick failed", { err });
    } finally {
      this.ticking = false;
    }
    this.wake(this.again ? 0 : Math.max(0, nextWake));
  }

  private async post(webhook: WebhookConfig, batch: Batch): Promise<void> {
    const c = this.deps.config().webhooks;
    const body = webhookBody(batch);
    const now = this.deps.clock.nowMs();
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": this.deps.userAgent,
      authorization: `Bearer ${webhook.token}`,
      "webhook-id": batch.id,
      "webhook-timestamp": String(Math.floor(now / 1000)),
    };
    if (webhook.signingSecret) headers["webhook-signature"] = new Webhook(webhook.signingSecret).sign(batch.id, new Date(now), body);
    let status: number | null = null;
    let retryAfter: number | null = null;
    let problem = "";
    let timedOut = false;
    try {
      const { response } = await guardedFetch(
        { url: webhook.url, method: "POST", headers, body, maxRedirects: 0, signal: AbortSignal.timeout(c.timeoutMs) },
        { resolver: this.deps.resolver, policy: { allowPrivate: c.allowPrivate } },
      );
      status = response.status;
      retryAfter = retryAfterMs(response.headers.get("retry-after"), now);
      problem = status >= 200 && status < 300 ? "" : (await readBodyPrefix(response, 512)).slice(0, 200);
    } catch (err) {
      timedOut = (err as Error).name === "TimeoutError";
      problem = timedOut ? `no answer within ${c.timeoutMs} ms` : (err as Error).message;
    }
    this.deps.onPosted?.(status, timedOut);
    if (status !== null && status >= 200 && status < 300) {
      await this.deps.repo.acknowledge(batch.id);
      return;
    }
    const attempts = batch.attempts + 1;
    const at = webhookRetryAt(attempts, this.deps.clock.nowMs(), c.retryDelaysMs, retryAfter);
    await this.deps.repo.retryLater(batch.id, at);
    this.deps.logger.warn("webhook post failed; will retry", { url: new URL(webhook.url).origin, status, problem, batch: batch.id, events: batch.events.length, attempt: attempts, retry_at: isoTime(at) });
  }
}
