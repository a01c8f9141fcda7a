// Periodic jobs (DNS re-verification, attachment purge, certificate checks, ...): each on its own cron
// pattern, never two runs of one job at once, a failure logged and the next run still on.
// A job that must run once per cluster (several nodes on one store) takes its lease first
// (job-lease.port.ts): only the node holding it runs the job; the others skip their runs.
import { Cron } from "croner";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { JobLeaseRepo } from "./job-lease.port.ts";

/**
 * How many of its periods a job's lease lasts. The holder renews the lease at each run, one
 * period after the last, so the lease must outlast a period: with one period exactly, a
 * tick a little late (timers drift, a busy event loop) would find it expired and another
 * node, its timer not in step with ours, could run the job in the same period. Two periods
 * leave a whole period of slack; a node that stops (crash, network) hands its jobs over
 * after at most two periods, and one that stops cleanly releases them at once.
 */
export const LEASE_PERIODS = 2;

/** What the scheduler takes leases with: the store's leases, this node's name, the time. */
export interface ClusterLeases {
  repo: JobLeaseRepo;
  /** This node: cluster.node_id. */
  holder: string;
  clock: Clock;
}

export interface JobOptions {
  /** Run only on the node holding the job's lease (LEASE_PERIODS of its period). */
  oncePerCluster?: boolean;
}

interface Job {
  name: string;
  fn: () => Promise<unknown>;
  /** null: run on every node. */
  leaseMs: number | null;
  running: boolean;
  /** This node held the lease at its last tick (released at stop). */
  held: boolean;
}

export class Scheduler {
  private readonly crons: Cron[] = [];
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private readonly jobs = new Map<string, Job>();
  private stopped = false;

  constructor(
    private readonly logger: Logger,
    private readonly leases: ClusterLeases | null = null,
    /** Hears each run this node starts (postroom_job_runs_total: once per cluster shows across nodes). */
    private readonly onRun: (job: string) => void = () => {},
  ) {}

  /** Runs `fn` on `pattern` (cron syntax with seconds, e.g. "0 * * * * *" every minute). */
  every(name: string, pattern: string, fn: () => Promise<unknown>, opts: JobOptions = {}): void {
    // Unnamed: croner keeps names in one registry per process, and tests run several appliances.
    // Not `protect`ed: tick() skips a run while the last goes on, after renewing the lease.
    const cron = new Cron(pattern, { unref: true, paused: true }, () => this.tick(name));
    this.crons.push(cron);
    this.add(name, fn, opts.oncePerCluster ? cronPeriodMs(pattern) : null);
    cron.resume();
  }

  /** Runs `fn` every `intervalMs` (for intervals the config sets freely, such as tls.check_interval). */
  everyMs(name: string, intervalMs: number, fn: () => Promise<unknown>, opts: JobOptions = {}): void {
    this.add(name, fn, opts.oncePerCluster ? intervalMs : null);
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
      if (job.leaseMs !== null) {
        const leases = this.leases!;
        job.held = await leases.repo.tryHold(name, leases.holder, leases.clock.nowMs(), job.leaseMs);
        if (!job.held) {
          this.logger.debug("job skipped: another node holds its lease", { job: name });
          return;
        }
      }
      // Checked after the lease: a run still going keeps its lease renewed.
      if (job.running || this.stopped) return;
      job.running = true;
      this.onRun(name);
      try {
        await job.fn();
      } finally {
        job.running = false;
      }
    } catch (err) {
      this.logger.error("job failed", { job: name, err });
    }
  }

  /** Stops every timer, and gives up the leases of jobs not running, so another node takes them at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const cron of this.crons) cron.stop();
    for (const timer of this.timers) clearInterval(timer);
    this.crons.length = 0;
    this.timers.length = 0;
    const leases = this.leases;
    // A job still running keeps its lease until it expires: no other node starts it meanwhile.
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

  private add(name: string, fn: () => Promise<unknown>, periodMs: number | null): void {
    if (this.jobs.has(name)) throw new Error(`job ${name} is already scheduled`);
    if (periodMs !== null && !this.leases) throw new Error(`job ${name} runs once per cluster, but the scheduler has no leases`);
    this.jobs.set(name, { name, fn, leaseMs: periodMs === null ? null : LEASE_PERIODS * periodMs, running: false, held: false });
  }
}

/** A cron pattern's period: the longest gap between its next runs (the gap, for a regular pattern). */
export function cronPeriodMs(pattern: string): number {
  const cron = new Cron(pattern, { paused: true });
  const runs = cron.nextRuns(4).map((d) => d.getTime());
  cron.stop();
  let longest = 0;
  for (let i = 1; i < runs.length; i++) longest = Math.max(longest, runs[i]! - runs[i - 1]!);
  if (longest <= 0) throw new Error(`cron pattern ${pattern} does not repeat`);
  return longest;
}
