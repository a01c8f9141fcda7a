// The JobLeaseRepo contract, run on both engines: createJobLeaseRepo on SQLite and on
// PostgreSQL (a throwaway server with the postgres migrations). A
// lease goes to one holder at a time: a second holder is refused while it runs, takes it
// once it expired, the holder renews it, its release frees it, another's release does
// nothing. On PostgreSQL, many nodes (connections) asking at the same moment, for a free
// lease and for an expired one, leave exactly one of them holding it.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { SQL } from "bun";
import { createJobLeaseRepo } from "../../src/jobs/job-lease.repo.ts";
import { pgDb } from "../../src/store/db/pg-db.ts";
import type { JobLeaseRepo } from "../../src/jobs/job-lease.port.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { openJobLeases } from "./job-lease-engines.ts";

// Past 2^32 ms (as Date.now() is), so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;
const LEASE_MS = 120_000;
const JOB = "verify-sending-domains";

describe.each(STORE_ENGINES)("JobLeaseRepo on $name", (engine) => {
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

  it("a free lease goes to the first holder; a second is refused while it runs", async () => {
    expect(await repo.tryHold(JOB, "node-a", NOW_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold(JOB, "node-b", NOW_MS + 1, LEASE_MS)).toBe(false);
    expect(await repo.tryHold(JOB, "node-b", NOW_MS + LEASE_MS - 1, LEASE_MS)).toBe(false);
  });

  it("two holders asking at once: exactly one gets it", async () => {
    const got = await Promise.all([repo.tryHold(JOB, "node-a", NOW_MS, LEASE_MS), repo.tryHold(JOB, "node-b", NOW_MS, LEASE_MS)]);
    expect(got.filter(Boolean)).toHaveLength(1);
    // The one refused stays refused: the winner's lease runs on.
    const loser = got[0] ? "node-b" : "node-a";
    expect(await repo.tryHold(JOB, loser, NOW_MS + 1, LEASE_MS)).toBe(false);
  });

  it("an expired lease goes to the next holder that asks (at expires_at), and its old holder is then refused", async () => {
    expect(await repo.tryHold(JOB, "node-a", NOW_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold(JOB, "node-b", NOW_MS + LEASE_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold(JOB, "node-a", NOW_MS + LEASE_MS + 1, LEASE_MS)).toBe(false);
  });

  it("the holder renews its lease: it runs on from the renewal, not from the first hold", async () => {
    expect(await repo.tryHold(JOB, "node-a", NOW_MS, LEASE_MS)).toBe(true);
    const renewedAt = NOW_MS + LEASE_MS - 1;
    expect(await repo.tryHold(JOB, "node-a", renewedAt, LEASE_MS)).toBe(true);
    expect(await repo.tryHold(JOB, "node-b", NOW_MS + LEASE_MS, LEASE_MS)).toBe(false);
    expect(await repo.tryHold(JOB, "node-b", renewedAt + LEASE_MS - 1, LEASE_MS)).toBe(false);
    expect(await repo.tryHold(JOB, "node-b", renewedAt + LEASE_MS, LEASE_MS)).toBe(true);
  });

  it("the holder's release frees the lease at once", async () => {
    expect(await repo.tryHold(JOB, "node-a", NOW_MS, LEASE_MS)).toBe(true);
    await repo.release(JOB, "node-a");
    expect(await repo.tryHold(JOB, "node-b", NOW_MS + 1, LEASE_MS)).toBe(true);
  });

  it("another holder's release does nothing: the lease stays with its holder", async () => {
    expect(await repo.tryHold(JOB, "node-a", NOW_MS, LEASE_MS)).toBe(true);
    await repo.release(JOB, "node-b");
    expect(await repo.tryHold(JOB, "node-b", NOW_MS + 1, LEASE_MS)).toBe(false);
    expect(await repo.tryHold(JOB, "node-a", NOW_MS + 2, LEASE_MS)).toBe(true);
  });

  it("each job has its own lease", async () => {
    expect(await repo.tryHold(JOB, "node-a", NOW_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold("retention-purge", "node-b", NOW_MS, LEASE_MS)).toBe(true);
    expect(await repo.tryHold("retention-purge", "node-a", NOW_MS, LEASE_MS)).toBe(false);
  });

  if (engine.name === "PostgreSQL") {
    const NODES = 16;
    const ROUNDS = 10;

    it(`${NODES} nodes on their own connections asking at once, ${ROUNDS} times for a free lease and ${ROUNDS} for an expired one: each time exactly one holds it`, async () => {
      if (handle?.kind !== "postgres") throw new Error("not PostgreSQL");
      const pool = new SQL(handle.url, { max: NODES });
      try {
        const nodes = createJobLeaseRepo(pgDb(pool));
        // Every connection open first, so the attempts meet at the server, not in the pool.
        await Promise.all(Array.from({ length: NODES }, () => pool`SELECT pg_sleep(0.05)`));
        const winners: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          for (const [job, atMs] of [
            [`free-${round}`, NOW_MS],
            [JOB, NOW_MS + (round + 1) * LEASE_MS], // the previous round's lease just expired
          ] as const) {
            const got = await Promise.all(Array.from({ length: NODES }, (_, n) => nodes.tryHold(job, `node-${n}`, atMs, LEASE_MS)));
            winners.push(got.filter(Boolean).length);
          }
        }
        expect(winners).toEqual(Array(2 * ROUNDS).fill(1));
        // The last winner is the one the table names.
        const [row] = await pool`SELECT holder FROM job_leases WHERE name = ${JOB}`;
        expect(await nodes.tryHold(JOB, row.holder, NOW_MS + ROUNDS * LEASE_MS + 1, LEASE_MS)).toBe(true);
      } finally {
        await pool.close();
      }
    }, 60_000);
  }
});
