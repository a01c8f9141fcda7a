// Two delivery workers on one PostgreSQL queue, as two nodes would run them, against a real
// SMTP server (the sink) found by MX in a test DNS server: every recipient is delivered
// once, by one node or the other. And a worker whose lease ran out during an attempt while
// another node claimed the recipient: its outcome is dropped (nothing written, a warning, the
// lease-lost counter), and the node holding the lease records its own. And a destination
// an operator holds through one node is attempted by neither, until released.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { SQL } from "bun";
import { parseConfigText } from "../../src/config/load.ts";
import type { Config } from "../../src/config/config.ts";
import { createLogger } from "../../src/lib/logger.ts";
import type { WorkerDeps } from "../../src/outbound/delivery/worker-deps.ts";
import { createPgOutboundRepo } from "../../src/outbound/queue/queue.pg.repo.ts";
import type { OutboundRepo } from "../../src/outbound/queue/queue.port.ts";
import { createQueueControlRepo } from "../../src/outbound/queue/queue-control.repo.ts";
import { controlEvents, pgQueuePorts } from "../../src/outbound/queue/wiring.ts";
import { pgDb } from "../../src/store/db/pg-db.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";
import { nodeWorker } from "./node-worker.ts";
import { ids, QUEUE_TABLES } from "./queue-engines.ts";

const engine = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;
const it = engine.test;
const DOMAINS = ["a.test", "b.test", "c.test", "d.test", "e.test", "f.test"];
const RAW = Buffer.from("From: a@b.c\r\nTo: x@y.z\r\nSubject: hi\r\n\r\nhello\r\n");

let handle: EngineHandle | undefined;
let sink: SmtpSink;
let dns: TestDnsServer;
let config: Config;
const dir = tempDir();
/** Every node's SQL client, closed after the test. */
const clients: SQL[] = [];

/** A node: its own SQL client and repository. */
const nodeRepo = (): { sql: SQL; repo: OutboundRepo } => {
  if (handle?.kind !== "postgres") throw new Error("PostgreSQL only");
  const sql = new SQL(handle.url, { max: 4 });
  clients.push(sql);
  return { sql, repo: createPgOutboundRepo(sql, pgQueuePorts()) };
};

const workerOn = (repo: OutboundRepo, nodeId: string, deps: Partial<WorkerDeps> = {}) =>
  nodeWorker(repo, nodeId, () => config, dns.address, deps);

beforeAll(async () => {
  if (!engine.available()) return;
  handle = await engine.open();
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, ...DOMAINS);
  // Two connections per node: more domains than connections, so each node gives some of
  // what it claimed back (release) and the other node takes it.
  const parsed = parseConfigText(
    testConfigToml({
      dataDir: dir.path,
      dnsServer: dns.address,
      outbound: `mx_port = ${sink.port}\nallow_private_mx = true\nconcurrency = 2`,
    }),
  );
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  config = parsed.config;
}, 60_000);
beforeEach(async () => {
  await handle?.clear(QUEUE_TABLES);
  if (sink) {
    sink.messages.length = 0;
    sink.attempts.clear();
    sink.dataDelayMs = 0;
  }
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await handle?.close();
  await sink?.stop();
  await dns?.stop();
  dir.remove();
});

describe("delivery workers of two nodes on one PostgreSQL", () => {
  it("deliver every recipient exactly once between them", async () => {
    const a = nodeRepo();
    const b = nodeRepo();
    // 36 messages of 2 recipients each, in 6 domains.
    const now = Date.now();
    const all: string[] = [];
    for (let m = 0; m < 36; m++) {
      const recipients = [0, 1].map((k) => {
        const email = `u${m}-${k}@${DOMAINS[(m + k) % DOMAINS.length]}`;
        all.push(email);
        return queuedRecipient(`r${m}-${k}`, `m${m}`, { position: k, email, domain: email.split("@")[1]!, nextAttemptAtMs: now });
      });
      await a.repo.insert(queuedMessage(`m${m}`, { createdAtMs: now }), recipients, [], { raw: RAW, webhook: false });
    }
    // Slow enough that neither node delivers everything before the other claims: one node
    // alone, two connections, would take 2 s, and a node that found nothing looks again in 1 s.
    sink.dataDelayMs = 60;
    const delivered = { a: 0, b: 0 };
    const wa = workerOn(a.repo, "node-a", { recorded: () => delivered.a++ });
    const wb = workerOn(b.repo, "node-b", { recorded: () => delivered.b++ });
    await Promise.all([wa.start(), wb.start()]);
    try {
      await eventually(
        async () => (await a.repo.queueDepth(Date.now() + 1)).due === 0 && delivered.a + delivered.b === all.length,
        60_000,
        "every recipient recorded",
      );
    } finally {
      await Promise.all([wa.stop(), wb.stop()]);
    }
    expect(sink.messages.length).toBe(all.length);
    expect([...sink.attempts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(new Set(sink.messages.flatMap((m) => m.rcptTo)).size).toBe(all.length);
    // Both nodes delivered (the queue was shared, not drained by the first).
    expect(delivered.a).toBeGreaterThan(0);
    expect(delivered.b).toBeGreaterThan(0);
    const states: { state: string; status: string; n: string }[] =
      await a.sql`SELECT state, status, COUNT(*) AS n FROM outbound_recipients GROUP BY state, status`;
    expect(states.map((r) => [r.state, r.status, Number(r.n)])).toEqual([["done", "delivery", all.length]]);
  }, 90_000);

  it("a destination held through one node gets no attempt on either node; released through the other, one delivers it", async () => {
    const a = nodeRepo();
    const b = nodeRepo();
    const now = Date.now();
    const message = (id: string, email: string) =>
      a.repo.insert(
        queuedMessage(id, { createdAtMs: now }),
        [queuedRecipient(`r-${id}`, id, { email, domain: email.split("@")[1]!, nextAttemptAtMs: now })],
        [],
        { raw: RAW, webhook: false },
      );
    await message("held", "x@a.test");
    await message("free", "y@b.test");
    expect(await createQueueControlRepo(pgDb(a.sql), controlEvents).hold({ destination: "a.test" }, now)).toBe(1);
    const wa = workerOn(a.repo, "node-a");
    const wb = workerOn(b.repo, "node-b");
    await Promise.all([wa.start(), wb.start()]);
    try {
      await eventually(() => sink.to("y@b.test").length === 1, 10_000, "the other destination's delivery");
      // Both nodes looked for due work again meanwhile (they poll every second when idle).
      await Bun.sleep(1500);
      expect(sink.attempts.get("x@a.test") ?? 0).toBe(0);
      expect(await createQueueControlRepo(pgDb(b.sql), controlEvents).release({ destination: "a.test" }, Date.now())).toBe(1);
      wb.kick();
      await eventually(() => sink.to("x@a.test").length === 1, 10_000, "the released recipient's delivery");
    } finally {
      await Promise.all([wa.stop(), wb.stop()]);
    }
    expect(sink.attempts.get("x@a.test")).toBe(1);
  }, 60_000);

  it("a worker whose lease ran out during its attempt, the recipient claimed by another node, drops its outcome and says so", async () => {
    const a = nodeRepo();
    const b = nodeRepo();
    const LEASE_MS = config.outbound.leaseTimeMs;
    let nowMs = Date.now();
    await a.repo.insert(
      queuedMessage("m1", { createdAtMs: nowMs }),
      [queuedRecipient("r1", "m1", { email: "late@a.test", domain: "a.test", nextAttemptAtMs: nowMs })],
      [],
      {
        raw: RAW,
        webhook: false,
      },
    );
    const warnings: Record<string, unknown>[] = [];
    const logger = createLogger({ level: "warn", sink: (line) => warnings.push(JSON.parse(line)) });
    let lost = 0;
    let recorded = 0;
    let takenOver: string[] = [];
    const wa = workerOn(a.repo, "node-a", {
      clock: { nowMs: () => nowMs },
      logger,
      leaseLost: () => lost++,
      recorded: () => recorded++,
      // As node a makes its copy, it stalls past its lease, and node b claims the recipient.
      prepare: async (_m, _id, _to, raw) => {
        nowMs += LEASE_MS + 1;
        takenOver = ids(await b.repo.claimDue("node-b/1-b", nowMs, nowMs + LEASE_MS, 10, []));
        return raw;
      },
    });
    await wa.start();
    try {
      await eventually(() => lost === 1, 20_000, "the lost lease");
    } finally {
      await wa.stop();
    }
    expect(takenOver).toEqual(["r1"]);
    // a sent it (at-least-once), but wrote nothing: b holds the recipient, no event is stored.
    expect(sink.to("late@a.test")).toHaveLength(1);
    expect(recorded).toBe(0);
    expect(await a.repo.eventsOf(["r1"])).toEqual([]);
    const [row]: { state: string; locked_by: string }[] = await a.sql`SELECT state, locked_by FROM outbound_recipients WHERE id = 'r1'`;
    expect(row).toEqual({ state: "queued", locked_by: "node-b/1-b" });
    expect(warnings.map((w) => [w.level, w.msg, w.recipient_id])).toEqual([
      ["warn", "lease lost: the outcome is dropped; the recipient is attempted again", "r1"],
    ]);
    // Node b's attempt is the one recorded.
    const done = { status: "delivery" as const, state: "done" as const, attempts: 1, firstAttemptAtMs: nowMs, nextAttemptAtMs: nowMs };
    const event = { messageId: "m1", recipientId: "r1", kind: "delivery" as const, details: {}, createdAtMs: nowMs };
    expect(await b.repo.finishAttempt("node-b/1-b", "r1", done, [event], nowMs + 1, { webhook: false })).toHaveLength(1);
    expect(await a.repo.getRecipient("m1", "r1")).toMatchObject({ state: "done", status: "delivery", attempts: 1 });
  }, 60_000);

  it("a worker frees at start the leases of its own node's earlier process, not another node's on the same host", async () => {
    const a = nodeRepo();
    const nowMs = Date.now();
    const recipients = ["r1", "r2"].map((id, position) =>
      queuedRecipient(id, "m1", { position, email: `${id}@a.test`, domain: "a.test", nextAttemptAtMs: nowMs }),
    );
    await a.repo.insert(queuedMessage("m1", { createdAtMs: nowMs }), recipients, [], { raw: RAW, webhook: false });
    // node-a's earlier process (crashed) holds r1, node-b (alive, same host) holds r2, both for long.
    await a.repo.claimDue("node-a/999-dead", nowMs, nowMs + 3_600_000, 1, []);
    await a.repo.claimDue("node-b/1000-live", nowMs, nowMs + 3_600_000, 1, []);
    const wa = workerOn(a.repo, "node-a");
    await wa.start();
    try {
      await eventually(() => sink.to("r1@a.test").length === 1, 20_000, "r1 delivered");
      await wa.idle();
    } finally {
      await wa.stop();
    }
    expect(sink.to("r2@a.test")).toEqual([]);
    const [row]: { locked_by: string }[] = await a.sql`SELECT locked_by FROM outbound_recipients WHERE id = 'r2'`;
    expect(row!.locked_by).toBe("node-b/1000-live");
  }, 60_000);
});
