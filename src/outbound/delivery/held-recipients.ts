// The recipients one delivery worker holds, and until when, as far as it knows: added when
// claimed, removed when given back or when their outcome is being recorded, renewed
// together by the worker's heartbeat (one statement). A recipient the renewal does not
// return is no longer this worker's (its lease ran out, another node took it): it is not
// renewed again and, if its attempt has not started, it is not attempted here.
import type { Clock } from "../../lib/clock.ts";
import { Heartbeat } from "../../lib/heartbeat.ts";
import type { Logger } from "../../lib/logger.ts";
import type { QueueLeases } from "../queue/queue.port.ts";

/** One recipient's lease as this worker knows it (an object: a renewal tells it from a later claim of the same recipient). */
interface Held {
  untilMs: number;
}

export class HeldRecipients {
  private readonly held = new Map<string, Held>();
  private readonly heartbeat: Heartbeat;

  constructor(
    private readonly repo: Pick<QueueLeases, "renewLeases">,
    private readonly workerId: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** outbound.lease_time, read at each beat. */
    private readonly leaseMs: () => number,
  ) {
    this.heartbeat = new Heartbeat(() => this.renew(), leaseMs, logger, "recipient");
  }

  /** Starts the heartbeat (a third of the lease time apart). */
  start(): void {
    this.heartbeat.start();
  }

  stop(): void {
    this.heartbeat.stop();
  }

  /** Claimed until `untilMs`. */
  add(recipientIds: readonly string[], untilMs: number): void {
    for (const id of recipientIds) this.held.set(id, { untilMs });
  }

  /** Given back, or its outcome is being recorded: no longer renewed. */
  drop(recipientIds: readonly string[]): void {
    for (const id of recipientIds) this.held.delete(id);
  }

  /** Whether this worker may still count on the lease at `nowMs` (renewed in time, not lost). */
  holds(recipientId: string, nowMs: number): boolean {
    const h = this.held.get(recipientId);
    return h !== undefined && h.untilMs >= nowMs;
  }

  get size(): number {
    return this.held.size;
  }

  /** The heartbeat's beat (tests call it too): renews every lease held, in one statement; forgets and logs those lost. */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const asked = [...this.held.entries()];
    const nowMs = this.clock.nowMs();
    const untilMs = nowMs + this.leaseMs();
    const renewed = new Set(
      await this.repo.renewLeases(
        this.workerId,
        asked.map(([id]) => id),
        nowMs,
        untilMs,
      ),
    );
    let lost = 0;
    for (const [id, h] of asked) {
      if (renewed.has(id)) h.untilMs = untilMs;
      // Dropped (given back, recorded) or claimed again meanwhile: not the lease asked about.
      else if (this.held.get(id) === h) {
        this.held.delete(id);
        lost++;
      }
    }
    if (lost > 0) this.logger.warn("recipient leases lost: another worker holds them now, or will", { count: lost, worker: this.workerId });
  }
}
