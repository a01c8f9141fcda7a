// Jobs that run once per cluster: two schedulers (two nodes, node-a and node-b) on one
// store, on both engines, each ticking the same job as its timer would. The job runs once
// per period, on the node holding its lease, never on both; the holder's heartbeat renews
// the lease (cluster.job_lease_time, far shorter than the period) between runs and during
// a long one; when the holder stops beating (dead, cut off) the other takes the job over
// once the lease ran out, within one lease time however long the period, and at once when
// the holder stops cleanly. Time is a ManualClock; the timers never fire here: the test
// calls tick() and renewLeases(), the functions the job's timer and the heartbeat call.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { JobLeaseRepo } from "../../src/jobs/job-lease.port.ts";
import { Scheduler } from "../../src/jobs/scheduler.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { createLogger, silentLogger, type Logger } from "../../src/lib/logger.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { openJobLeases } from "./job-lease-engines.ts";

const T0_MS = 1_795_000_000_000;
const PERIOD_MS = 3_600_000;
const LEASE_MS = 30_000;
/** The heartbeat: a third of the lease. */
const BEAT_MS = LEASE_MS / 3;
const JOB = "retention-purge";

/** A node: its scheduler with the one job, and the times the job ran there. */
interface Node {
  scheduler: Scheduler;
  runs: number[];
}

describe.each(STORE_ENGINES)("jobs once per cluster, two nodes on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  let repo: JobLeaseRepo;
  let clock: ManualClock;
  let nodes: Node[] = [];

  const node = (holder: string, opts: { oncePerCluster?: boolean; fn?: () => Promise<unknown>; logger?: Logger } = {}): Node => {
    const runs: number[] = [];
    const scheduler = new Scheduler(opts.logger ?? silentLogger, { repo, holder, clock, leaseMs: LEASE_MS });
    scheduler.everyMs(JOB, PERIOD_MS, opts.fn ?? (async () => runs.push(clock.nowMs())), { oncePerCluster: opts.oncePerCluster ?? true });
    const n = { scheduler, runs };
    nodes.push(n);
    return n;
  };

  /** Time passes until `untilMs`, the `beating` nodes' heartbeats renewing their leases as they go. */
  const elapse = async (untilMs: number, ...beating: Node[]) => {
    while (clock.nowMs() + BEAT_MS <= untilMs) {
      clock.advance(BEAT_MS);
      for (const n of beating) await n.scheduler.renewLeases();
    }
    clock.set(untilMs);
  };

  beforeAll(async () => {
    if (engine.available()) ({ handle, repo } = await openJobLeases(engine));
  }, 60_000);
  beforeEach(async () => {
    for (const n of nodes) await n.scheduler.stop();
    nodes = [];
    clock = new ManualClock(T0_MS);
    await handle?.clear(["job_leases"]);
  });
  afterAll(async () => {
    for (const n of nodes) await n.scheduler.stop();
    await handle?.close();
  });

  it("both nodes tick every period: the job runs once per period, always on the node that took the lease first", async () => {
    const a = node("node-a");
    const b = node("node-b");
    for (let period = 0; period < 5; period++) {
      // The nodes' timers are not in step: a few seconds apart, either one first.
      await elapse(T0_MS + period * PERIOD_MS, a, b);
      const [first, second] = period % 2 === 0 ? [b, a] : [a, b];
      await first.scheduler.tick(JOB);
      clock.advance(3_000);
      await second.scheduler.tick(JOB);
    }
    expect(a.runs.length + b.runs.length).toBe(5);
    expect(b.runs).toHaveLength(5);
    expect(a.runs).toEqual([]);
  });

  it("both nodes ticking at the same moment: one run per period, not two", async () => {
    const a = node("node-a");
    const b = node("node-b");
    for (let period = 0; period < 5; period++) {
      await elapse(T0_MS + period * PERIOD_MS, a, b);
      await Promise.all([a.scheduler.tick(JOB), b.scheduler.tick(JOB)]);
    }
    expect(a.runs.length + b.runs.length).toBe(5);
  });

  it("when the holder stops beating, the other takes the job over once the lease ran out, not before: within one lease time, not one period", async () => {
    const a = node("node-a");
    const b = node("node-b");
    await a.scheduler.tick(JOB);
    // node-a beats for a while, then goes quiet (killed, cut off): its last renewal is at T0 + 2 beats.
    await elapse(T0_MS + 2 * BEAT_MS, a);
    const lastBeatMs = clock.nowMs();
    clock.set(lastBeatMs + LEASE_MS - 1);
    await b.scheduler.tick(JOB);
    expect(b.runs).toEqual([]);
    clock.set(lastBeatMs + LEASE_MS);
    await b.scheduler.tick(JOB);
    expect(b.runs).toEqual([lastBeatMs + LEASE_MS]);
    // node-a back: its heartbeat finds the lease lost, and it skips the job; node-b holds it.
    await a.scheduler.renewLeases();
    await elapse(clock.nowMs() + PERIOD_MS, b);
    await a.scheduler.tick(JOB);
    await b.scheduler.tick(JOB);
    expect(a.runs).toEqual([T0_MS]);
    expect(b.runs).toEqual([lastBeatMs + LEASE_MS, lastBeatMs + LEASE_MS + PERIOD_MS]);
  });

  it("a node that stops cleanly gives its lease up: the other runs the job at its next tick", async () => {
    const a = node("node-a");
    const b = node("node-b");
    await a.scheduler.tick(JOB);
    await a.scheduler.stop();
    clock.advance(1_000);
    await b.scheduler.tick(JOB);
    expect(b.runs).toEqual([T0_MS + 1_000]);
  });

  it("a run that outlasts the lease and its period keeps it: the holder's heartbeat renews it meanwhile, so the other never starts a second run", async () => {
    let finish!: () => void;
    let started = 0;
    // The first run lasts until finish(); later ones end at once.
    const a = node("node-a", { fn: () => (++started === 1 ? new Promise<void>((resolve) => (finish = resolve)) : Promise.resolve()) });
    const b = node("node-b");
    const firstRun = a.scheduler.tick(JOB);
    // The first tick's run must be the one that started before the clock moves: on
    // PostgreSQL the next tick's lease query can be answered first (another connection of
    // the pool), and then that tick would start the long run and wait on it here.
    while (started === 0) await Bun.sleep(1);
    for (let period = 1; period <= 3; period++) {
      await elapse(T0_MS + period * PERIOD_MS, a);
      await a.scheduler.tick(JOB);
      await b.scheduler.tick(JOB);
    }
    expect(started).toBe(1);
    expect(b.runs).toEqual([]);
    finish();
    await firstRun;
    await elapse(clock.nowMs() + PERIOD_MS, a);
    await a.scheduler.tick(JOB);
    expect(started).toBe(2);
  });

  it("a run skipped for another node's lease is logged at debug level with the job's name", async () => {
    const lines: Record<string, unknown>[] = [];
    const a = node("node-a");
    const b = node("node-b", { logger: createLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line)) }) });
    await a.scheduler.tick(JOB);
    await b.scheduler.tick(JOB);
    expect(b.runs).toEqual([]);
    expect(lines).toEqual([expect.objectContaining({ level: "debug", msg: "job skipped: another node holds its lease", job: JOB })]);
  });

  it("a job that runs per node (no lease) runs on both", async () => {
    const a = node("node-a", { oncePerCluster: false });
    const b = node("node-b", { oncePerCluster: false });
    await a.scheduler.tick(JOB);
    await b.scheduler.tick(JOB);
    expect([a.runs, b.runs]).toEqual([[T0_MS], [T0_MS]]);
  });
});
