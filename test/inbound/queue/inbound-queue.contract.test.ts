// The InboundQueueRepo contract on both engines (issue 35): a kept message reads back byte
// for byte (NUL and high bytes included), a due message is claimed by one holder at a time
// and by another once its lease expired, finish and reschedule only work for the holder,
// "try now" is scoped to the account, and the depth and byte counts that /metrics and the
// per-account cap read add up. On PostgreSQL, nodes claiming at the same moment each get a
// message at most once.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { SQL } from "bun";
import { createInboundQueueRepo } from "../../../src/inbound/queue/inbound-queue.repo.ts";
import type { InboundQueueRepo, QueuedMessage } from "../../../src/inbound/queue/inbound-queue.port.ts";
import { pgDb } from "../../../src/store/db/pg-db.ts";
import { type EngineHandle, STORE_ENGINES } from "../../helpers/engines.ts";

const NOW_MS = 1_795_000_000_000;
const LEASE_MS = 60_000;

function message(id: string, over: Partial<QueuedMessage> = {}): QueuedMessage {
  const bytes = Buffer.concat([
    Buffer.from("Received: by us\r\n"),
    Buffer.from([0, 0xff, 0x80]),
    Buffer.from("\r\nSubject: hi\r\n\r\nbody\r\n"),
  ]);
  return {
    id,
    accountId: "acct-a",
    addressId: "addr-1",
    statusIds: ["s1", "s2"],
    facts: {
      mailFrom: "a@example.com",
      helo: "mx.example.com",
      ehlo: true,
      remoteIp: "192.0.2.1",
      tls: null,
      rcpts: ["x@in.example.com"],
      trace: "Received: by us\r\n",
      customDomain: null,
      envelope: { to: "x@in.example.com", md5: "00" } as never,
      messageId: "m@example.com",
      subject: "hi",
      postroomMessageId: "k".repeat(32),
    },
    message: bytes,
    traceBytes: 17,
    sizeBytes: bytes.length - 17,
    attempts: 1,
    createdAtMs: NOW_MS,
    nextAttemptAtMs: NOW_MS + 1000,
    lastResponse: "503",
    ...over,
  };
}

describe.each(STORE_ENGINES)("InboundQueueRepo on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  let repo: InboundQueueRepo;

  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    repo = createInboundQueueRepo(handle.db);
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(["inbound_queue"]);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("keeps the message byte for byte with its facts", async () => {
    const m = message("q1");
    await repo.insert(m);
    expect(Buffer.from((await repo.message("q1"))!).equals(Buffer.from(m.message))).toBe(true);
    const [listed] = await repo.list("acct-a", 10);
    expect(listed).toMatchObject({ id: "q1", statusIds: ["s1", "s2"], attempts: 1, createdAtMs: NOW_MS, lastResponse: "503" });
    expect(listed!.facts.rcpts).toEqual(["x@in.example.com"]);
    expect(await repo.list("acct-b", 10)).toEqual([]);
    expect(await repo.message("nope")).toBeNull();
  });

  it("a due message goes to one holder until its lease expires", async () => {
    await repo.insert(message("q1"));
    expect(await repo.claimDue("node-a", NOW_MS, LEASE_MS, 10)).toEqual([]);
    expect((await repo.claimDue("node-a", NOW_MS + 1000, LEASE_MS, 10)).map((e) => e.id)).toEqual(["q1"]);
    expect(await repo.claimDue("node-b", NOW_MS + 2000, LEASE_MS, 10)).toEqual([]);
    // node-a died holding it: node-b takes it once the lease ran out, and node-a can no longer finish it.
    expect((await repo.claimDue("node-b", NOW_MS + 1000 + LEASE_MS, LEASE_MS, 10)).map((e) => e.id)).toEqual(["q1"]);
    expect(await repo.finish("q1", "node-a")).toBe(false);
    expect(await repo.reschedule("q1", "node-a", 2, NOW_MS, null)).toBe(false);
    expect(await repo.finish("q1", "node-b")).toBe(true);
    expect(await repo.list("acct-a", 10)).toEqual([]);
  });

  it("a node starting again takes back its own leases, and no other node's", async () => {
    await repo.insert(message("q1"));
    await repo.insert(message("q2"));
    await repo.claimDue("node-a", NOW_MS + 1000, LEASE_MS, 1);
    await repo.claimDue("node-b", NOW_MS + 1000, LEASE_MS, 1);
    expect(await repo.releaseHeld("node-a")).toBe(1);
    // node-a's message is due again at once; node-b's lease still runs.
    expect((await repo.claimDue("node-a", NOW_MS + 1001, LEASE_MS, 10)).length).toBe(1);
    expect(await repo.claimDue("node-c", NOW_MS + 1002, LEASE_MS, 10)).toEqual([]);
  });

  it("reschedule counts the attempt, sets the next one and frees the lease", async () => {
    await repo.insert(message("q1"));
    await repo.claimDue("node-a", NOW_MS + 1000, LEASE_MS, 10);
    expect(await repo.reschedule("q1", "node-a", 2, NOW_MS + 60_000, "500 down")).toBe(true);
    expect(await repo.claimDue("node-b", NOW_MS + 59_999, LEASE_MS, 10)).toEqual([]);
    const [again] = await repo.claimDue("node-b", NOW_MS + 60_000, LEASE_MS, 10);
    expect(again).toMatchObject({ id: "q1", attempts: 2, lastResponse: "500 down" });
  });

  it("try now makes a message of the account due at once, and no other account's", async () => {
    await repo.insert(message("q1", { nextAttemptAtMs: NOW_MS + 3_600_000 }));
    expect(await repo.tryNow("acct-b", "q1", NOW_MS)).toBe(false);
    expect(await repo.tryNow("acct-a", "q1", NOW_MS)).toBe(true);
    expect((await repo.claimDue("node-a", NOW_MS, LEASE_MS, 10)).map((e) => e.id)).toEqual(["q1"]);
  });

  it("counts bytes per account and the depth with the oldest message", async () => {
    expect(await repo.depth()).toEqual({ count: 0, oldestCreatedAtMs: null });
    expect(await repo.queuedBytes("acct-a")).toBe(0);
    await repo.insert(message("q1", { sizeBytes: 1000, createdAtMs: NOW_MS - 5000 }));
    await repo.insert(message("q2", { sizeBytes: 2500 }));
    await repo.insert(message("q3", { sizeBytes: 7, accountId: "acct-b" }));
    expect(await repo.queuedBytes("acct-a")).toBe(3500);
    expect(await repo.depth()).toEqual({ count: 3, oldestCreatedAtMs: NOW_MS - 5000 });
  });

  it("nodes claiming at the same moment get each message once", async () => {
    for (let i = 0; i < 20; i++) await repo.insert(message(`q${i}`));
    const h = handle!;
    const nodes = h.kind === "postgres" ? Array.from({ length: 4 }, () => new SQL({ url: h.url, max: 1 })) : [];
    const repos = nodes.length > 0 ? nodes.map((n) => createInboundQueueRepo(pgDb(n))) : [repo, repo, repo, repo];
    try {
      const claims = await Promise.all(repos.map((r, i) => r.claimDue(`node-${i}`, NOW_MS + 1000, LEASE_MS, 8)));
      const ids = claims.flat().map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(20);
    } finally {
      for (const n of nodes) await n.close();
    }
  });
});
