// The appliance's periodic jobs and where each runs: jobs on the shared store run once per
// cluster, on the node holding their lease; jobs on this node's own disk run on every node.
// Each feature names its own jobs (Feature.jobs); this one adds the retention purge, which
// walks every feature's tables, and schedules them all when it starts.
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { Feature, Job } from "../lib/feature.ts";
import type { Logger } from "../lib/logger.ts";
import type { JobLeaseRepo } from "./job-lease.port.ts";
import { RetentionPurge, type RetentionPurgeDeps } from "./retention-purge.ts";
import { Scheduler } from "./scheduler.ts";

export interface JobsFeatureDeps {
  config(): Config;
  leases: JobLeaseRepo;
  /** The retention purge's windows, one per table, and what to close after the last (Repos.retention). */
  retention: Pick<RetentionPurgeDeps, "purges" | "close">;
  clock: Clock;
  logger: Logger;
  /** Hears each run this node starts (postroom_job_runs_total). */
  onRun(job: string): void;
}

export interface JobsFeature extends Feature {
  /** Deletes what is older than its retention (tests run it after moving their clock). */
  retention: RetentionPurge;
}

/** Schedules the retention purge and every feature's `jobs` at start. */
export function jobsFeature(deps: JobsFeatureDeps, jobs: readonly Job[]): JobsFeature {
  const { config, clock } = deps;
  const { cluster, retention: settings } = config();
  const retention = new RetentionPurge({
    ...deps.retention,
    clock,
    logger: deps.logger.child({ component: "retention" }),
    settings: () => config().retention,
  });
  const logger = deps.logger.child({ component: "jobs" });
  const scheduler = new Scheduler(logger, { repo: deps.leases, holder: cluster.nodeId, clock, leaseMs: cluster.jobLeaseMs }, deps.onRun);
  const all: Job[] = [...jobs, { name: "retention-purge", every: settings.intervalMs, run: () => retention.run(), oncePerCluster: true }];
  return {
    retention,
    start() {
      for (const job of all) {
        const opts = { oncePerCluster: job.oncePerCluster ?? false };
        if (typeof job.every === "string") scheduler.every(job.name, job.every, job.run, opts);
        else scheduler.everyMs(job.name, job.every, job.run, opts);
      }
    },
    async stop() {
      await scheduler.stop();
      await retention.stop();
    },
  };
}
