// What a delivery worker knows of its leases (HeldRecipients), with a scripted store: a
// renewal moves the end of every lease the store renewed; one the store did not renew is
// forgotten (not renewed again, not attempted), unless it was given back or claimed again
// while the renewal was under way; a lease is counted on only until its known end.
import { describe, expect, test } from "bun:test";
import { silentLogger } from "../../src/lib/logger.ts";
import { HeldRecipients } from "../../src/outbound/delivery/held-recipients.ts";

const LEASE_MS = 30_000;

function heldWith(answer: (ids: readonly string[]) => string[] | Promise<string[]>) {
  const clock = { t: 1_000_000, nowMs: () => clock.t };
  const asked: { ids: string[]; nowMs: number; untilMs: number }[] = [];
  const repo = {
    renewLeases: async (_worker: string, ids: readonly string[], nowMs: number, untilMs: number) => {
      asked.push({ ids: [...ids], nowMs, untilMs });
      return answer(ids);
    },
  };
  return { held: new HeldRecipients(repo, "w1", clock, silentLogger, () => LEASE_MS), clock, asked };
}

describe("HeldRecipients", () => {
  test("a claimed recipient is counted on until its lease's end, and no later", () => {
    const { held, clock } = heldWith((ids) => [...ids]);
    held.add(["r1"], clock.t + LEASE_MS);
    expect(held.holds("r1", clock.t + LEASE_MS)).toBe(true);
    expect(held.holds("r1", clock.t + LEASE_MS + 1)).toBe(false);
    expect(held.holds("never", clock.t)).toBe(false);
  });

  test("one renewal asks for every lease held, and moves the end of those renewed", async () => {
    const { held, clock, asked } = heldWith((ids) => [...ids]);
    held.add(["r1", "r2"], clock.t + LEASE_MS);
    clock.t += LEASE_MS / 3;
    await held.renew();
    expect(asked).toEqual([{ ids: ["r1", "r2"], nowMs: clock.t, untilMs: clock.t + LEASE_MS }]);
    expect(held.holds("r1", clock.t + LEASE_MS)).toBe(true);
    expect(held.size).toBe(2);
  });

  test("one not renewed is lost: not counted on, not asked for again", async () => {
    const { held, clock, asked } = heldWith(() => ["r2"]);
    held.add(["r1", "r2"], clock.t + LEASE_MS);
    await held.renew();
    expect(held.holds("r1", clock.t)).toBe(false);
    expect(held.holds("r2", clock.t)).toBe(true);
    await held.renew();
    expect(asked.map((a) => a.ids)).toEqual([["r1", "r2"], ["r2"]]);
  });

  test("nothing held: the store is not asked", async () => {
    const { held, asked } = heldWith((ids) => [...ids]);
    await held.renew();
    held.add(["r1"], 5);
    held.drop(["r1"]);
    await held.renew();
    expect(asked).toEqual([]);
  });

  test("given back and claimed again while a renewal was under way: the new claim is not taken for lost", async () => {
    let answer!: (ids: string[]) => void;
    const { held, clock } = heldWith(() => new Promise<string[]>((resolve) => (answer = resolve)));
    held.add(["r1", "r2"], clock.t + LEASE_MS);
    const renewal = held.renew();
    // Meanwhile r1 is given back (then claimed anew) and r2's outcome is being recorded.
    held.drop(["r1", "r2"]);
    held.add(["r1"], clock.t + 2 * LEASE_MS);
    answer([]);
    await renewal;
    expect(held.holds("r1", clock.t + 2 * LEASE_MS)).toBe(true);
    expect(held.holds("r2", clock.t)).toBe(false);
    expect(held.size).toBe(1);
  });
});
