// The port through which a periodic job that must run once per cluster (several nodes on
// one store) takes its lease first, whatever the engine: job-lease.repo.ts implements it once for
// SQLite and PostgreSQL, and one contract test (test/jobs/job-lease.contract.test.ts) runs
// the same cases on both. The holder is a
// node's cluster.node_id; the Scheduler (scheduler.ts) decides when to ask and for how long.

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface JobLeaseRepo {
  /**
   * Takes the lease of `job` for `holder` until nowMs + leaseMs when nobody holds it, its
   * holder's lease expired (expires_at <= nowMs), or `holder` already holds it (then it is
   * extended). True when `holder` holds it now; false when another node's lease runs on.
   * One atomic statement: of several nodes asking at once, exactly one gets it.
   */
  tryHold(job: string, holder: string, nowMs: number, leaseMs: number): Promise<boolean>;
  /**
   * The holder's heartbeat: extends to nowMs + leaseMs the leases of `jobs` that `holder`
   * still holds (not expired at `nowMs`), in one statement, and returns the jobs renewed.
   * A job missing from the answer is no longer the holder's (it expired, or another node
   * took it); only the jobs named, so a lease left on a job this node no longer runs lapses.
   */
  renew(holder: string, jobs: readonly string[], nowMs: number, leaseMs: number): Promise<string[]>;
  /** Gives the lease of `job` up when `holder` holds it (a stopping node), so another takes it at once; else nothing. */
  release(job: string, holder: string): Promise<void>;
}
