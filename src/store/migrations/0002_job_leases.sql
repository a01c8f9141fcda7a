-- Leases of the periodic jobs that run once per cluster (src/jobs/job-lease.port.ts): the
-- node that holds a job's lease (its cluster.node_id) runs it until expires_at (ms);
-- another node takes it over only once it expired, so a stopped node's jobs go on.
CREATE TABLE job_leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
