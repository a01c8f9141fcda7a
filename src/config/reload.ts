// What a SIGHUP reload cannot apply to the running appliance: the settings read once at
// start-up (listener addresses, data_dir, TLS, the logger). Accounts, credentials and
// limits are read from the current config on every use and need nothing (the SMTP limits,
// smtp-server's own included, when a session opens: src/smtp/guard.ts).
import type { Config } from "./config.ts";

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The config keys that changed from `current` to `next` but take effect only after a restart. */
export function restartNeededFor(current: Config, next: Config): string[] {
  const needRestart: string[] = [];
  if (!same(next.http.listen, current.http.listen)) needRestart.push("http.listen");
  for (const key of ["inboundListen", "submissionListen", "submissionTlsListen"] as const) {
    if (!same(next.smtp[key], current.smtp[key])) needRestart.push(`smtp.${key}`);
  }
  if (next.dataDir !== current.dataDir) needRestart.push("data_dir");
  if (!same(next.store, current.store)) needRestart.push("store");
  if (!same(next.tls, current.tls)) needRestart.push("tls");
  // The node's name is its identity in the cluster (the job leases it holds): fixed while it runs.
  if (next.cluster.nodeId !== current.cluster.nodeId) needRestart.push("cluster.node_id");
  // The scheduler takes it once (outbound.lease_time and webhooks.lease_time are read at every claim and beat).
  if (next.cluster.jobLeaseMs !== current.cluster.jobLeaseMs) needRestart.push("cluster.job_lease_time");
  // The logger is made once at start-up, with its level.
  if (!same(next.log, current.log)) needRestart.push("log");
  // The purge's timer is set once; the retentions and batches are read at every run.
  if (next.retention.intervalMs !== current.retention.intervalMs) needRestart.push("retention.interval");
  return needRestart;
}
