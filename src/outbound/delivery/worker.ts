// The delivery worker: leases due recipients, groups them by destination domain, and
// delivers each group over one connection (kept open a moment for the next group to the
// same destination), within the global and per-domain concurrency limits. Every attempt is
// recorded, its dispatch and outcome events with the queue's new state, in one commit.
// A heartbeat renews the leases it holds (held-recipients.ts): a slow attempt keeps them.
import type { AttemptDetails } from "../../events/kinds.ts";
import { randomHex } from "../../lib/ids.ts";
import { WakeTimer } from "../../lib/wake-timer.ts";
import { HeldRecipients } from "./held-recipients.ts";
import { garbageMade, LARGE_MESSAGE_BYTES } from "../../lib/gc-pacer.ts";
import { costOf, type Reservation } from "../../lib/memory-budget.ts";
import type { ClaimedRecipient } from "../queue/message.ts";
import { AttemptRecorder } from "./attempt-recorder.ts";
import { DELIVERY_MESSAGE_COST, type WorkerDeps } from "./worker-deps.ts";
import { planChunks, RECIPIENTS_PER_CONNECTION } from "./chunk-plan.ts";
import { ConnectionCache, destinationKey } from "./connection-cache.ts";
import { connectTo } from "./connect.ts";
import { copyFor, envelopeSender } from "./prepare.ts";
import { DestinationWindows, destinationOf, relayDestination } from "./destination-window.ts";
import type { DestinationTls } from "./destination-tls.ts";
import { TlsSessionCache } from "./tls-sessions.ts";
import type { SmtpClient } from "./smtp-client.ts";

/** How long deliveries wait when the memory budget had no room for the next one. */
const MEMORY_WAIT_MS = 500;

const IDLE_POLL_MS = 1000;
/**
 * How long a kick (an enqueue, a finished connection) waits before the worker claims: the
 * messages accepted meanwhile are claimed with it, in one transaction, and go out over the
 * same connections. A wake-up already set for sooner is never put off by a kick.
 */
export const KICK_DELAY_MS = 5;

/** What a claim found: more than it could take, all that was due, or nothing it could start. */
type ClaimOutcome = "more" | "claimed" | "blocked" | "none";

export class DeliveryWorker {
  /** The node's name first: at start-up, leases of this node's earlier (crashed) process are released. */
  private readonly nodePrefix: string;
  private readonly id: string;
  private active = 0;
  /** Each destination's window (slow start) and the connections open to it. */
  private readonly destinations = new DestinationWindows(() => {
    const c = this.deps.config().outbound;
    return { initial: c.initialDomainConcurrency, max: c.domainConcurrency };
  });
  private readonly running = new Set<Promise<void>>();
  private readonly timer = new WakeTimer(() => void this.tick());
  private ticking = false;
  private again = false;
  /** No claims before this (the memory budget was full). */
  private memoryWaitUntilMs = 0;
  private stopping = false;
  /** Idle connections to destinations we just delivered to; at most one per delivery slot. */
  private readonly connections = new ConnectionCache<SmtpClient>({ maxIdle: () => this.deps.config().outbound.concurrency });

  /** Remote servers' TLS sessions, resumed by the next connection to the same server. */
  private readonly tlsSessions: TlsSessionCache;

  /** Records each attempt's outcome with its events, and logs it. */
  private readonly record: AttemptRecorder;

  /** The recipients this worker holds, renewed by a heartbeat while their attempts run. */
  readonly held: HeldRecipients;

  constructor(private readonly deps: WorkerDeps) {
    this.nodePrefix = `${deps.nodeId ?? deps.config().cluster.nodeId}/`;
    this.id = `${this.nodePrefix}${process.pid}-${randomHex(4)}`;
    this.held = new HeldRecipients(deps.repo, this.id, deps.clock, deps.logger, () => deps.config().outbound.leaseTimeMs);
    // An outcome being recorded is no longer renewed: its commit ends the lease.
    this.record = new AttemptRecorder(deps, this.id, (recipientId) => this.held.drop([recipientId]));
    this.tlsSessions = new TlsSessionCache(deps.config().outbound.tlsSessionCache);
  }

  async start(): Promise<void> {
    // A process that died (kill -9, power loss) leaves leases behind; one process delivers
    // per node (node ids are unique), so whatever this node held is free again.
    const released = await this.deps.repo.releaseHeldBy(this.nodePrefix);
    if (released > 0) this.deps.logger.info("released recipients leased before a restart", { count: released });
    this.held.start();
    this.wake(0);
  }

  /** Look for due work shortly (after an enqueue, or a test moving its clock). */
  kick(): void {
    this.wake(KICK_DELAY_MS);
  }

  /** Resolves when nothing is in flight (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.ticking) await Promise.all([...this.running, Bun.sleep(1)]);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.timer.cancel();
    // In-flight attempts finish; anything cut short is taken up again when its lease ends.
    await Promise.race([Promise.all(this.running), Bun.sleep(10_000)]);
    this.held.stop();
    this.connections.closeAll();
    await this.deps.repo.flush();
  }

  /** Ticks after `delayMs`, unless a tick is already set for sooner. */
  private wake(delayMs: number): void {
    if (this.stopping) return;
    this.timer.wake(delayMs);
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    let outcome: ClaimOutcome = "none";
    try {
      outcome = await this.claimAndStart();
    } catch (err) {
      this.deps.logger.error("delivery worker tick failed", { err });
    } finally {
      this.ticking = false;
    }
    if (this.again || outcome === "more") {
      this.again = false;
      this.wake(0);
    } else if (outcome === "none") {
      // Nothing due now: sleep until the next recipient is. Recipients due but not taken are
      // leased, or wait for a busy domain or a free slot: a finished connection kicks for those.
      const due = await this.deps.repo.nextDueMs().catch(() => null);
      const untilDue = due === null ? IDLE_POLL_MS : due - this.deps.clock.nowMs();
      this.wake(untilDue > 0 ? Math.min(IDLE_POLL_MS, untilDue) : IDLE_POLL_MS);
    } else {
      // Everything claimable was taken (or no slot is free): the next kick, or a poll.
      this.wake(IDLE_POLL_MS);
    }
  }

  private async claimAndStart(): Promise<ClaimOutcome> {
    const c = this.deps.config().outbound;
    const free = c.concurrency - this.active;
    if (free <= 0 || performance.now() < this.memoryWaitUntilMs) return "blocked";
    const busy = this.destinations.full();
    // Through a smarthost every domain shares the relay's window: when it is full, nothing can start.
    if (c.smarthost && busy.includes(relayDestination(c.smarthost))) return "blocked";
    const now = this.deps.clock.nowMs();
    const limit = free * RECIPIENTS_PER_CONNECTION;
    const claimed = await this.deps.repo.claimDue(this.id, now, now + c.leaseTimeMs, limit, busy);
    if (claimed.length === 0) return "none";
    this.held.add(
      claimed.map((i) => i.recipient.id),
      now + c.leaseTimeMs,
    );
    const plan = planChunks(
      claimed,
      (item) => item.recipient.domain,
      free,
      (destination) => this.destinations.room(destination),
      (domain) => destinationOf(domain, c.smarthost),
    );
    for (const chunk of plan.chunks) this.startChunk(chunk.domain, chunk.items);
    // More domains than free connections: the rest wait for the next free slot.
    const unstarted = plan.unstarted.map((i) => i.recipient.id);
    this.held.drop(unstarted);
    await this.deps.repo.release(unstarted, this.id);
    if (plan.unstarted.length > 0) return "blocked";
    return claimed.length === limit ? "more" : "claimed";
  }

  private startChunk(domain: string, items: ClaimedRecipient[]): void {
    this.active++;
    // The window is the destination's, taken now: a reload that sets or clears the
    // smarthost meanwhile must not close a window other than the one opened.
    const destination = destinationOf(domain, this.deps.config().outbound.smarthost);
    this.destinations.opened(destination);
    const run = this.deliverChunk(domain, destination, items)
      .catch((err) => this.deps.logger.error("delivery failed", { err, domain }))
      .finally(() => {
        this.active--;
        this.destinations.closed(destination);
        this.running.delete(run);
        this.kick();
      });
    this.running.add(run);
  }

  /** Delivers `items` over one connection, telling the destination's window what each transaction came to. */
  private async deliverChunk(domain: string, destination: string, items: ClaimedRecipient[]): Promise<void> {
    const config = this.deps.config();
    const tls: DestinationTls = this.deps.tlsFor ? await this.deps.tlsFor(domain) : { requirement: { level: "opportunistic" } };
    const key = destinationKey(domain, config.outbound.smarthost, tls.requirement.level);
    // A connection left open by the last delivery to this destination, else a new one.
    let client = this.connections.take(key);
    let reused = client !== null;
    if (!client) {
      const opened = await connectTo(domain, config, this.deps.resolver, tls.requirement, tls.ca, this.tlsSessions);
      if (!opened.ok) {
        await Promise.all(items.map((item) => this.record.settle(item, { code: null, response: opened.reason }, null, opened.permanent)));
        // A null MX or a policy refusal is no sign of load.
        if (!opened.permanent) this.destinations.feedback(destination, "failed");
        return;
      }
      client = opened.client;
    }
    const pending = new Set(items);
    const blobs = new Map<string, Buffer>();
    // Each message's copy is held (and counted in the memory budget) until its last
    // recipient of this chunk has had its attempt.
    const left = new Map<string, number>();
    for (const item of items) left.set(item.message.id, (left.get(item.message.id) ?? 0) + 1);
    const held = new Map<string, Reservation>();
    const done = (item: ClaimedRecipient) => {
      const n = (left.get(item.message.id) ?? 1) - 1;
      left.set(item.message.id, n);
      if (n > 0) return;
      // Its stored bytes, the signing thread's copy and the SMTP client's slices are garbage now.
      if (item.message.sizeBytes > LARGE_MESSAGE_BYTES) garbageMade(2 * item.message.sizeBytes);
      blobs.delete(item.message.id);
      held.get(item.message.id)?.release();
      held.delete(item.message.id);
    };
    // Outcomes commit in groups while the next message goes out; the chunk ends once all have.
    const recorded: Promise<void>[] = [];
    try {
      for (const item of items) {
        pending.delete(item);
        if (!this.held.holds(item.recipient.id, this.deps.clock.nowMs())) {
          // The heartbeat found the lease lost (this node stalled, or lost the store): its new holder attempts it.
          this.deps.logger.warn("lease lost before the attempt: left to the worker holding it", {
            message_id: item.message.id,
            recipient_id: item.recipient.id,
            worker: this.id,
          });
          done(item);
          continue;
        }
        if (!client.usable) {
          recorded.push(
            this.record.settle(item, { code: null, response: "connection to the mail server was lost" }, client.endpoint.host, false),
          );
          continue;
        }
        if (this.deps.budget && !held.has(item.message.id)) {
          const reservation = this.deps.budget.reserve(costOf(DELIVERY_MESSAGE_COST, item.message.sizeBytes), null);
          if (!reservation) {
            // No room in memory now: this recipient and the rest of the chunk wait, unattempted.
            this.memoryWaitUntilMs = performance.now() + MEMORY_WAIT_MS;
            const waiting = [item, ...pending].map((i) => i.recipient.id);
            pending.clear();
            this.held.drop(waiting);
            recorded.push(this.deps.repo.release(waiting, this.id));
            break;
          }
          held.set(item.message.id, reservation);
        }
        const attempt = item.recipient.attempts + 1;
        const dispatch = this.record.event(item, "dispatch", {
          mx: client.endpoint.host,
          smtp_code: null,
          smtp_response: null,
          attempt,
        } satisfies AttemptDetails);
        let raw: Buffer;
        try {
          raw = await copyFor(item, blobs, this.deps);
        } catch (err) {
          // Nothing was sent: the attempt could not even be made. E13 and the webhook say why.
          recorded.push(this.record.unprepared(item, err));
          done(item);
          continue;
        }
        let result = await client.send(envelopeSender(item.message, item.recipient.id), item.recipient.email, raw);
        if (result.code === null && reused) {
          // The kept connection died as it was used again (the server dropped it while it
          // waited): that says nothing about this message, so a fresh connection takes it.
          client.close();
          const opened = await connectTo(domain, config, this.deps.resolver, tls.requirement, tls.ca, this.tlsSessions);
          if (!opened.ok) {
            for (const failed of [item, ...pending])
              recorded.push(this.record.settle(failed, { code: null, response: opened.reason }, null, opened.permanent));
            pending.clear();
            if (!opened.permanent) this.destinations.feedback(destination, "failed");
            return;
          }
          client = opened.client;
          dispatch.details = { ...dispatch.details, mx: client.endpoint.host };
          result = await client.send(envelopeSender(item.message, item.recipient.id), item.recipient.email, raw);
        }
        reused = false;
        // The session died or the server said it is closing (421): the destination is struggling.
        // Any other answer, a refusal included, is the destination taking its mail.
        this.destinations.feedback(destination, result.code === null || result.code === 421 ? "failed" : "carried");
        recorded.push(this.record.settle(item, result, client.endpoint.host, false, dispatch));
        done(item);
        if (result.code !== null && result.code >= 400) await client.reset();
      }
    } finally {
      for (const reservation of held.values()) reservation.release();
      // Kept for the next message to this destination only if every transaction on it went well.
      if (this.stopping) client.close();
      else this.connections.put(key, client);
      for (const item of pending)
        recorded.push(this.record.settle(item, { code: null, response: "delivery was interrupted" }, null, false));
      for (const r of await Promise.allSettled(recorded)) {
        // Not recorded: the lease keeps the recipient until it ends, then it is tried again.
        if (r.status === "rejected") this.deps.logger.error("recording a delivery outcome failed", { err: r.reason, domain });
      }
    }
  }
}
