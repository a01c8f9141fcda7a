// SQL for job leases on PostgreSQL: the JobLeaseRepo port (job-lease.port.ts). Several
// nodes ask at once, so taking a lease is one statement: the INSERT takes a free lease;
// on the name's conflict the row is locked and changed only when its lease expired or is
// already ours; RETURNING gives a row only to the node that got it. A second node racing
// waits on the first's row lock and then sees its new expires_at, so it gets nothing.
import type { SQL } from "bun";
import type { JobLeaseRepo } from "./job-lease.port.ts";

export function createPgJobLeaseRepo(sql: SQL): JobLeaseRepo {
  return {
    async tryHold(job, holder, nowMs, leaseMs) {
      const rows: { holder: string }[] = await sql`
        INSERT INTO job_leases (name, holder, expires_at) VALUES (${job}, ${holder}, ${nowMs + leaseMs})
        ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE job_leases.expires_at <= ${nowMs} OR job_leases.holder = ${holder}
        RETURNING holder`;
      return rows.length === 1;
    },
    async renew(holder, jobs, nowMs, leaseMs) {
      if (jobs.length === 0) return [];
      // Held as tryHold says (expires_at > now); the row lock orders it against a takeover.
      const rows: { name: string }[] = await sql`UPDATE job_leases SET expires_at = ${nowMs + leaseMs}
        WHERE holder = ${holder} AND name = ANY(${sql.array(jobs as string[], "TEXT")}) AND expires_at > ${nowMs} RETURNING name`;
      return rows.map((r) => r.name);
    },
    async release(job, holder) {
      await sql`DELETE FROM job_leases WHERE name = ${job} AND holder = ${holder}`;
    },
  };
}
