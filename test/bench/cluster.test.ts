// bench:cluster's accounting (bench/cluster.ts): a setup's CPU is read from /proc over its
// whole process tree (processTreeCpuMs), because a PostgreSQL server does its work in
// backends that come and go; a backend that exited during a run must still be counted
// (through its parent's reaped-children time), and so must one still running. The work
// dealt out to two nodes must reach each exactly once. And its PostgreSQL must flush every
// commit, as the SQLite it is compared with does (the tests' server does not).
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { processCpuMs, processTreeCpuMs } from "../../bench/child.ts";
import { dealt } from "../../bench/cluster-run.ts";
import { DURABLE_SETTINGS, startPostgres } from "../helpers/postgres.ts";
import { requireTools } from "../helpers/tools.ts";

/** A shell loop that burns a few hundred ms of CPU, then prints "done". */
const BUSY = 'i=0; while [ "$i" -lt 400000 ]; do i=$((i+1)); done; echo done';

/** Runs `script` under sh and resolves once it printed "done" (it then sleeps until killed). */
async function spawnUntilDone(script: string) {
  const proc = Bun.spawn(["sh", "-c", script], { stdout: "pipe", stderr: "ignore" });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("done")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`exited before "done": ${out}`);
    out += new TextDecoder().decode(value);
  }
  return proc;
}

describe("processTreeCpuMs", () => {
  test("counts a child that burned CPU and exited (reaped by its parent), which the parent's own time does not", async () => {
    const proc = await spawnUntilDone(`sh -c '${BUSY}' >/dev/null; echo done; exec sleep 60`);
    try {
      const tree = processTreeCpuMs(proc.pid);
      expect(tree).toBeGreaterThanOrEqual(50);
      expect(processCpuMs(proc.pid)).toBeLessThan(tree);
    } finally {
      proc.kill();
      await proc.exited;
    }
  }, 60_000);

  test("counts a grandchild still running", async () => {
    // The outer shell waits; the inner one burns CPU, says "done" and sleeps, alive.
    const proc = await spawnUntilDone(`sh -c '${BUSY}; exec sleep 60' & wait`);
    try {
      expect(processTreeCpuMs(proc.pid)).toBeGreaterThanOrEqual(50);
      expect(processCpuMs(proc.pid, true)).toBeLessThan(processTreeCpuMs(proc.pid));
    } finally {
      Bun.spawnSync(["pkill", "-P", String(proc.pid)]);
      proc.kill();
      await proc.exited;
    }
  }, 60_000);

  test("is 0 for a process that is gone", () => {
    const gone = Bun.spawnSync(["true"]).pid;
    expect(processTreeCpuMs(gone)).toBe(0);
  });
});

describe("dealt", () => {
  test.each([
    [[1, 2, 3, 4, 5], 1, [[1, 2, 3, 4, 5]]],
    [
      [1, 2, 3, 4, 5],
      2,
      [
        [1, 3, 5],
        [2, 4],
      ],
    ],
    [[1], 2, [[1], []]],
  ])("%j to %d parts", (items, parts, expected) => {
    expect(dealt(items, parts)).toEqual(expected);
  });
});

describe("the benchmark's PostgreSQL", () => {
  requireTools("postgresql")(
    "runs with DURABLE_SETTINGS: fsync, full page writes and synchronous commits on",
    async () => {
      const pg = await startPostgres({ settings: DURABLE_SETTINGS });
      const sql = new SQL(pg.url, { max: 1 });
      try {
        const show = async (name: string) => ((await sql.unsafe(`SHOW ${name}`)) as Record<string, string>[])[0]![name];
        expect({
          fsync: await show("fsync"),
          full_page_writes: await show("full_page_writes"),
          synchronous_commit: await show("synchronous_commit"),
        }).toEqual({ fsync: "on", full_page_writes: "on", synchronous_commit: "on" });
      } finally {
        await sql.close();
        await pg.stop();
      }
    },
    60_000,
  );
});
