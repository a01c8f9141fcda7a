// Renewing webhook batch leases (OutboxLeases.renewLeases, the dispatcher's heartbeat), on
// both engines: a batch renewed by its holder stays leased past its first end, so a slow
// receiver keeps its batch on this node, and the holder's finish still counts; not renewed,
// another node claims it once the lease ended; a renewal by a node whose lease ran out, was
// taken over or was cut short by "retry now" fails. One statement renews every batch a
// node holds (one per outbound account).
import { describe, expect } from "bun:test";
import type { NewEvent } from "../../src/events/message-event.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { eventEngine } from "./outbox-rows.ts";

const NOW_MS = 1_795_000_000_000;
const LEASE_MS = 30_000;

const ev = (messageId: string, recipientId: string, kind: NewEvent["kind"]): NewEvent => ({
  messageId,
  recipientId,
  kind,
  details: { kind },
  createdAtMs: NOW_MS - 1000,
});

describe.each(STORE_ENGINES)("webhook batch lease renewal on $name", (engine) => {
  const s = eventEngine(engine, [
    { id: "m1", accountId: "acct", outboundAccountId: "o1", recipients: [{ id: "r1", email: "r1@x.test" }] },
    { id: "m2", accountId: "acct", outboundAccountId: "o2", recipients: [{ id: "r2", email: "r2@x.test" }] },
  ]);

  engine.test(
    "batches renewed together stay leased past their first end; the holder's finish counts; not renewed, another node claims them",
    async () => {
      await s.events.record([ev("m1", "r1", "registration"), ev("m2", "r2", "registration")]);
      const one = (await s.outbox.claimBatch("o1", NOW_MS, 100, LEASE_MS))!;
      const two = (await s.outbox.claimBatch("o2", NOW_MS + 5, 100, LEASE_MS))!;
      const beatMs = NOW_MS + LEASE_MS / 3;
      expect((await s.outbox.renewLeases([one.lease, two.lease], beatMs, beatMs + LEASE_MS)).sort()).toEqual([one.id, two.id].sort());
      one.lease.untilMs = beatMs + LEASE_MS;
      two.lease.untilMs = beatMs + LEASE_MS;
      expect(await s.outbox.claimBatch("o1", NOW_MS + LEASE_MS, 100, LEASE_MS)).toBeNull();
      expect(await s.outbox.claimBatch("o1", beatMs + LEASE_MS - 1, 100, LEASE_MS)).toBeNull();
      expect(await s.outbox.pendingOf("o1")).toMatchObject({ dueMs: beatMs + LEASE_MS });
      expect(await s.outbox.finishSent(one.lease)).toBe(true);
      // two is not renewed again: another node claims it at the renewed end; its old holder's renewal and finish fail.
      const taken = (await s.outbox.claimBatch("o2", beatMs + LEASE_MS, 100, LEASE_MS))!;
      expect(taken.id).toBe(two.id);
      expect(await s.outbox.renewLeases([two.lease], beatMs + LEASE_MS + 1, beatMs + 2 * LEASE_MS)).toEqual([]);
      expect(await s.outbox.finishSent(two.lease)).toBe(false);
      expect(await s.outbox.renewLeases([taken.lease], beatMs + LEASE_MS + 2, beatMs + 2 * LEASE_MS)).toEqual([taken.id]);
    },
  );

  engine.test("a lease that ran out is not renewed, even unclaimed; nor one cut short by retry now", async () => {
    await s.events.record([ev("m1", "r1", "registration"), ev("m2", "r2", "registration")]);
    const one = (await s.outbox.claimBatch("o1", NOW_MS, 100, LEASE_MS))!;
    expect(await s.outbox.renewLeases([one.lease], NOW_MS + LEASE_MS, NOW_MS + 2 * LEASE_MS)).toEqual([]);
    const two = (await s.outbox.claimBatch("o2", NOW_MS, 100, LEASE_MS))!;
    expect(await s.outbox.dueNow("o2", NOW_MS + 1)).toBe(1);
    expect(await s.outbox.renewLeases([two.lease], NOW_MS + 2, NOW_MS + 2 + LEASE_MS)).toEqual([]);
    expect(await s.outbox.renewLeases([], NOW_MS + 2, NOW_MS + 2 + LEASE_MS)).toEqual([]);
  });
});
