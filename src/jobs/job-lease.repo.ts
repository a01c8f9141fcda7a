// SQL for job leases: the JobLeaseRepo port (job-lease.port.ts), written once for both
// engines against a Db (src/store/db/db.ts). Several nodes ask at once, so taking a lease
// is one statement: the INSERT takes a free lease; on the name's conflict the row is
// changed only when its lease expired or is already ours; RETURNING gives a row only to the
// node that got it. On PostgreSQL a second node racing waits on the first's row lock and
// then sees its new expires_at, so it gets nothing; SQLite has one writer at a time.
import type { Db } from "../store/db/db.ts";
import { inList, sql } from "../store/db/sql.ts";
import type { JobLeaseRepo } from "./job-lease.port.ts";

export function createJobLeaseRepo(db: Db): JobLeaseRepo {
  return {
    async tryHold(job, holder, nowMs, leaseMs) {
      const rows = await db.all<{ holder: string }>(sql`
        INSERT INTO job_leases (name, holder, expires_at) VALUES (${job}, ${holder}, ${nowMs + leaseMs})
        ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
        WHERE job_leases.expires_at <= ${nowMs} OR job_leases.holder = ${holder}
        RETURNING holder`);
      return rows.length === 1;
    },
    async renew(holder, jobs, nowMs, leaseMs) {
      if (jobs.length === 0) return [];
      // Held as tryHold says (expires_at > now); the row lock orders it against a takeover.
      const rows = await db.all<{ name: string }>(sql`UPDATE job_leases SET expires_at = ${nowMs + leaseMs}
        WHERE holder = ${holder} AND ${inList("name", jobs)} AND expires_at > ${nowMs} RETURNING name`);
      return rows.map((r) => r.name);
    },
    async release(job, holder) {
      await db.run(sql`DELETE FROM job_leases WHERE name = ${job} AND holder = ${holder}`);
    },
  };
}
