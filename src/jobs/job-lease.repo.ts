// SQL for job leases on SQLite: the JobLeaseRepo port (job-lease.port.ts). The same one
// statement as on PostgreSQL (job-lease.pg.repo.ts): an upsert that changes the row only
// when the lease is free, expired or already ours, and returns it only then.
import type { Store } from "../store/store.ts";
import type { JobLeaseRepo } from "./job-lease.port.ts";

export function createJobLeaseRepo(store: Store): JobLeaseRepo {
  const db = store.db;
  const hold = db.query<{ holder: string }, [string, string, number, number, string]>(
    `INSERT INTO job_leases (name, holder, expires_at) VALUES (?1, ?2, ?3)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
     WHERE job_leases.expires_at <= ?4 OR job_leases.holder = ?5
     RETURNING holder`,
  );
  // Held as tryHold says (expires_at > now); the job names as a JSON array.
  const renew = db.query<{ name: string }, [number, string, string, number]>(
    "UPDATE job_leases SET expires_at = ? WHERE holder = ? AND name IN (SELECT value FROM json_each(?)) AND expires_at > ? RETURNING name",
  );
  const del = db.query("DELETE FROM job_leases WHERE name = ? AND holder = ?");
  return {
    tryHold: async (job, holder, nowMs, leaseMs) => hold.get(job, holder, nowMs + leaseMs, nowMs, holder) !== null,
    renew: async (holder, jobs, nowMs, leaseMs) =>
      jobs.length === 0 ? [] : renew.all(nowMs + leaseMs, holder, JSON.stringify(jobs), nowMs).map((r) => r.name),
    release: async (job, holder) => void del.run(job, holder),
  };
}
