// What a webhook dispatcher knows of its batches' leases (HeldBatches), with a scripted
// store: a renewal moves the end of each lease renewed (the end is the lease's identity, so
// the finish must use it); release() waits for a renewal under way, so a batch is finished
// with the end the store has; a lease not renewed is forgotten.
import { describe, expect, test } from "bun:test";
import { HeldBatches } from "../../src/events/held-batches.ts";
import type { OutboxLease } from "../../src/events/outbox.port.ts";
import { silentLogger } from "../../src/lib/logger.ts";

const LEASE_MS = 30_000;

function heldWith(answer: (leases: readonly OutboxLease[]) => string[] | Promise<string[]>, leaseMs = LEASE_MS) {
  const clock = { t: 1_000_000, nowMs: () => clock.t };
  const asked: { batches: string[]; untilMs: number }[] = [];
  const repo = {
    renewLeases: async (leases: readonly OutboxLease[], _nowMs: number, untilMs: number) => {
      asked.push({ batches: leases.map((l) => l.batchId), untilMs });
      return answer(leases);
    },
  };
  return { held: new HeldBatches(repo, clock, silentLogger, () => leaseMs), clock, asked };
}

describe("HeldBatches", () => {
  test("one renewal for every batch held; a renewed lease ends later, one not renewed is not asked for again", async () => {
    const { held, clock, asked } = heldWith(() => ["b1"]);
    const b1 = { batchId: "b1", untilMs: clock.t + LEASE_MS };
    const b2 = { batchId: "b2", untilMs: clock.t + LEASE_MS };
    held.add(b1);
    held.add(b2);
    clock.t += 10_000;
    await held.renew();
    expect(b1.untilMs).toBe(clock.t + LEASE_MS);
    expect(b2.untilMs).toBe(clock.t - 10_000 + LEASE_MS);
    await held.renew();
    expect(asked.map((a) => a.batches)).toEqual([["b1", "b2"], ["b1"]]);
  });

  test("release waits for the heartbeat's renewal under way: the lease then has the end the store set", async () => {
    let answer!: (ids: string[]) => void;
    // A 30 ms lease: the heartbeat beats after 10 ms, and its renewal waits for the store.
    const { held, clock, asked } = heldWith(() => new Promise<string[]>((resolve) => (answer = resolve)), 30);
    const lease = { batchId: "b1", untilMs: clock.t + 30 };
    held.add(lease);
    held.start();
    while (asked.length === 0) await Bun.sleep(1);
    held.stop();
    let released = false;
    const release = held.release(lease).then(() => (released = true));
    await Bun.sleep(5);
    expect(released).toBe(false);
    answer(["b1"]);
    await release;
    expect(lease.untilMs).toBe(asked[0]!.untilMs);
  });

  test("released: no longer renewed", async () => {
    const { held, clock, asked } = heldWith((leases) => leases.map((l) => l.batchId));
    const lease = { batchId: "b1", untilMs: clock.t + LEASE_MS };
    held.add(lease);
    await held.release(lease);
    await held.renew();
    expect(asked).toEqual([]);
    expect(lease.untilMs).toBe(clock.t + LEASE_MS);
  });
});
