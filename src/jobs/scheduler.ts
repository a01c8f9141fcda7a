// Periodic jobs (DNS re-verification, attachment purge, certificate checks, ...): each on its own cron
// pattern, never two runs of one job at once, a failure logged and the next run still on.
// A job that must run once per cluster (several nodes on one store) takes its lease first
// (job-lease.port.ts): only the node holding it runs the job; the others skip their runs.
//
// The lease is short (cluster.job_lease_time) and the holder keeps it by a heartbeat, all
// its jobs' leases in one statement a third of the lease apart, between runs as well as
// during them: so the job stays on one node (another node's timer, not in step with ours,
// finds it held and skips it, whatever the job's period), a long run keeps its lease, and a
// node that dies or loses the store hands its jobs over one lease time after its last
// renewal (the next node to tick takes the lease and runs the job). One that stops cleanly
// gives them up at once.
import { Cron } from "croner";
import type { Clock } from "../lib/clock.ts";
import { FailureStreak } from "../lib/failure-streak.ts";
import { Heartbeat } from "../lib/heartbeat.ts";
import type { Logger } from "../lib/logger.ts";
import type { JobLeaseRepo } from "./job-lease.port.ts";

/** What the scheduler takes leases with: the store's leases, this node's name, the time, the lease time. */
export interface ClusterLeases {
  repo: JobLeaseRepo;
  /** This node: cluster.node_id. */
  holder: string;
  clock: Clock;
  /** cluster.job_lease_time: how long a job's lease lasts without a renewal. */
  leaseMs: number;
}

export interface JobOptions {
  /** Run only on the node holding the job's lease. */
  oncePerCluster?: boolean;
}

interface Job {
  name: string;
  fn: () => Promise<unknown>;
  /** False: run on every node. */
  leased: boolean;
  running: boolean;
  /** This node holds the lease, as far as its last tick or renewal knows (renewed by the heartbeat, released at stop). */
  held: boolean;
  /** Runs that failed in a row (the store is away): logged once, not once per run. */
  failures: FailureStreak;
}

export class Scheduler {
  private readonly crons: Cron[] = [];
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private readonly jobs = new Map<string, Job>();
  private stopped = false;
  private readonly heartbeat: Heartbeat | null;

  constructor(
    private readonly logger: Logger,
    private readonly leases: ClusterLeases | null = null,
    /** Hears each run this node starts (postroom_job_runs_total: once per cluster shows across nodes). */
    private readonly onRun: (job: string) => void = () => {},
  ) {
    this.heartbeat = leases
      ? new Heartbeat(
          () => this.renewLeases(),
          () => leases.leaseMs,
          logger,
          "job",
        )
      : null;
  }

  /** Runs `fn` on `pattern` (cron syntax with seconds, e.g. "0 * * * * *" every minute). */
  every(name: string, pattern: string, fn: () => Promise<unknown>, opts: JobOptions = {}): void {
    // Unnamed: croner keeps names in one registry per process, and tests run several appliances.
    // Not `protect`ed: tick() skips a run while the last goes on, after renewing the lease.
    const cron = new Cron(pattern, { unref: true, paused: true }, () => this.tick(name));
    this.crons.push(cron);
    this.add(name, fn, opts.oncePerCluster ?? false);
    cron.resume();
  }

  /** Runs `fn` every `intervalMs` (for intervals the config sets freely, such as tls.check_interval). */
  everyMs(name: string, intervalMs: number, fn: () => Promise<unknown>, opts: JobOptions = {}): void {
    this.add(name, fn, opts.oncePerCluster ?? false);
    const timer = setInterval(() => void this.tick(name), intervalMs);
    timer.unref?.();
    this.timers.push(timer);
  }

  /**
   * One run of job `name` as its timer starts it: with a lease, taken or renewed first (a run
   * without it is skipped); never while the job's last run goes on. Tests drive it directly.
   */
  async tick(name: string): Promise<void> {
    const job = this.jobs.get(name);
    if (!job || this.stopped) return;
    try {
      if (job.leased) {
        const leases = this.leases!;
        job.held = await leases.repo.tryHold(name, leases.holder, leases.clock.nowMs(), leases.leaseMs);
        if (!job.held) {
          this.logger.debug("job skipped: another node holds its lease", { job: name });
          return;
        }
      }
      // Checked after the lease, which the tick renews too.
      if (job.running || this.stopped) return;
      job.running = true;
      this.onRun(name);
      try {
        await job.fn();
      } finally {
        job.running = false;
      }
      job.failures.succeeded({ job: name });
    } catch (err) {
      job.failures.failed(err, { job: name });
    }
  }

  /**
   * The heartbeat's beat (tests call it too): renews the leases of every job this node holds,
   * in one statement. A job whose lease is lost (this node stalled past it, or lost the store,
   * and another node took it) is no longer counted on: its next tick here asks again.
   */
  async renewLeases(): Promise<void> {
    const leases = this.leases;
    const held = [...this.jobs.values()].filter((j) => j.held);
    if (!leases || held.length === 0) return;
    const renewed = new Set(
      await leases.repo.renew(
        leases.holder,
        held.map((j) => j.name),
        leases.clock.nowMs(),
        leases.leaseMs,
      ),
    );
    for (const job of held) {
      if (renewed.has(job.name)) continue;
      job.held = false;
      this.logger.warn("job lease lost: another node may run the job now", { job: job.name, running: job.running });
    }
  }

  /** Stops every timer, and gives up the leases of jobs not running, so another node takes them at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.heartbeat?.stop();
    for (const cron of this.crons) cron.stop();
    for (const timer of this.timers) clearInterval(timer);
    this.crons.length = 0;
    this.timers.length = 0;
    const leases = this.leases;
    // A job still running keeps its lease until it expires (cluster.job_lease_time, no longer
    // renewed): no other node starts it meanwhile.
    const idle = [...this.jobs.values()].filter((j) => j.held && !j.running);
    this.jobs.clear();
    if (!leases) return;
    for (const job of idle) {
      try {
        await leases.repo.release(job.name, leases.holder);
      } catch (err) {
        this.logger.warn("job lease not released; it expires by itself", { job: job.name, err });
      }
    }
  }

  private add(name: string, fn: () => Promise<unknown>, leased: boolean): void {
    if (this.jobs.has(name)) throw new Error(`job ${name} is already scheduled`);
    if (leased && !this.leases) throw new Error(`job ${name} runs once per cluster, but the scheduler has no leases`);
    this.jobs.set(name, { name, fn, leased, running: false, held: false, failures: new FailureStreak(this.logger, "error", "job failed") });
    if (leased) this.heartbeat!.start();
  }
}
