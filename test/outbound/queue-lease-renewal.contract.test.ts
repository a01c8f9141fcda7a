// Renewing recipient leases (QueueLeases.renewLeases, the delivery worker's heartbeat), run
// on both engines: a lease renewed by its holder stays held past its first end, so a slow
// attempt keeps its recipient; one not renewed is claimed by another worker once it ends;
// a renewal by a worker whose lease ran out, or was taken over, or that already recorded
// its outcome, renews nothing and says so (the recipient is not in the answer). One
// statement renews all the recipients a worker holds.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { OutboundRepo } from "../../src/outbound/queue/queue.port.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { delivered, event, ids, LEASE_MS, NOW, type OpenedQueue, openQueue, QUEUE_TABLES as TABLES, queueIn } from "./queue-engines.ts";

describe.each(STORE_ENGINES)("recipient lease renewal on $name", (engine) => {
  const it = engine.test;
  let opened: OpenedQueue | undefined;
  const repo = (): OutboundRepo => opened!.repo;

  beforeAll(async () => {
    if (engine.available()) opened = await openQueue(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(TABLES);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("a lease renewed by its holder stays held past its first end; another worker claims it only once the renewed lease ended", async () => {
    await queueIn(repo(), "m1", [
      ["r1", {}],
      ["r2", {}],
    ]);
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, [])).sort()).toEqual(["r1", "r2"]);
    // A third of the lease later, the holder's heartbeat renews both at once.
    const beatMs = NOW + LEASE_MS / 3;
    expect((await repo().renewLeases("w1", ["r1", "r2"], beatMs, beatMs + LEASE_MS)).sort()).toEqual(["r1", "r2"]);
    expect(await repo().claimDue("w2", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, 10, [])).toEqual([]);
    expect(await repo().claimDue("w2", beatMs + LEASE_MS, beatMs + 2 * LEASE_MS, 10, [])).toEqual([]);
    // And the holder's outcome past the first end is recorded.
    expect(
      await repo().finishAttempt("w1", "r1", delivered(1), [event("m1", "r1", "delivery")], NOW + LEASE_MS + 2, { webhook: false }),
    ).toHaveLength(1);
    // Not renewed again: r2 moves to another worker once the renewed lease ended.
    expect(ids(await repo().claimDue("w2", beatMs + LEASE_MS + 1, beatMs + 2 * LEASE_MS, 10, []))).toEqual(["r2"]);
    expect((await opened!.row("r2"))!.locked_by).toBe("w2");
  });

  it("a lease not renewed is claimed by another worker after it ends, and its old holder's renewal then fails", async () => {
    await queueIn(repo(), "m1", [["r1", {}]]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    expect(ids(await repo().claimDue("w2", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, 10, []))).toEqual(["r1"]);
    expect(await repo().renewLeases("w1", ["r1"], NOW + LEASE_MS + 2, NOW + 2 * LEASE_MS + 2)).toEqual([]);
    expect((await opened!.row("r1"))!.locked_by).toBe("w2");
    // w2 keeps it, and its own renewal works.
    expect(await repo().renewLeases("w2", ["r1"], NOW + LEASE_MS + 3, NOW + 3 * LEASE_MS)).toEqual(["r1"]);
    expect(await repo().claimDue("w3", NOW + 2 * LEASE_MS + 1, NOW + 4 * LEASE_MS, 10, [])).toEqual([]);
  });

  it("a lease that ran out is not renewed, even before another worker took it; nor one already finished or released", async () => {
    await queueIn(repo(), "m1", [
      ["late", {}],
      ["done", {}],
      ["given-back", {}],
      ["kept", {}],
    ]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    expect(await repo().renewLeases("w1", ["late"], NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS)).toEqual([]);
    // Its outcome is dropped as well, as the renewal said.
    expect(await repo().finishAttempt("w1", "late", delivered(1), [], NOW + LEASE_MS + 1, { webhook: false })).toBeNull();
    await repo().finishAttempt("w1", "done", delivered(1), [], NOW + 1, { webhook: false });
    await repo().release(["given-back"], "w1");
    expect(await repo().renewLeases("w1", ["done", "given-back", "kept", "never-queued"], NOW + 2, NOW + 2 + LEASE_MS)).toEqual(["kept"]);
    expect(await opened!.row("done")).toMatchObject({ state: "done", locked_by: null });
    expect(await opened!.row("given-back")).toMatchObject({ state: "queued", locked_by: null });
    expect(await repo().renewLeases("w1", [], NOW + 3, NOW + 3 + LEASE_MS)).toEqual([]);
  });

  it("one renewal renews many recipients (a worker's whole hand: 5000 of them)", async () => {
    const many = Array.from({ length: 5000 }, (_, i): [string, object] => [`r${String(i).padStart(4, "0")}`, {}]);
    await queueIn(repo(), "m1", many);
    expect((await repo().claimDue("w1", NOW, NOW + LEASE_MS, 5000, [])).length).toBe(5000);
    const renewed = await repo().renewLeases(
      "w1",
      many.map(([id]) => id),
      NOW + 1,
      NOW + 10 * LEASE_MS,
    );
    expect(renewed.length).toBe(5000);
    expect(await repo().claimDue("w2", NOW + 2 * LEASE_MS, NOW + 3 * LEASE_MS, 10, [])).toEqual([]);
  }, 30_000);
});
