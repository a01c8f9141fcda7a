// The operator's queue (queue-control.repo.ts) on SQLite and PostgreSQL: the list and
// summary by destination, hold (claims skip held recipients, retry leaves them alone),
// release and retry (due at once), cancel (an error event each, none for a recipient being
// delivered), redeliver by bounce class and time; every action by its filter only.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { QueueControlRepo } from "../../src/outbound/queue/queue-control.port.ts";
import { createDestinationRepo } from "../../src/outbound/destinations/destinations.repo.ts";
import { createQueueControlRepo } from "../../src/outbound/queue/queue-control.repo.ts";
import { controlEvents } from "../../src/outbound/queue/wiring.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { event, ids, LEASE_MS, NOW, type OpenedQueue, openQueue, QUEUE_TABLES, queueIn } from "./queue-engines.ts";

describe.each(STORE_ENGINES)("QueueControlRepo on $name", (engine) => {
  const it = engine.test;
  let opened: OpenedQueue | undefined;
  let control: QueueControlRepo;
  let woken = 0;
  const repo = () => opened!.repo;
  const queue = (...args: Parameters<typeof queueIn> extends [unknown, ...infer R] ? R : never) => queueIn(opened!.repo, ...args);
  /** Three messages: m1 to a.example (two recipients) and b.example, m2 to a.example from another outbound account, m3 old, to c.example. */
  const seed = async () => {
    await queue("m1", [
      ["r1", { email: "x@a.example", domain: "a.example" }],
      ["r2", { email: "y@a.example", domain: "a.example", nextAttemptAtMs: NOW + 60_000 }],
      ["r3", { email: "z@b.example", domain: "b.example" }],
    ]);
    await queue("m2", [["r4", { email: "w@a.example", domain: "a.example" }]], { outboundAccountId: "o2" });
    await queue("m3", [["r5", { email: "v@c.example", domain: "c.example" }]], { createdAtMs: NOW - 3_600_000 });
  };

  beforeAll(async () => {
    if (!engine.available()) return;
    opened = await openQueue(engine);
    control = createQueueControlRepo(opened.handle.db, controlEvents, () => woken++);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(QUEUE_TABLES);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("hold by destination: held recipients are never claimed, not even once due again by retry, until released", async () => {
    await seed();
    expect(await control.hold({ destination: "A.example" }, NOW)).toBe(3);
    // Leased for long: they stay out of the later claims.
    expect(ids(await repo().claimDue("w1", NOW + 120_000, NOW + 1e9, 50, [])).sort()).toEqual(["r3", "r5"]);
    expect(await control.retry({ destination: "a.example" }, NOW)).toBe(0);
    expect(await repo().dueNow("m1", NOW)).toBe(0);
    // r3 and r5 (leased, still queued) are due; the three held ones are neither due nor scheduled.
    expect(await repo().queueDepth(NOW + 120_000)).toEqual({ due: 2, scheduled: 0, held: 3 });
    expect(await repo().claimDue("w2", NOW + 200_000, NOW + 200_000 + LEASE_MS, 50, [])).toEqual([]);
    expect(await control.list({ state: "held" }, 10)).toMatchObject([
      { id: "r1", destination: "a.example", state: "held", outboundAccountId: "o" },
      { id: "r4", destination: "a.example", state: "held", outboundAccountId: "o2" },
      { id: "r2", destination: "a.example", state: "held" },
    ]);
    // Release by outbound account: only m2's, due at once.
    expect(await control.release({ outboundAccountId: "o2" }, NOW + 300_000)).toBe(1);
    expect(ids(await repo().claimDue("w3", NOW + 300_000, NOW + 1e9, 50, []))).toEqual(["r4"]);
    expect(await control.release({ destination: "a.example" }, NOW + 400_000)).toBe(2);
    expect(await control.release({ destination: "a.example" }, NOW + 400_000)).toBe(0);
    expect(ids(await repo().claimDue("w4", NOW + 400_000, NOW + 400_000 + LEASE_MS, 50, [])).sort()).toEqual(["r1", "r2"]);
  });

  it("hold leaves a recipient being delivered to its attempt; a filter by message and by age picks only those", async () => {
    await seed();
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 1, []))).toHaveLength(1);
    expect(await control.hold({ messageId: "m1" }, NOW)).toBe(2);
    expect(await control.hold({ destination: "c.example", olderThanMs: 7_200_000 }, NOW)).toBe(0);
    expect(await control.hold({ destination: "c.example", olderThanMs: 3_600_000 }, NOW)).toBe(1);
    expect(await control.hold({ messageId: "nope" }, NOW)).toBe(0);
  });

  it("retry makes queued recipients due now; the list and summary show them by destination with their last failure", async () => {
    await seed();
    await repo().addEvents("r2", null, [{ ...event("m1", "r2", "soft_bounce"), details: { smtp_response: "451 4.7.650 rate limited" } }]);
    expect(await repo().queueDepth(NOW)).toEqual({ due: 4, scheduled: 1, held: 0 });
    expect(await control.retry({ destination: "a.example" }, NOW)).toBe(3);
    expect(await repo().queueDepth(NOW)).toEqual({ due: 5, scheduled: 0, held: 0 });
    await control.hold({ outboundAccountId: "o2" }, NOW);
    expect(await repo().queueDepth(NOW)).toEqual({ due: 4, scheduled: 0, held: 1 });
    const summary = await control.summary(10, NOW);
    expect(summary).toEqual([
      { destination: "a.example", queued: 2, held: 1, paused: false, oldestAtMs: NOW, lastResponse: "451 4.7.650 rate limited" },
      { destination: "b.example", queued: 1, held: 0, paused: false, oldestAtMs: NOW, lastResponse: null },
      { destination: "c.example", queued: 1, held: 0, paused: false, oldestAtMs: NOW - 3_600_000, lastResponse: null },
    ]);
    expect(await control.summary(1, NOW)).toHaveLength(1);
    // A destination paused now (destination_pauses) shows paused; a throttle pause that ended does not.
    const pauses = createDestinationRepo(opened!.handle.db);
    await pauses.putPause({ destination: "b.example", source: "operator", reason: "t", pausedAtMs: NOW, untilMs: null, pauseMs: 0 });
    await pauses.putPause({
      destination: "c.example",
      source: "throttle",
      reason: "t",
      pausedAtMs: NOW - 2000,
      untilMs: NOW - 1000,
      pauseMs: 1000,
    });
    expect((await control.summary(10, NOW)).map((s) => [s.destination, s.paused])).toEqual([
      ["a.example", false],
      ["b.example", true],
      ["c.example", false],
    ]);
    const list = await control.list({ destination: "a.example", state: "queued" }, 10);
    expect(list.map((e) => [e.id, e.recipient, e.lastResponse])).toEqual([
      ["r1", "x@a.example", null],
      ["r2", "y@a.example", "451 4.7.650 rate limited"],
    ]);
    expect(await control.list({ state: "scheduled" }, 10)).toEqual([]);
  });

  it("a scheduled send's recipients list as scheduled until attempted; queued lists the others", async () => {
    await seed();
    await queue("m4", [["r6", { email: "u@d.example", domain: "d.example", nextAttemptAtMs: NOW + 3_600_000 }]], {
      sendAtMs: NOW + 3_600_000,
    });
    expect((await control.list({ state: "scheduled" }, 10)).map((e) => [e.id, e.state])).toEqual([["r6", "scheduled"]]);
    expect((await control.list({ destination: "d.example" }, 10)).map((e) => e.state)).toEqual(["scheduled"]);
    expect((await control.list({ state: "queued" }, 10)).map((e) => e.id)).not.toContain("r6");
  });

  it("cancel ends queued and held recipients with an error event, not one being delivered; nothing matched is 0", async () => {
    await seed();
    await control.hold({ messageId: "m2" }, NOW);
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 1, []))).toEqual(["r1"]);
    const before = woken;
    expect(await control.cancel({ destination: "a.example" }, NOW, "cancelled by the operator", () => false)).toBe(2);
    expect(woken).toBe(before + 1);
    expect(await opened!.row("r4")).toMatchObject({ state: "done", status: "error" });
    expect(await opened!.row("r1")).toMatchObject({ state: "queued" });
    const events = await repo().eventsOf(["r2", "r4"]);
    expect(events.map((e) => [e.recipientId, e.kind, e.details.message, e.details.retried]).sort()).toEqual([
      ["r2", "error", "cancelled by the operator", false],
      ["r4", "error", "cancelled by the operator", false],
    ]);
    expect(await control.cancel({ messageId: "m404" }, NOW, "x", () => true)).toBe(0);
    expect(woken).toBe(before + 1);
  });

  it("redeliver queues again the recipients bounced with that class since that time, and no other", async () => {
    await seed();
    const bounce = (r: string, m: string, cls: string, at: number) =>
      repo().update(
        r,
        { status: "bounce", state: "done", attempts: 1, firstAttemptAtMs: at, nextAttemptAtMs: at },
        [{ ...event(m, r, "bounce"), details: { smtp_code: 554, bounce_class: cls }, createdAtMs: at }],
        { webhook: false },
      );
    await bounce("r1", "m1", "block", NOW + 10);
    await bounce("r3", "m1", "block", NOW - 10);
    await bounce("r4", "m2", "hard", NOW + 10);
    await bounce("r5", "m3", "block", NOW + 10);
    expect(await control.redeliver({ bounceClass: "block", sinceMs: NOW, destination: "a.example" }, NOW + 100)).toBe(1);
    expect(await opened!.row("r1")).toMatchObject({ state: "queued", locked_by: null });
    expect(await control.redeliver({ bounceClass: "block", sinceMs: NOW }, NOW + 100)).toBe(1);
    expect(await opened!.row("r3")).toMatchObject({ state: "done" });
    expect(await opened!.row("r4")).toMatchObject({ state: "done" });
    expect(ids(await repo().claimDue("w1", NOW + 100, NOW + 100 + LEASE_MS, 50, [])).sort()).toEqual(["r1", "r5"]);
  });

  it("redelivering hard bounces lifts the suppressions they made, and only theirs", async () => {
    await seed();
    const suppress = { reason: "bounce" as const, expiresAtMs: NOW + 1e9 };
    const hard = (r: string, m: string) =>
      repo().update(
        r,
        { status: "bounce", state: "done", attempts: 1, firstAttemptAtMs: NOW + 10, nextAttemptAtMs: NOW + 10, suppress },
        [{ ...event(m, r, "bounce"), details: { smtp_code: 550, bounce_class: "hard" }, createdAtMs: NOW + 10 }],
        { webhook: false },
      );
    await hard("r1", "m1");
    await hard("r4", "m2");
    expect(await opened!.count("suppressions", "email", "x@a.example")).toBe(1);
    // A block redelivered leaves every suppression alone; a hard one of o2 lifts o2's only.
    expect(await control.redeliver({ bounceClass: "block", sinceMs: NOW }, NOW + 100)).toBe(0);
    expect(await control.redeliver({ bounceClass: "hard", sinceMs: NOW, outboundAccountId: "o2" }, NOW + 100)).toBe(1);
    expect(await opened!.count("suppressions", "email", "w@a.example")).toBe(0);
    expect(await opened!.count("suppressions", "email", "x@a.example")).toBe(1);
    expect(await control.redeliver({ bounceClass: "hard", sinceMs: NOW }, NOW + 100)).toBe(1);
    expect(await opened!.count("suppressions", "email", "x@a.example")).toBe(0);
  });
});
