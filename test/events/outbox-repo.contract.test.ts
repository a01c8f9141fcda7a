// The leased outbox claim (OutboxLeases, outbox.port.ts) and the outbox's reads, run on
// both engines: SQLite (createOutboxRepo) and PostgreSQL (createPgOutboxRepo). The same
// cases: a batch holds the account's due events in event order, up to the limit, and no
// second batch is made while it is leased or waits for its retry; a retry brings back the
// same batch at its time; a lease that ran out is claimed again, and then only the new
// holder's finish counts. On PostgreSQL only: two nodes (two SQL clients) claim at once.
import { describe, expect } from "bun:test";
import type { NewEvent } from "../../src/events/message-event.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { eventEngine } from "./outbox-rows.ts";

const NOW_MS = 1_795_000_000_000;
const LEASE_MS = 30_000;

const ev = (messageId: string, recipientId: string, kind: NewEvent["kind"], createdAtMs = NOW_MS - 1000): NewEvent => ({
  messageId,
  recipientId,
  kind,
  details: { kind },
  createdAtMs,
});

describe.each(STORE_ENGINES)("webhook outbox on $name", (engine) => {
  const s = eventEngine(engine, [
    { id: "m1", accountId: "acct", outboundAccountId: "o", recipients: [{ id: "r1", email: "r1@x.test" }] },
    { id: "m2", accountId: "acct", outboundAccountId: "o", recipients: [{ id: "r2", email: "r2@x.test" }] },
  ]);

  engine.test("a batch holds the account's due events in event order, every field as recorded", async () => {
    const recorded = [
      ...(await s.events.record([ev("m1", "r1", "registration")])),
      ...(await s.events.record([ev("m2", "r2", "registration"), ev("m1", "r1", "dispatch")])),
      ...(await s.events.record([ev("m2", "r2", "delivery")])),
    ];
    const batch = await s.outbox.claimBatch("o", NOW_MS, 100, LEASE_MS);
    expect(batch!.attempts).toBe(0);
    expect(batch!.lease).toStrictEqual({ batchId: batch!.id, untilMs: NOW_MS + LEASE_MS });
    expect(batch!.events).toStrictEqual(
      recorded.map((e) => ({
        id: e.id,
        kind: e.kind,
        recipient: `${e.recipientId}@x.test`,
        messageId: e.messageId,
        outboundAccountId: "o",
        accountId: "acct",
        createdAtMs: NOW_MS - 1000,
        details: { kind: e.kind },
      })),
    );
    expect(await s.outbox.claimBatch("other", NOW_MS, 100, LEASE_MS)).toBeNull();
  });

  engine.test("batches take at most the limit, one at a time per account, and events not yet due wait", async () => {
    const recorded = await s.events.record([
      ev("m1", "r1", "registration"),
      ev("m1", "r1", "dispatch"),
      ev("m1", "r1", "delivery"),
      ev("m1", "r1", "open", NOW_MS + 5000),
    ]);
    const first = await s.outbox.claimBatch("o", NOW_MS, 2, LEASE_MS);
    expect(first!.events.map((e) => e.id)).toEqual([recorded[0]!.id, recorded[1]!.id]);
    expect(await s.outbox.claimBatch("o", NOW_MS, 2, LEASE_MS)).toBeNull();
    expect(await s.outbox.finishSent(first!.lease)).toBe(true);
    const second = await s.outbox.claimBatch("o", NOW_MS, 2, LEASE_MS);
    expect(second!.id).not.toBe(first!.id);
    expect(second!.events.map((e) => e.id)).toEqual([recorded[2]!.id]);
    expect(await s.outbox.finishSent(second!.lease)).toBe(true);
    expect(await s.outbox.claimBatch("o", NOW_MS, 2, LEASE_MS)).toBeNull();
    expect((await s.outbox.claimBatch("o", NOW_MS + 5000, 2, LEASE_MS))!.events.map((e) => e.id)).toEqual([recorded[3]!.id]);
  });

  engine.test("a failed POST brings back the same batch at its retry time, and events recorded meanwhile wait behind it", async () => {
    const recorded = await s.events.record([ev("m1", "r1", "registration"), ev("m2", "r2", "registration")]);
    const batch = await s.outbox.claimBatch("o", NOW_MS, 100, LEASE_MS);
    expect(await s.outbox.finishRetry(batch!.lease, NOW_MS + 10_000)).toBe(true);
    const later = await s.events.record([ev("m1", "r1", "dispatch")]);
    expect(await s.outbox.pendingTargets()).toEqual([{ target: "o", dueMs: NOW_MS + 10_000 }]);
    expect(await s.outbox.claimBatch("o", NOW_MS + 9_999, 100, LEASE_MS)).toBeNull();
    const retried = await s.outbox.claimBatch("o", NOW_MS + 10_000, 100, LEASE_MS);
    expect(retried!.id).toBe(batch!.id);
    expect(retried!.attempts).toBe(1);
    expect(retried!.events.map((e) => e.id)).toEqual(recorded.map((e) => e.id));
    expect(await s.outbox.finishSent(retried!.lease)).toBe(true);
    expect((await s.outbox.claimBatch("o", NOW_MS + 10_000, 100, LEASE_MS))!.events.map((e) => e.id)).toEqual([later[0]!.id]);
  });

  engine.test("a lease that ran out is claimed again, and only the new holder's finish counts", async () => {
    await s.events.record([ev("m1", "r1", "registration")]);
    const first = await s.outbox.claimBatch("o", NOW_MS, 100, LEASE_MS);
    expect(await s.outbox.pendingTargets()).toEqual([{ target: "o", dueMs: NOW_MS + LEASE_MS }]);
    expect(await s.outbox.claimBatch("o", NOW_MS + LEASE_MS - 1, 100, LEASE_MS)).toBeNull();
    const second = await s.outbox.claimBatch("o", NOW_MS + LEASE_MS, 100, LEASE_MS);
    expect(second!.id).toBe(first!.id);
    expect(second!.lease.untilMs).toBe(NOW_MS + 2 * LEASE_MS);
    expect(await s.outbox.finishSent(first!.lease)).toBe(false);
    expect(await s.outbox.finishRetry(first!.lease, NOW_MS)).toBe(false);
    expect(await s.outbox.pendingOf("o")).toEqual({ events: 1, oldestMs: NOW_MS - 1000, dueMs: NOW_MS + 2 * LEASE_MS });
    expect(await s.outbox.finishSent(second!.lease)).toBe(true);
    expect(await s.outbox.countPending()).toBe(0);
    expect(await s.outbox.finishSent(second!.lease)).toBe(false);
  });

  engine.test("retry now, drop, expiry and the backlog's counts", async () => {
    await s.events.record([ev("m1", "r1", "registration", NOW_MS - 5000), ev("m1", "r1", "dispatch", NOW_MS - 1000)]);
    const batch = await s.outbox.claimBatch("o", NOW_MS, 1, LEASE_MS);
    await s.outbox.finishRetry(batch!.lease, NOW_MS + 60_000);
    expect(await s.outbox.countPending()).toBe(2);
    expect(await s.outbox.oldestPendingMs()).toBe(NOW_MS - 5000);
    expect(await s.outbox.pendingOf("o")).toEqual({ events: 2, oldestMs: NOW_MS - 5000, dueMs: NOW_MS - 1000 });
    expect(await s.outbox.dueNow("o", NOW_MS)).toBe(2);
    expect((await s.outbox.claimBatch("o", NOW_MS, 1, LEASE_MS))!.id).toBe(batch!.id);
    expect(await s.outbox.expire(NOW_MS, 4000)).toBe(1);
    expect(await s.outbox.drop("o")).toBe(1);
    expect(await s.outbox.countPending()).toBe(0);
    expect(await s.outbox.oldestPendingMs()).toBeNull();
    expect(await s.outbox.pendingOf("o")).toEqual({ events: 0, oldestMs: null, dueMs: null });
    expect(await s.outbox.pendingTargets()).toEqual([]);
  });
});
