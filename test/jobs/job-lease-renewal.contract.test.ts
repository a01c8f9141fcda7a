// Renewing job leases (JobLeaseRepo.renew, the scheduler's heartbeat), on both engines: a
// node's leases renewed stay held past their first end, however long its run takes; not
// renewed, another node takes them once they ended; a node whose lease expired or was
// taken renews nothing of it; a node renews only the jobs it names (not a lease its earlier
// process left on a job it no longer runs). One statement for all of a node's jobs.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { JobLeaseRepo } from "../../src/jobs/job-lease.port.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { openJobLeases } from "./job-lease-engines.ts";

const NOW_MS = 1_795_000_000_000;
const LEASE_MS = 30_000;

describe.each(STORE_ENGINES)("job lease renewal on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  let repo: JobLeaseRepo;

  beforeAll(async () => {
    if (engine.available()) ({ handle, repo } = await openJobLeases(engine));
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(["job_leases"]);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("a node's leases renewed together stay held past their first end; not renewed, another node takes them when they end", async () => {
    expect(await repo.tryHold("a-job", "node-a", NOW_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold("b-job", "node-a", NOW_MS, LEASE_MS)).toBe(true);
    const beatMs = NOW_MS + LEASE_MS / 3;
    expect((await repo.renew("node-a", ["a-job", "b-job"], beatMs, LEASE_MS)).sort()).toEqual(["a-job", "b-job"]);
    expect(await repo.tryHold("a-job", "node-b", NOW_MS + LEASE_MS, LEASE_MS)).toBe(false);
    expect(await repo.tryHold("b-job", "node-b", beatMs + LEASE_MS - 1, LEASE_MS)).toBe(false);
    // node-a stops beating: at the renewed end node-b takes them.
    expect(await repo.tryHold("a-job", "node-b", beatMs + LEASE_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold("b-job", "node-b", beatMs + LEASE_MS, LEASE_MS)).toBe(true);
  });

  it("a renewal by a node whose lease was taken, or expired, fails", async () => {
    expect(await repo.tryHold("a-job", "node-a", NOW_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold("a-job", "node-b", NOW_MS + LEASE_MS, LEASE_MS)).toBe(true);
    expect(await repo.renew("node-a", ["a-job"], NOW_MS + LEASE_MS + 1, LEASE_MS)).toEqual([]);
    expect(await repo.tryHold("a-job", "node-a", NOW_MS + LEASE_MS + 2, LEASE_MS)).toBe(false);
    // node-b's lease ran out unclaimed: it is not renewed either (another node may be taking it).
    expect(await repo.renew("node-b", ["a-job"], NOW_MS + 2 * LEASE_MS, LEASE_MS)).toEqual([]);
    expect(await repo.renew("node-b", [], NOW_MS, LEASE_MS)).toEqual([]);
  });

  it("only the jobs named are renewed", async () => {
    expect(await repo.tryHold("kept", "node-a", NOW_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold("left-over", "node-a", NOW_MS, LEASE_MS)).toBe(true);
    expect(await repo.renew("node-a", ["kept"], NOW_MS + 1, LEASE_MS)).toEqual(["kept"]);
    expect(await repo.tryHold("left-over", "node-b", NOW_MS + LEASE_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold("kept", "node-b", NOW_MS + LEASE_MS, LEASE_MS)).toBe(false);
  });
});
