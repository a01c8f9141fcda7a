// The delivery worker: leases due recipients, groups them by destination domain, and
// delivers each group over one connection, within the global and per-domain concurrency
// limits. Every step is an event; every outcome updates the queue in the same commit.
import { hostname as osHostname } from "node:os";
import type { NewEvent } from "../events/events.repo.ts";
import type { AttemptDetails } from "../events/kinds.ts";
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import { isoTime } from "../lib/clock.ts";
import { randomHex } from "../lib/ids.ts";
import type { Logger } from "../lib/logger.ts";
import { domainOf, parseAddressList } from "./addresses.ts";
import type { MessageBlobs } from "./blobs.ts";
import type { ClaimedRecipient, OutboundMessage, OutboundRepo } from "./outbound.repo.ts";
import { planHops } from "./route.ts";
import { nextRetryAt, retriesExhausted, verdictForReply } from "./schedule.ts";
import { SmtpClient, type TransactionResult } from "./smtp-client.ts";

export interface WorkerDeps {
  repo: OutboundRepo;
  /** A recipient's copy as it goes out: personalised (tracking, unsubscribe) and DKIM-signed. */
  prepare(message: OutboundMessage, recipientId: string, recipient: string, raw: Buffer): Promise<Buffer>;
  /** Whether every recipient gets the same bytes (then one prepared copy serves all). */
  samePerRecipient(message: OutboundMessage): boolean;
  blobs: MessageBlobs;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  config(): Config;
}

/** Recipients given to one connection at most, so one busy domain cannot hold a slot forever. */
const RECIPIENTS_PER_CONNECTION = 50;
const IDLE_POLL_MS = 1000;

/** The envelope sender of a recipient's copy: bounces come back to it and name the recipient. */
export function bounceAddress(message: OutboundMessage, recipientId: string): string {
  const from = parseAddressList(message.from)[0]?.address ?? message.from;
  return `bounces+${message.id}-${recipientId}@mta.${domainOf(from)}`;
}

export class DeliveryWorker {
  /** Host name first: at start-up, leases of this host's earlier (crashed) process are released. */
  private readonly hostPrefix = `${osHostname()}/`;
  private readonly id = `${this.hostPrefix}${process.pid}-${randomHex(4)}`;
  private active = 0;
  private readonly perDomain = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private ticking = false;
  private again = false;
  private stopping = false;

  constructor(private readonly deps: WorkerDeps) {}

  async start(): Promise<void> {
    // A process that died (kill -9, power loss) leaves leases behind; one process delivers
    // per host, so whatever this host held is free again.
    const released = await this.deps.repo.releaseHeldBy(this.hostPrefix);
    if (released > 0) this.deps.logger.info("released recipients leased before a restart", { count: released });
    this.wake(0);
  }

  /** Look for due work now (after an enqueue, or a test moving its clock). */
  kick(): void {
    this.wake(0);
  }

  /** Resolves when nothing is in flight (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.ticking) await Promise.all([...this.running, Bun.sleep(1)]);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    // In-flight attempts finish; anything cut short is taken up again when its lease ends.
    await Promise.race([Promise.all(this.running), Bun.sleep(10_000)]);
  }

  private wake(delayMs: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      await this.claimAndStart();
    } catch (err) {
      this.deps.logger.error("delivery worker tick failed", { err });
    } finally {
      this.ticking = false;
    }
    if (this.again) {
      this.again = false;
      this.wake(0);
    } else {
      const due = await this.deps.repo.nextDueMs().catch(() => null);
      const wait = due === null ? IDLE_POLL_MS : Math.min(IDLE_POLL_MS, Math.max(0, due - this.deps.clock.nowMs()));
      this.wake(wait);
    }
  }

  private async claimAndStart(): Promise<void> {
    const c = this.deps.config().outbound;
    const free = c.concurrency - this.active;
    if (free <= 0) return;
    const busy = [...this.perDomain].filter(([, n]) => n >= c.domainConcurrency).map(([d]) => d);
    const now = this.deps.clock.nowMs();
    const claimed = await this.deps.repo.claimDue(this.id, now, now + c.leaseTimeMs, free * RECIPIENTS_PER_CONNECTION, busy);
    if (claimed.length === 0) return;
    const byDomain = new Map<string, ClaimedRecipient[]>();
    for (const item of claimed) byDomain.set(item.recipient.domain, [...(byDomain.get(item.recipient.domain) ?? []), item]);
    let slots = free;
    const unstarted: string[] = [];
    for (const [domain, items] of byDomain) {
      // Connections for this domain: as many as its recipients need, within both limits.
      const domainSlots = Math.min(c.domainConcurrency - (this.perDomain.get(domain) ?? 0), slots, Math.ceil(items.length / RECIPIENTS_PER_CONNECTION));
      if (domainSlots <= 0) {
        unstarted.push(...items.map((i) => i.recipient.id));
        continue;
      }
      const size = Math.ceil(items.length / domainSlots);
      for (let i = 0; i < items.length; i += size) this.startChunk(domain, items.slice(i, i + size));
      slots -= domainSlots;
    }
    // More domains than free connections: the rest wait for the next free slot.
    await this.deps.repo.release(unstarted);
    this.again = unstarted.length === 0;
  }

  private startChunk(domain: string, items: ClaimedRecipient[]): void {
    this.active++;
    this.perDomain.set(domain, (this.perDomain.get(domain) ?? 0) + 1);
    const run = this.deliverChunk(domain, items)
      .catch((err) => this.deps.logger.error("delivery failed", { err, domain }))
      .finally(() => {
        this.active--;
        const n = (this.perDomain.get(domain) ?? 1) - 1;
        if (n <= 0) this.perDomain.delete(domain);
        else this.perDomain.set(domain, n);
        this.running.delete(run);
        this.kick();
      });
    this.running.add(run);
  }

  private async deliverChunk(domain: string, items: ClaimedRecipient[]): Promise<void> {
    const config = this.deps.config();
    const pending = new Set(items);
    const plan = await planHops(domain, {
      smarthost: config.outbound.smarthost,
      mxPort: config.outbound.mxPort,
      resolver: this.deps.resolver,
      policy: { allowPrivate: config.outbound.allowPrivateMx },
    });
    if (!plan.ok) {
      for (const item of items) await this.settle(item, { code: null, response: plan.reason }, null, plan.permanent);
      return;
    }
    let client: SmtpClient | null = null;
    const problems: string[] = [];
    for await (const ep of plan.endpoints()) {
      if ("refused" in ep) {
        problems.push(ep.refused);
        continue;
      }
      try {
        client = await SmtpClient.open(ep, { heloName: config.hostname, connectTimeoutMs: config.outbound.connectTimeoutMs, commandTimeoutMs: config.outbound.commandTimeoutMs });
        break;
      } catch (err) {
        problems.push(`${ep.host}: ${(err as Error).message}`);
      }
    }
    if (!client) {
      const reason = problems.join("; ") || `no mail server for ${domain} could be reached`;
      for (const item of items) await this.settle(item, { code: null, response: reason }, null, false);
      return;
    }
    const blobs = new Map<string, Buffer>();
    try {
      for (const item of items) {
        pending.delete(item);
        if (!client.usable) {
          await this.settle(item, { code: null, response: "connection to the mail server was lost" }, client.endpoint.host, false);
          continue;
        }
        const attempt = item.recipient.attempts + 1;
        const details: AttemptDetails = { mx: client.endpoint.host, smtp_code: null, smtp_response: null, attempt };
        await this.deps.repo.addEvents(item.recipient.id, "dispatch", [this.event(item, "dispatch", { ...details })]);
        const raw = await this.copyFor(item, blobs);
        const result = await client.send(bounceAddress(item.message, item.recipient.id), item.recipient.email, raw);
        await this.settle(item, result, client.endpoint.host, false);
        if (result.code !== null && result.code >= 400) await client.reset();
      }
    } finally {
      client.close();
      for (const item of pending) await this.settle(item, { code: null, response: "delivery was interrupted" }, null, false);
    }
  }

  /** The bytes for one recipient; read and prepared once per message when all copies are alike. */
  private async copyFor(item: ClaimedRecipient, cache: Map<string, Buffer>): Promise<Buffer> {
    const { message, recipient } = item;
    const shared = this.deps.samePerRecipient(message);
    const cached = shared ? cache.get(message.id) : undefined;
    if (cached) return cached;
    const raw = await this.deps.prepare(message, recipient.id, recipient.email, this.deps.blobs.read(message.blobPath));
    if (shared) cache.set(message.id, raw);
    return raw;
  }

  private event(item: ClaimedRecipient, kind: NewEvent["kind"], details: Record<string, unknown>): NewEvent {
    return { messageId: item.message.id, recipientId: item.recipient.id, kind, details, createdAtMs: this.deps.clock.nowMs() };
  }

  /** Records the outcome of one attempt (or of a decision made without one). */
  private async settle(item: ClaimedRecipient, result: TransactionResult, mx: string | null, permanentWithoutReply: boolean): Promise<void> {
    const c = this.deps.config().outbound;
    const now = this.deps.clock.nowMs();
    const r = item.recipient;
    const attempts = r.attempts + 1;
    const firstAttemptAtMs = r.firstAttemptAtMs ?? now;
    const details: AttemptDetails = { mx, smtp_code: result.code, smtp_response: result.response, attempt: attempts };
    const verdict = permanentWithoutReply ? "bounce" : verdictForReply(result.code);
    const base = { attempts, firstAttemptAtMs, nextAttemptAtMs: now };
    if (verdict === "delivered") {
      await this.deps.repo.update(r.id, { ...base, status: "delivery", state: "done" }, [this.event(item, "delivery", { ...details })]);
    } else if (verdict === "bounce") {
      await this.deps.repo.update(r.id, { ...base, status: "bounce", state: "done" }, [this.event(item, "bounce", { ...details })]);
    } else {
      const next = nextRetryAt(attempts, now, c.retryDelaysMs);
      if (retriesExhausted(item.message.createdAtMs, next, c.maxQueueTimeMs)) {
        await this.deps.repo.update(r.id, { ...base, status: "retries_exhausted", state: "done" }, [
          this.event(item, "soft_bounce", { ...details }),
          this.event(item, "retries_exhausted", { attempts, first_attempt_at: isoTime(firstAttemptAtMs) }),
        ]);
      } else {
        await this.deps.repo.update(r.id, { ...base, status: "soft_bounce", state: "queued", nextAttemptAtMs: next }, [this.event(item, "soft_bounce", { ...details })]);
      }
    }
    this.deps.logger.info("outbound attempt", { message_id: item.message.id, recipient_id: r.id, domain: r.domain, verdict, smtp_code: result.code, attempt: attempts });
  }
}
