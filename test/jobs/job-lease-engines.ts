// The job_leases table on a store engine for the lease tests: the engine opened (for
// clear and close) and the repository of that engine on it.
import type { JobLeaseRepo } from "../../src/jobs/job-lease.port.ts";
import { createJobLeaseRepo } from "../../src/jobs/job-lease.repo.ts";
import type { EngineHandle, StoreEngine } from "../helpers/engines.ts";

export async function openJobLeases(engine: StoreEngine): Promise<{ handle: EngineHandle; repo: JobLeaseRepo }> {
  const handle = await engine.open();
  return { handle, repo: createJobLeaseRepo(handle.db) };
}
