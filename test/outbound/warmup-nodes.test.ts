// A warm-up cap holds across the nodes of a cluster (issue 29): two delivery workers on one
// PostgreSQL queue, each with its own connections to the store, deliver from a pool address
// whose cap today is 4 to one destination. Between them the real SMTP server on loopback
// gets 4 messages from 127.0.0.2; the rest wait for the next day, unattempted.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { SQL } from "bun";
import type { Config } from "../../src/config/config.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { nextDayStartMs } from "../../src/outbound/delivery/warmup.ts";
import { createWarmupRepo } from "../../src/outbound/delivery/warmup.repo.ts";
import { createPgOutboundRepo } from "../../src/outbound/queue/queue.pg.repo.ts";
import { pgQueuePorts } from "../../src/outbound/queue/wiring.ts";
import { pgDb } from "../../src/store/db/pg-db.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { routeToSink, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";
import { nodeWorker } from "./node-worker.ts";

const engine = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;
const it = engine.test;
const RAW = Buffer.from("From: a@b.c\r\nTo: x@y.z\r\nSubject: hi\r\n\r\nhello\r\n");
// A start far ahead: until then the first day's cap holds, whatever day the test runs on.
const START = "2099-01-01";

let handle: EngineHandle | undefined;
let sink: SmtpSink;
let dns: TestDnsServer;
let config: Config;
const dir = tempDir();
const clients: SQL[] = [];

/** A node: its own SQL client, queue repository and warm-up counts. */
const node = () => {
  if (handle?.kind !== "postgres") throw new Error("PostgreSQL only");
  const sql = new SQL(handle.url, { max: 4 });
  clients.push(sql);
  return { sql, repo: createPgOutboundRepo(sql, pgQueuePorts()), warmup: createWarmupRepo(pgDb(sql)) };
};

beforeAll(async () => {
  if (!engine.available()) return;
  handle = await engine.open();
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "a.test");
  const parsed = parseConfigText(
    testConfigToml({
      dataDir: dir.path,
      dnsServer: dns.address,
      outbound: `mx_port = ${sink.port}\nallow_private_mx = true\nconcurrency = 2
[[outbound.ip_pools]]
name = "warm"
addresses = [{ ip = "127.0.0.2", helo = "mta2.postroom.test", warmup = { start = "${START}", daily = [4] } }]`,
      accounts: [{ ...ACCOUNT_A, outboundExtra: 'ip_pool = "warm"' }],
    }),
  );
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  config = parsed.config;
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.close();
  await handle?.close();
  await sink?.stop();
  await dns?.stop();
  dir.remove();
});

describe("warm-up caps on two nodes of one PostgreSQL", () => {
  it("the day's cap is shared: 4 delivered between them, the other 16 wait for tomorrow unattempted", async () => {
    const a = node();
    const b = node();
    const now = Date.now();
    for (let m = 0; m < 20; m++) {
      await a.repo.insert(
        queuedMessage(`m${m}`, { createdAtMs: now, outboundAccountId: ACCOUNT_A.outboundId }),
        [queuedRecipient(`r${m}`, `m${m}`, { email: `u${m}@a.test`, domain: "a.test", nextAttemptAtMs: now })],
        [],
        { raw: RAW, webhook: false },
      );
    }
    sink.dataDelayMs = 30;
    const wa = nodeWorker(a.repo, "node-a", () => config, dns.address, { warmup: a.warmup });
    const wb = nodeWorker(b.repo, "node-b", () => config, dns.address, { warmup: b.warmup });
    await Promise.all([wa.start(), wb.start()]);
    try {
      // Done when nothing is due before tomorrow and nobody holds a recipient.
      for (const until = Date.now() + 30_000; Date.now() < until; await Bun.sleep(50)) {
        const [row]: { busy: string }[] = await a.sql`SELECT COUNT(*) AS busy FROM outbound_recipients
          WHERE state = 'queued' AND (next_attempt_at <= ${Date.now()} OR locked_by IS NOT NULL)`;
        if (Number(row!.busy) === 0) break;
      }
    } finally {
      await Promise.all([wa.stop(), wb.stop()]);
    }
    expect(sink.messages.length).toBe(4);
    expect(new Set(sink.messages.map((m) => `${m.remoteAddress} ${m.helo}`))).toEqual(new Set(["127.0.0.2 mta2.postroom.test"]));
    const rows: { state: string; attempts: string; next: string; n: string }[] = await a.sql`SELECT state, attempts,
      CASE WHEN state = 'queued' THEN next_attempt_at ELSE 0 END AS next, COUNT(*) AS n
      FROM outbound_recipients GROUP BY 1, 2, 3 ORDER BY 1`;
    expect(rows.map((r) => [r.state, Number(r.attempts), Number(r.next), Number(r.n)])).toEqual([
      ["done", 1, 0, 4],
      ["queued", 0, nextDayStartMs(now), 16],
    ]);
    expect(await a.warmup.sent("127.0.0.2", "a.test", nextDayStartMs(now) - 86_400_000)).toBe(4);
  }, 60_000);
});
