// The appliance's periodic jobs and where each runs: jobs on the shared store run once per
// cluster, on the node holding their lease; jobs on this node's own disk run on every node.
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { JobLeaseRepo } from "./job-lease.port.ts";
import { Scheduler } from "./scheduler.ts";

export interface AppJobs {
  verifySendingDomains(): Promise<unknown>;
  purgeAttachments(): Promise<unknown>;
  retentionPurge(): Promise<unknown>;
  checkCertificate(): Promise<unknown>;
  reloadStoredCertificate(): Promise<unknown>;
}

export function scheduleAppJobs(
  deps: { config: Config; sharedAttachments: boolean; leases: JobLeaseRepo; clock: Clock; logger: Logger; onRun(job: string): void },
  jobs: AppJobs,
): Scheduler {
  const { config, clock } = deps;
  const scheduler = new Scheduler(
    deps.logger,
    { repo: deps.leases, holder: config.cluster.nodeId, clock, leaseMs: config.cluster.jobLeaseMs },
    deps.onRun,
  );
  const oncePerCluster = { oncePerCluster: true };
  scheduler.every("verify-sending-domains", "0 * * * * *", () => jobs.verifySendingDomains(), oncePerCluster);
  // In files (SQLite) on every node: each deletes those on its own disk, which no other can
  // reach; in the database (PostgreSQL) once per cluster, as any node reaches them all.
  scheduler.every("purge-attachments", "0 17 * * * *", () => jobs.purgeAttachments(), { oncePerCluster: deps.sharedAttachments });
  scheduler.everyMs("retention-purge", config.retention.intervalMs, () => jobs.retentionPurge(), oncePerCluster);
  // Certificate renewal (ACME) orders once per cluster; in files mode each node checks its own files.
  if (config.tls.mode !== "off")
    scheduler.everyMs("check-certificate", config.tls.checkIntervalMs, () => jobs.checkCertificate(), {
      oncePerCluster: config.tls.mode === "acme",
    });
  // The lease holder's renewal reaches the store only: every node takes it from there on its own.
  if (config.tls.mode === "acme") scheduler.everyMs("reload-certificate", config.tls.checkIntervalMs, () => jobs.reloadStoredCertificate());
  return scheduler;
}
