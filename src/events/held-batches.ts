// The webhook batches one dispatcher is posting (one per outbound account at most), and
// their leases as it knows them: added when claimed, renewed together by the dispatcher's
// heartbeat (one statement), let go when the POST has its answer. A renewed lease's end
// moves (OutboxLease.untilMs): it is the lease's identity, so the dispatcher finishes a
// batch only once no renewal of it is under way (release). A batch the renewal does not
// return is no longer this node's; its POST runs on, and its finish is refused as before.
import type { Clock } from "../lib/clock.ts";
import { Heartbeat } from "../lib/heartbeat.ts";
import type { Logger } from "../lib/logger.ts";
import type { OutboxLease, OutboxLeases } from "./outbox.port.ts";

export class HeldBatches {
  private readonly held = new Map<string, OutboxLease>();
  private readonly heartbeat: Heartbeat;

  constructor(
    private readonly repo: Pick<OutboxLeases, "renewLeases">,
    private readonly clock: Clock,
    logger: Logger,
    /** webhooks.lease_time, read at each beat. */
    private readonly leaseMs: () => number,
  ) {
    this.heartbeat = new Heartbeat(() => this.renew(), leaseMs, logger, "webhook batch");
  }

  start(): void {
    this.heartbeat.start();
  }

  stop(): void {
    this.heartbeat.stop();
  }

  add(lease: OutboxLease): void {
    this.held.set(lease.batchId, lease);
  }

  /** No longer renewed; resolves once a renewal under way has set its final end, so `lease` is what the rows say. */
  async release(lease: OutboxLease): Promise<void> {
    this.held.delete(lease.batchId);
    await this.heartbeat.quiet();
  }

  /** The heartbeat's beat: renews every batch held, in one statement; forgets those lost. */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const asked = [...this.held.values()];
    const nowMs = this.clock.nowMs();
    const untilMs = nowMs + this.leaseMs();
    const renewed = new Set(await this.repo.renewLeases(asked, nowMs, untilMs));
    for (const lease of asked) {
      // Renewed in the store: the lease is that, even for a batch released meanwhile (its finish waits for this).
      if (renewed.has(lease.batchId)) lease.untilMs = untilMs;
      else if (this.held.get(lease.batchId) === lease) this.held.delete(lease.batchId);
    }
  }
}
