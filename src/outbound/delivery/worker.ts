// The delivery worker: leases due recipients, groups them by domain and IP pool (lanes.ts),
// and delivers each group over one connection (kept open a moment for the next group to the
// same destination), within the global and per-domain concurrency limits. Every attempt is
// recorded, its dispatch and outcome events with the queue's new state, in one commit.
// A heartbeat renews the leases it holds (held-recipients.ts): a slow attempt keeps them.
// Each chunk (one destination, one connection) is delivered by deliver-chunk.ts.
import { randomHex } from "../../lib/ids.ts";
import { FailureStreak } from "../../lib/failure-streak.ts";
import { WakeTimer } from "../../lib/wake-timer.ts";
import type { ClaimedRecipient } from "../queue/message.ts";
import { AttemptRecorder } from "./attempt-recorder.ts";
import { planChunks, RECIPIENTS_PER_CONNECTION } from "./chunk-plan.ts";
import { ConnectionCache } from "./connection-cache.ts";
import { type ChunkContext, type ChunkTarget, deliverChunk } from "./deliver-chunk.ts";
import { DestinationWindows, relayDestination } from "./destination-window.ts";
import { DestinationDirectory } from "../destinations/directory.ts";
import { MAX_PACE_WAIT_MS, Pacer } from "../destinations/pacer.ts";
import { PauseBoard } from "../destinations/pause-board.ts";
import type { DestinationRepo } from "../destinations/destinations.port.ts";
import { memoryDestinationRepo } from "../destinations/memory-destinations.ts";
import type { ResolvedDestination } from "../destinations/rules.ts";
import { LaneBook, laneOf } from "./lanes.ts";
import { poolOf } from "./source-address.ts";
import { HeldRecipients } from "./held-recipients.ts";
import type { SmtpClient } from "./smtp-client.ts";
import { TlsSessionCache } from "./tls-sessions.ts";
import type { WorkerDeps } from "./worker-deps.ts";

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
  /**
   * Each lane's window (slow start) and the connections open to it. A lane is a destination
   * (a rule's domains, or the domains of one MX host set) from one source IP: its rule's
   * max_connections bounds it, else outbound.domain_concurrency.
   */
  private readonly destinations = new DestinationWindows((lane) => {
    const c = this.deps.config().outbound;
    const max = this.lanes.ruleOf(lane)?.maxConnections ?? c.domainConcurrency;
    return { initial: Math.min(c.initialDomainConcurrency, max), max };
  });
  /** The rule of each lane seen (its window's limit) and each destination's lanes. */
  private readonly lanes = new LaneBook();
  /** Which destination each recipient domain belongs to. */
  private readonly directory: DestinationDirectory;
  /** Each lane's `rate`, spread evenly. */
  private readonly pacer = new Pacer();
  /** Paused destinations, read from the store every second (every node's pauses). */
  readonly pauses: PauseBoard;
  private readonly destinationRepo: DestinationRepo;
  private readonly running = new Set<Promise<void>>();
  private readonly timer = new WakeTimer(() => void this.tick());
  /** Ticks that failed in a row (the store is away): logged once, not once per tick. */
  private readonly tickFailures: FailureStreak;
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

  /** What each chunk delivered uses of this worker (deliver-chunk.ts). */
  private readonly chunk: ChunkContext;

  constructor(private readonly deps: WorkerDeps) {
    this.tickFailures = new FailureStreak(deps.logger, "error", "delivery worker tick failed");
    this.nodePrefix = `${deps.nodeId ?? deps.config().cluster.nodeId}/`;
    this.id = `${this.nodePrefix}${process.pid}-${randomHex(4)}`;
    this.held = new HeldRecipients(deps.repo, this.id, deps.clock, deps.logger, () => deps.config().outbound.leaseTimeMs);
    // An outcome being recorded is no longer renewed: its commit ends the lease.
    this.record = new AttemptRecorder(deps, this.id, (recipientId) => this.held.drop([recipientId]));
    this.tlsSessions = new TlsSessionCache(deps.config().outbound.tlsSessionCache);
    this.directory = new DestinationDirectory(deps.resolver, deps.config, relayDestination);
    this.destinationRepo = deps.destinationRepo ?? memoryDestinationRepo();
    this.pauses = new PauseBoard(this.destinationRepo, deps.clock, deps.logger);
    this.chunk = {
      deps,
      workerId: this.id,
      connections: this.connections,
      tlsSessions: this.tlsSessions,
      record: this.record,
      held: this.held,
      destinations: this.destinations,
      stopping: () => this.stopping,
      memoryFull: () => {
        this.memoryWaitUntilMs = performance.now() + MEMORY_WAIT_MS;
      },
      pauses: this.pauses,
      pacer: this.pacer,
    };
  }

  async start(): Promise<void> {
    // A process that died (kill -9, power loss) leaves leases behind; one process delivers
    // per node (node ids are unique), so whatever this node held is free again.
    const released = await this.deps.repo.releaseHeldBy(this.nodePrefix);
    if (released > 0) this.deps.logger.info("released recipients leased before a restart", { count: released });
    this.held.start();
    await this.pauses.start();
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
    this.pauses.stop();
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
      this.tickFailures.succeeded();
    } catch (err) {
      this.tickFailures.failed(err);
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
    const full = new Set(this.destinations.full());
    // Through a smarthost every domain shares the relay's window: when it is full, nothing can start.
    if (c.smarthost && full.has(laneOf(relayDestination(c.smarthost)))) return "blocked";
    const now = this.deps.clock.nowMs();
    const busy = this.busyDomains(full, now);
    const limit = free * RECIPIENTS_PER_CONNECTION;
    const claimed = await this.deps.repo.claimDue(this.id, now, now + c.leaseTimeMs, limit, busy);
    if (claimed.length === 0) return "none";
    this.held.add(
      claimed.map((i) => i.recipient.id),
      now + c.leaseTimeMs,
    );
    const { targets, keyOf } = await this.resolveTargets(claimed);
    // A paused destination's recipients keep their place; known now, the next claims leave them alone.
    const paused: ClaimedRecipient[] = [];
    const startable: ClaimedRecipient[] = [];
    for (const item of claimed) (this.pauses.pausedNow(targets.get(keyOf.get(item)!)!.resolved.name, now) ? paused : startable).push(item);
    // Planned by domain and pool: each group is one target, its connections counted in its lane.
    const plan = planChunks(
      startable,
      (item) => keyOf.get(item)!,
      free,
      (lane) => this.room(lane),
      (key) => targets.get(key)!.lane,
    );
    for (const chunk of plan.chunks) this.startChunk(targets.get(chunk.domain)!, chunk.items);
    // More domains than free connections: the rest wait for the next free slot.
    const unstarted = [...paused, ...plan.unstarted].map((i) => i.recipient.id);
    this.held.drop(unstarted);
    await this.deps.repo.release(unstarted, this.id);
    if (unstarted.length > 0) return "blocked";
    return claimed.length === limit ? "more" : "claimed";
  }

  /** Connections a lane may still open: none while its rate is booked further ahead than a connection would wait. */
  private room(lane: string): number {
    if (this.pacer.backlogMs(lane, performance.now()) >= MAX_PACE_WAIT_MS) return 0;
    return this.destinations.room(lane);
  }

  /** Domains a claim leaves alone: their lane is full or paced ahead, or their destination is paused. */
  private busyDomains(full: ReadonlySet<string>, nowMs: number): string[] {
    const perfNow = performance.now();
    const laneBusy = (lane: string) => full.has(lane) || this.pacer.backlogMs(lane, perfNow) >= MAX_PACE_WAIT_MS;
    const busy = (r: ResolvedDestination) => this.pauses.pausedNow(r.name, nowMs) !== null || this.lanes.allBusy(r, laneBusy);
    return this.directory.domainsWhere(busy, MAX_BUSY_DOMAINS);
  }

  /** Each claimed group's (domain and pool) destination and lane; the recipients' rows record their destination. */
  private async resolveTargets(claimed: readonly ClaimedRecipient[]) {
    const domains = [...new Set(claimed.map((i) => i.recipient.domain))];
    const resolvedList = await Promise.all(domains.map((d) => this.directory.resolve(d)));
    const resolved = new Map(domains.map((d, i) => [d, resolvedList[i]!]));
    const config = this.deps.config();
    const poolFor = (item: ClaimedRecipient) =>
      this.deps.poolOf ? this.deps.poolOf(item.message.outboundAccountId) : poolOf(config, item.message.outboundAccountId);
    const found = this.lanes.targets(claimed, poolFor, resolved);
    const byDestination = new Map<string, string[]>();
    for (const item of claimed) {
      const name = resolved.get(item.recipient.domain)!.name;
      const ids = byDestination.get(name) ?? [];
      ids.push(item.recipient.id);
      byDestination.set(name, ids);
    }
    // Not awaited: the destination column is for the operator's queue, not for delivery.
    for (const [name, ids] of byDestination)
      this.destinationRepo
        .recordDestination(ids, name)
        .catch((err) => this.deps.logger.warn("recording recipients' destination failed", { err, destination: name }));
    return found;
  }

  private startChunk(target: ChunkTarget, items: ClaimedRecipient[]): void {
    this.active++;
    // The window is the lane's, taken now: a reload that sets or clears the smarthost
    // meanwhile must not close a window other than the one opened.
    const lane = target.lane;
    this.destinations.opened(lane);
    const run = deliverChunk(this.chunk, target, items)
      .catch((err) => this.deps.logger.error("delivery failed", { err, domain: target.domain }))
      .finally(() => {
        this.active--;
        this.destinations.closed(lane);
        this.running.delete(run);
        this.kick();
      });
    this.running.add(run);
  }
}

/** Domains a claim is told to leave alone at most (their destinations are full, paced or paused). */
const MAX_BUSY_DOMAINS = 1000;
