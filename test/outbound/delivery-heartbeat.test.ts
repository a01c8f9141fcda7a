// A delivery attempt slower than outbound.lease_time, on both engines: two delivery workers
// (two nodes) share the queue, and the remote server (the sink, found by MX in a test DNS
// server) waits three lease times before it answers the message's final dot. The worker
// delivering renews its lease meanwhile (its heartbeat), so the other never takes the
// recipient: the message is delivered exactly once, and its outcome recorded by the worker
// that sent it. And a worker that learns from its heartbeat that it lost a lease does not
// start the attempt: the new holder makes it.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { SQL } from "bun";
import type { Config } from "../../src/config/config.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { createLogger } from "../../src/lib/logger.ts";
import type { WorkerDeps } from "../../src/outbound/delivery/worker-deps.ts";
import { createPgOutboundRepo } from "../../src/outbound/queue/queue.pg.repo.ts";
import type { OutboundRepo } from "../../src/outbound/queue/queue.port.ts";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { pgQueuePorts, queuePorts } from "../../src/outbound/queue/wiring.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";
import { nodeWorker } from "./node-worker.ts";
import { ids, QUEUE_TABLES } from "./queue-engines.ts";

const LEASE_MS = 1000;
const RAW = Buffer.from("From: a@b.c\r\nTo: x@y.z\r\nSubject: slow\r\n\r\nhello\r\n");

let sink: SmtpSink;
let dns: TestDnsServer;
let config: Config;
const dir = tempDir();

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "slow.test");
  const parsed = parseConfigText(
    testConfigToml({
      dataDir: dir.path,
      dnsServer: dns.address,
      outbound: `mx_port = ${sink.port}\nallow_private_mx = true\nlease_time = "${LEASE_MS}ms"`,
    }),
  );
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  config = parsed.config;
});
afterAll(async () => {
  await sink?.stop();
  await dns?.stop();
  dir.remove();
});

describe.each(STORE_ENGINES)("a delivery slower than the lease on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  const clients: SQL[] = [];
  /** A node's repository: on PostgreSQL its own SQL client; on SQLite the one store. */
  const nodeRepo = (): OutboundRepo => {
    if (handle!.kind === "sqlite") return createOutboundRepo(handle!.store, queuePorts(handle!.store));
    const sql = new SQL(handle!.url, { max: 4 });
    clients.push(sql);
    return createPgOutboundRepo(sql, pgQueuePorts());
  };
  const workerOn = (repo: OutboundRepo, nodeId: string, deps: Partial<WorkerDeps> = {}) =>
    nodeWorker(repo, nodeId, () => config, dns.address, deps);

  beforeAll(async () => {
    if (engine.available()) handle = await engine.open();
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(QUEUE_TABLES);
    sink.messages.length = 0;
    sink.attempts.clear();
    sink.dataDelayMs = 0;
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await handle?.close();
  });

  it("the attempt keeps its lease while the server takes three lease times to answer: delivered once, recorded by the worker that sent it", async () => {
    const a = nodeRepo();
    const b = nodeRepo();
    const nowMs = Date.now();
    await a.insert(
      queuedMessage("m1", { createdAtMs: nowMs }),
      [queuedRecipient("r1", "m1", { email: "slow@slow.test", domain: "slow.test", nextAttemptAtMs: nowMs })],
      [],
      { raw: RAW, webhook: false },
    );
    sink.dataDelayMs = 3 * LEASE_MS;
    const recorded = { a: 0, b: 0 };
    let lost = 0;
    // Node a alone first, so that it is the one delivering; node b starts while a waits for the answer.
    const wa = workerOn(a, "node-a", { recorded: () => recorded.a++, leaseLost: () => lost++ });
    const wb = workerOn(b, "node-b", { recorded: () => recorded.b++, leaseLost: () => lost++ });
    await wa.start();
    try {
      await eventually(() => sink.attempts.get("slow@slow.test") === 1, 10_000, "node a's attempt");
      await wb.start();
      await eventually(() => recorded.a + recorded.b + lost > 0, 20_000, "the outcome");
      // Node b looks at the queue once a second: give it two more looks after the outcome.
      await Bun.sleep(2 * LEASE_MS + 500);
    } finally {
      await Promise.all([wa.stop(), wb.stop()]);
    }
    expect(sink.attempts.get("slow@slow.test")).toBe(1);
    expect(sink.messages).toHaveLength(1);
    expect({ ...recorded, lost }).toEqual({ a: 1, b: 0, lost: 0 });
    expect(await a.getRecipient("m1", "r1")).toMatchObject({ state: "done", status: "delivery", attempts: 1 });
  }, 60_000);

  it("a worker whose heartbeat finds its leases lost (it stalled past them, another node took them) does not start the attempts it has not made", async () => {
    const a = nodeRepo();
    const b = nodeRepo();
    let nowMs = Date.now();
    const recipients = ["r1", "r2"].map((id, position) =>
      queuedRecipient(id, "m1", { position, email: `${id}@slow.test`, domain: "slow.test", nextAttemptAtMs: nowMs }),
    );
    await a.insert(queuedMessage("m1", { createdAtMs: nowMs }), recipients, [], { raw: RAW, webhook: false });
    sink.dataDelayMs = 1500;
    const warnings: Record<string, unknown>[] = [];
    let lost = 0;
    const wa = workerOn(a, "node-a", {
      clock: { nowMs: () => nowMs },
      logger: createLogger({ level: "warn", sink: (line) => warnings.push(JSON.parse(line)) }),
      leaseLost: () => lost++,
    });
    await wa.start();
    let taken: string[] = [];
    // The recipient whose transaction goes first (both are due at the same time: either).
    let first = "";
    try {
      // Its transaction is under way (the server holds its answer); the other waits its turn on the connection.
      first = (await eventually(() => [...sink.attempts.keys()][0], 10_000, "the first attempt")).split("@")[0]!;
      nowMs += LEASE_MS + 1;
      taken = ids(await b.claimDue("node-b/1-b", nowMs, nowMs + 60_000, 10, [])).sort();
      await wa.held.renew();
      await eventually(() => lost === 1, 10_000, "the first one's outcome dropped");
      await wa.idle();
    } finally {
      await wa.stop();
    }
    const second = first === "r1" ? "r2" : "r1";
    expect(taken).toEqual(["r1", "r2"]);
    expect([...sink.attempts.entries()]).toEqual([[`${first}@slow.test`, 1]]);
    // The outcome is recorded (dropped) as the next transaction would start: either may be said first.
    expect(warnings.map((w) => [w.msg, w.recipient_id]).sort()).toEqual([
      ["lease lost before the attempt: left to the worker holding it", second],
      ["lease lost: the outcome is dropped; the recipient is attempted again", first],
      ["recipient leases lost: another worker holds them now, or will", undefined],
    ]);
  }, 60_000);
});
