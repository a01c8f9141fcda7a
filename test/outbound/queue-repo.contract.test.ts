// The outgoing queue's leases (QueueLeases, queue.port.ts), run on both engines: SQLite
// (createOutboundRepo) and PostgreSQL (createPgOutboundRepo, whose leases are createPgQueueLeases). The same cases: a message is
// stored with its recipients, body and idempotency answer, all or nothing; claims come lower lane first, then
// the longest waiting, up to the limit, never a busy domain; a lease hides a recipient until
// it ends; release, releaseHeldBy, nextDueMs; an outcome is written only by the lease's
// holder, not by a worker whose lease ran out and was taken over. And what several nodes
// need (issue 21), on PostgreSQL: two nodes (two SQL clients) claiming at once from 200 due
// recipients each get a share, no recipient twice; a node that stops loses its leases when
// they run out and the other claims its recipients then; of a recipient taken over so, the
// new holder's outcome is recorded and the old holder's refused, with nothing written.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { SQL } from "bun";
import type { OutboundRecipient, RecipientUpdate } from "../../src/outbound/queue/message.ts";
import { createPgOutboundRepo } from "../../src/outbound/queue/queue.pg.repo.ts";
import type { QueueLeases } from "../../src/outbound/queue/queue.port.ts";
import { pgQueuePorts } from "../../src/outbound/queue/wiring.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { delivered, event, ids, LEASE_MS, NOW, type OpenedQueue, openQueue, QUEUE_TABLES as TABLES, queueIn } from "./queue-engines.ts";

describe.each(STORE_ENGINES)("QueueLeases on $name", (engine) => {
  const it = engine.test;
  let opened: OpenedQueue | undefined;
  const repo = (): QueueLeases => opened!.repo;
  const queue = (messageId: string, recipients: [string, Partial<OutboundRecipient>][]) => queueIn(opened!.repo, messageId, recipients);

  beforeAll(async () => {
    if (engine.available()) opened = await openQueue(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(TABLES);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("a message is stored with its recipients, body and first events; a claim returns them as they were given", async () => {
    const message = queuedMessage("m1", {
      subject: "Hi",
      to: ["x@y.z", "é@y.z"],
      tags: ["t"],
      testMode: true,
      priority: "priority",
      sizeBytes: 5_000_000_000,
      createdAtMs: NOW,
      // Issue 34: a scheduled message with metadata reads back as it was given.
      sendAtMs: NOW + 60_000,
      metadata: { order_id: "1234", __proto__key: "é" },
    });
    const recipient = queuedRecipient("r1", "m1", {
      position: 3,
      lane: 0,
      attempts: 2,
      firstAttemptAtMs: NOW - 5,
      nextAttemptAtMs: NOW - 1,
    });
    const raw = Buffer.from([0, 1, 2, 255, 13, 10]);
    await repo().insert(message, [recipient], [event("m1", "r1", "registration")], { raw, webhook: false });
    expect(await repo().rawMessage("m1")).toStrictEqual(raw);
    expect(await repo().rawMessage("m-none")).toBeNull();
    expect(await opened!.count("message_events", "recipient_id", "r1")).toBe(1);
    expect(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, [])).toStrictEqual([{ recipient, message }]);
  });

  it("a message whose rows fail is not stored at all: no body, no recipient, no event", async () => {
    await queue("m1", [["r1", {}]]);
    // The same recipient ID again: the second message fails as a whole.
    const again = repo().insert(
      queuedMessage("m2"),
      [queuedRecipient("r2", "m2"), queuedRecipient("r1", "m2")],
      [event("m2", "r2", "registration")],
      { raw: Buffer.from("x"), webhook: false },
    );
    await expect(again).rejects.toThrow();
    expect(await repo().rawMessage("m2")).toBeNull();
    expect(await opened!.row("r2")).toBeNull();
    expect(await opened!.count("message_events", "recipient_id", "r2")).toBe(0);
  });

  it("sends made at once are all stored, each with its answer; one that fails fails alone", async () => {
    // Issue 38: on PostgreSQL sends that arrive together share a transaction; on SQLite a grouped commit.
    await queue("m0", [["r0", {}]]);
    const answer = (n: number) => ({
      outboundAccountId: "o",
      scope: "api" as const,
      key: `k${n}`,
      requestSha256: "ab".repeat(32),
      answer: `{"id":"m${n}"}`,
    });
    const sends = Array.from({ length: 8 }, (_, i) => {
      const n = i + 1;
      // The fourth reuses r0's ID: it alone must fail, whole.
      const rid = n === 4 ? "r0" : `r${n}`;
      return repo().insert(
        queuedMessage(`m${n}`, { createdAtMs: NOW }),
        [queuedRecipient(rid, `m${n}`)],
        [event(`m${n}`, rid, "registration")],
        {
          raw: Buffer.from(`raw ${n}`),
          answer: answer(n),
          webhook: n % 2 === 0,
        },
      );
    });
    const outcomes = await Promise.allSettled(sends);
    expect(outcomes.map((o) => o.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    for (const n of [1, 2, 3, 5, 6, 7, 8]) {
      expect((await repo().rawMessage(`m${n}`))?.toString()).toBe(`raw ${n}`);
      expect(await opened!.count("message_events", "recipient_id", `r${n}`)).toBe(1);
      expect(await opened!.count("idempotency_keys", "answer", `{"id":"m${n}"}`)).toBe(1);
    }
    expect(await repo().rawMessage("m4")).toBeNull();
    expect(await opened!.count("idempotency_keys", "answer", '{"id":"m4"}')).toBe(0);
  });

  it("the answer of the idempotency key a message was sent with is stored with it", async () => {
    const answer = { outboundAccountId: "o", scope: "api" as const, key: "k1", requestSha256: "ab".repeat(32), answer: '{"id":"m1"}' };
    await repo().insert(queuedMessage("m1", { createdAtMs: NOW }), [queuedRecipient("r1", "m1")], [], { answer, webhook: false });
    expect(await opened!.count("idempotency_keys", "answer", answer.answer)).toBe(1);
  });

  it("claims lower lanes first, then the longest waiting, up to the limit; nothing not yet due, nothing done", async () => {
    await queue("m1", [
      ["std-late", { lane: 1, nextAttemptAtMs: NOW - 10 }],
      ["digest", { lane: 2, nextAttemptAtMs: NOW - 1000 }],
      ["prio", { lane: 0, nextAttemptAtMs: NOW - 1 }],
      ["std-early", { lane: 1, nextAttemptAtMs: NOW - 20 }],
      ["future", { lane: 0, nextAttemptAtMs: NOW + 1 }],
      ["done", { lane: 0, state: "done", nextAttemptAtMs: NOW - 5000 }],
    ]);
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 3, []))).toEqual(["prio", "std-early", "std-late"]);
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 3, []))).toEqual(["digest"]);
    expect(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 3, [])).toEqual([]);
    expect(ids(await repo().claimDue("w1", NOW + 1, NOW + LEASE_MS, 3, []))).toEqual(["future"]);
  });

  it("skips recipients of busy domains", async () => {
    await queue("m1", [
      ["a", { domain: "busy.example", nextAttemptAtMs: NOW - 3 }],
      ["b", { domain: "free.example", nextAttemptAtMs: NOW - 2 }],
      ["c", { domain: "other.example", nextAttemptAtMs: NOW - 1 }],
    ]);
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, ["busy.example", "other.example"]))).toEqual(["b"]);
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []))).toEqual(["a", "c"]);
  });

  it("a lease hides a recipient from other workers until it ends, then another worker claims it", async () => {
    await queue("m1", [["r1", {}]]);
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []))).toEqual(["r1"]);
    expect(await repo().claimDue("w2", NOW + LEASE_MS, NOW + 2 * LEASE_MS, 10, [])).toEqual([]);
    expect(ids(await repo().claimDue("w2", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, 10, []))).toEqual(["r1"]);
    expect((await opened!.row("r1"))!.locked_by).toBe("w2");
  });

  it("release gives recipients back at once; a worker whose lease was taken over releases nothing of the new holder's", async () => {
    await queue("m1", [
      ["r1", {}],
      ["r2", {}],
    ]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    await repo().release(["r1"]);
    expect(ids(await repo().claimDue("w2", NOW, NOW + 3 * LEASE_MS, 10, []))).toEqual(["r1"]);
    // w1's lease on r2 ran out and w3 took it; w1, late, releases it: w3 keeps it.
    expect(ids(await repo().claimDue("w3", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, 10, []))).toEqual(["r2"]);
    await repo().release(["r2"], "w1");
    expect((await opened!.row("r2"))!.locked_by).toBe("w3");
    await repo().release(["r2"], "w3");
    expect(ids(await repo().claimDue("w4", NOW + LEASE_MS + 2, NOW + 2 * LEASE_MS, 10, []))).toEqual(["r2"]);
    await repo().release([]);
  });

  it("release with a due time: not claimable before it, then claimable, its attempts unchanged", async () => {
    await queue("m1", [["r1", {}]]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    await repo().release(["r1"], "w1", NOW + 86_400_000);
    expect(ids(await repo().claimDue("w2", NOW + 1, NOW + LEASE_MS, 10, []))).toEqual([]);
    expect(await repo().nextDueMs()).toBe(NOW + 86_400_000);
    const later = await repo().claimDue("w2", NOW + 86_400_000, NOW + 86_400_000 + LEASE_MS, 10, []);
    expect(later.map((c) => [c.recipient.id, c.recipient.attempts])).toEqual([["r1", 0]]);
  });

  it("releaseHeldBy frees the leases of one host's workers, queued ones only, with % and _ taken literally", async () => {
    await queue("m1", [
      ["r1", {}],
      ["r2", {}],
      ["r3", {}],
    ]);
    await repo().claimDue("host_1/12-a", NOW, NOW + LEASE_MS, 1, []);
    await repo().claimDue("hostX1/13-b", NOW, NOW + LEASE_MS, 1, []);
    await repo().claimDue("other/14-c", NOW, NOW + LEASE_MS, 1, []);
    expect(await repo().releaseHeldBy("host_1/")).toBe(1);
    expect(ids(await repo().claimDue("w", NOW, NOW + LEASE_MS, 10, []))).toEqual(["r1"]);
  });

  it("nextDueMs: the earliest queued recipient of any lane, held ones included; null when none waits", async () => {
    expect(await repo().nextDueMs()).toBeNull();
    await queue("m1", [
      ["a", { lane: 2, nextAttemptAtMs: NOW + 30 }],
      ["b", { lane: 1, nextAttemptAtMs: NOW + 20 }],
      ["done", { lane: 0, state: "done", nextAttemptAtMs: NOW }],
    ]);
    expect(await repo().nextDueMs()).toBe(NOW + 20);
    await queue("m2", [["c", { lane: 0, nextAttemptAtMs: NOW + 25 }]]);
    expect(await repo().nextDueMs()).toBe(NOW + 20);
    await repo().claimDue("w1", NOW + 20, NOW + LEASE_MS, 1, []);
    expect(await repo().nextDueMs()).toBe(NOW + 20);
  });

  it("the holder's outcome is written with its events and ends the lease", async () => {
    await queue("m1", [["r1", {}]]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    const recorded = await repo().finishAttempt("w1", "r1", delivered(1), [event("m1", "r1", "delivery")], NOW + LEASE_MS, {
      webhook: false,
    });
    expect(recorded!.map((e) => [e.recipientId, e.kind])).toEqual([["r1", "delivery"]]);
    expect(await opened!.row("r1")).toEqual({ state: "done", status: "delivery", locked_by: null, attempts: 1 });
    expect(await opened!.count("message_events", "recipient_id", "r1")).toBe(1);
    expect(await repo().nextDueMs()).toBeNull();
  });

  it("a hard bounce's outcome suppresses the address, in the same transaction", async () => {
    await queue("m1", [["r1", { email: "Gone@Y.z" }]]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    const bounce: RecipientUpdate = {
      status: "bounce",
      state: "done",
      attempts: 1,
      firstAttemptAtMs: NOW,
      nextAttemptAtMs: NOW,
      suppress: { reason: "bounce", expiresAtMs: NOW + 1000 },
    };
    await repo().finishAttempt("w1", "r1", bounce, [event("m1", "r1", "bounce")], NOW, { webhook: false });
    expect(await opened!.count("suppressions", "email", "gone@y.z")).toBe(1);
  });

  it("an outcome is ignored once the lease moved to another worker, and once it ran out", async () => {
    await queue("m1", [
      ["r1", {}],
      ["r2", {}],
    ]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    expect(ids(await repo().claimDue("w2", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, 1, []))).toEqual(["r1"]);
    // w1 answers late for both: r1 is w2's now, r2's lease ran out unclaimed.
    expect(
      await repo().finishAttempt("w1", "r1", delivered(1), [event("m1", "r1", "delivery")], NOW + LEASE_MS + 2, { webhook: false }),
    ).toBeNull();
    expect(
      await repo().finishAttempt("w1", "r2", delivered(1), [event("m1", "r2", "delivery")], NOW + LEASE_MS + 2, { webhook: false }),
    ).toBeNull();
    expect(await opened!.row("r1")).toEqual({ state: "queued", status: "registration", locked_by: "w2", attempts: 0 });
    expect(await opened!.row("r2")).toEqual({ state: "queued", status: "registration", locked_by: "w1", attempts: 0 });
    expect(await opened!.count("message_events", "recipient_id", "r1")).toBe(0);
    // The new holder's own outcome is written.
    expect(
      await repo().finishAttempt("w2", "r1", delivered(1), [event("m1", "r1", "delivery")], NOW + LEASE_MS + 3, { webhook: false }),
    ).toHaveLength(1);
    expect((await opened!.row("r1"))!.state).toBe("done");
  });

  it("outcomes reported at once are each written with their own events; one whose lease moved on writes nothing", async () => {
    // Issue 38: on PostgreSQL outcomes that end together share a transaction and statements.
    await queue("m1", [
      ["r1", {}],
      ["r2", {}],
      ["r3", {}],
      ["r4", {}],
    ]);
    await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []);
    // r4 moves to w2 once w1's lease ran out; w1 then answers for all four at once.
    expect(ids(await repo().claimDue("w2", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, 1, []))).toEqual(["r1"]);
    await repo().release(["r2", "r3", "r4"], "w2");
    await repo().claimDue("w1", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, 10, []);
    const at = NOW + LEASE_MS + 2;
    const outcomes = await Promise.all([
      // The first goes at once on PostgreSQL; the three others wait and go together.
      repo().finishAttempt("w1", "r3", delivered(2), [event("m1", "r3", "delivery")], at, { webhook: false }),
      repo().finishAttempt("w1", "r1", delivered(1), [event("m1", "r1", "delivery")], at, { webhook: false }),
      repo().finishAttempt("w1", "r2", delivered(1), [event("m1", "r2", "dispatch"), event("m1", "r2", "delivery")], at),
      repo().finishAttempt("w1", "r4", delivered(3), [], at),
    ]);
    expect(outcomes.map((o) => o?.map((e) => [e.recipientId, e.kind]) ?? null)).toEqual([
      [["r3", "delivery"]],
      null,
      [
        ["r2", "dispatch"],
        ["r2", "delivery"],
      ],
      [],
    ]);
    expect(await opened!.row("r1")).toEqual({ state: "queued", status: "registration", locked_by: "w2", attempts: 0 });
    expect(await opened!.row("r2")).toEqual({ state: "done", status: "delivery", locked_by: null, attempts: 1 });
    expect(await opened!.row("r3")).toEqual({ state: "done", status: "delivery", locked_by: null, attempts: 2 });
    expect(await opened!.row("r4")).toEqual({ state: "done", status: "delivery", locked_by: null, attempts: 3 });
    expect(await opened!.count("message_events", "recipient_id", "r1")).toBe(0);
    expect(await opened!.count("message_events", "recipient_id", "r2")).toBe(2);
  });
});

describe("QueueLeases on PostgreSQL, two nodes", () => {
  const engine = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;
  const it = engine.test;
  let handle: EngineHandle | undefined;
  const COUNT = 200;
  /** A node: its own SQL client (pool), its own repository. */
  const node = (connections: number) => {
    if (handle?.kind !== "postgres") throw new Error("PostgreSQL only");
    const sql = new SQL(handle.url, { max: connections });
    return { sql, repo: createPgOutboundRepo(sql, pgQueuePorts()) };
  };
  const queueMany = async (repo: QueueLeases) => {
    const recipients = Array.from({ length: COUNT }, (_, i) =>
      queuedRecipient(`r${String(i).padStart(3, "0")}`, "m1", { position: i, domain: `d${i % 7}.example`, nextAttemptAtMs: NOW - i }),
    );
    await repo.insert(queuedMessage("m1", { createdAtMs: NOW }), recipients, [], { webhook: false });
  };

  beforeAll(async () => {
    if (engine.available()) handle = await engine.open();
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(TABLES);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("two nodes claiming at once from 200 due recipients: every recipient claimed exactly once, none by both", async () => {
    const a = node(4);
    const b = node(4);
    try {
      await queueMany(a.repo);
      const claim = async (n: { repo: QueueLeases }, id: string) => ids(await n.repo.claimDue(id, NOW, NOW + LEASE_MS, 7, []));
      /** One worker: claims batches of 7 until none is left. */
      const drain = async (n: { repo: QueueLeases }, id: string) => {
        const got: string[] = [];
        for (let batch = await claim(n, id); batch.length > 0; batch = await claim(n, id)) got.push(...batch);
        return got;
      };
      // Four workers per node, each claiming on its own connection at the same time: a first
      // claim each (8 x 7 < 200, so both nodes take part whichever connects first), then
      // until nothing is left.
      const workers = [...["a1", "a2", "a3", "a4"].map((w) => [a, w] as const), ...["b1", "b2", "b3", "b4"].map((w) => [b, w] as const)];
      const first = await Promise.all(workers.map(([n, w]) => claim(n, w)));
      const rest = await Promise.all(workers.map(([n, w]) => drain(n, w)));
      const perWorker = first.map((got, i) => [...got, ...rest[i]!]);
      const all = perWorker.flat();
      expect(all.length).toBe(COUNT);
      expect(new Set(all).size).toBe(COUNT);
      // Both nodes took part (the race is real, not one node draining the queue first).
      expect(perWorker.slice(0, 4).flat().length).toBeGreaterThan(0);
      expect(perWorker.slice(4).flat().length).toBeGreaterThan(0);
      // What each worker was told it holds is what the rows say.
      const rows: { id: string; locked_by: string }[] = await a.sql`SELECT id, locked_by FROM outbound_recipients`;
      const holder = new Map(perWorker.flatMap((got, i) => got.map((id) => [id, ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"][i]!])));
      for (const r of rows) expect(r.locked_by).toBe(holder.get(r.id)!);
    } finally {
      await a.sql.close();
      await b.sql.close();
    }
  });

  it("a node that stops keeps its recipients only until its leases run out; then the other node claims them", async () => {
    const a = node(1);
    const b = node(1);
    try {
      await queueMany(a.repo);
      expect((await a.repo.claimDue("a1", NOW, NOW + LEASE_MS, COUNT, [])).length).toBe(COUNT);
      await a.sql.close(); // node a is gone, without releasing anything
      expect(await b.repo.claimDue("b1", NOW + LEASE_MS, NOW + 2 * LEASE_MS, COUNT, [])).toEqual([]);
      const taken = await b.repo.claimDue("b1", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, COUNT, []);
      expect(new Set(ids(taken)).size).toBe(COUNT);
      // And b's outcomes are written (a, were it back, could not: see the cases above).
      expect(await b.repo.finishAttempt("b1", "r000", delivered(1), [], NOW + LEASE_MS + 2, { webhook: false })).toEqual([]);
    } finally {
      await a.sql.close();
      await b.sql.close();
    }
  });

  it("a recipient whose lease on node a ran out is claimed by node b: b's outcome is recorded, a's late one is refused and writes nothing", async () => {
    const a = node(1);
    const b = node(1);
    try {
      await queueIn(a.repo, "m1", [["r1", { email: "Gone@Y.z" }]]);
      expect(ids(await a.repo.claimDue("a1", NOW, NOW + LEASE_MS, 10, []))).toEqual(["r1"]);
      expect(ids(await b.repo.claimDue("b1", NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS, 10, []))).toEqual(["r1"]);
      const bounced: RecipientUpdate = {
        status: "bounce",
        state: "done",
        attempts: 1,
        firstAttemptAtMs: NOW,
        nextAttemptAtMs: NOW,
        suppress: { reason: "bounce", expiresAtMs: null },
      };
      expect(
        await a.repo.finishAttempt("a1", "r1", bounced, [event("m1", "r1", "bounce")], NOW + LEASE_MS + 2, { webhook: false }),
      ).toBeNull();
      // Nothing of a's: no state, no event, no suppression; b holds it still.
      expect(await b.repo.getRecipient("m1", "r1")).toMatchObject({ state: "queued", status: "registration", attempts: 0 });
      expect(await b.repo.eventsOf(["r1"])).toEqual([]);
      expect(await b.repo.queueDepth(NOW + LEASE_MS + 2)).toEqual({ due: 1, scheduled: 0, held: 0 });
      const [suppressed]: { n: string }[] = await b.sql`SELECT COUNT(*) AS n FROM suppressions`;
      expect(Number(suppressed!.n)).toBe(0);
      const recorded = await b.repo.finishAttempt("b1", "r1", delivered(1), [event("m1", "r1", "delivery")], NOW + LEASE_MS + 3, {
        webhook: false,
      });
      expect(recorded!.map((e) => e.kind)).toEqual(["delivery"]);
      expect(await a.repo.getRecipient("m1", "r1")).toMatchObject({ state: "done", status: "delivery", attempts: 1 });
      expect((await a.repo.eventsOf(["r1"])).map((e) => e.kind)).toEqual(["delivery"]);
    } finally {
      await a.sql.close();
      await b.sql.close();
    }
  });
});
