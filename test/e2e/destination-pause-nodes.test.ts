// An operator's destination pause on two nodes of one PostgreSQL (issue 29, API.md section
// 10): paused through node 1's operator API, the destination gets no attempt from either
// node's delivery worker (its mail sent through node 2 waits) while another destination is
// delivered; resumed through node 2, it goes out at once. An account's token is refused (403).
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { SQL } from "bun";
import { hashSecret } from "../../src/auth/secrets.ts";
import { bearer, type TestApp } from "../helpers/app.ts";
import { APP_ENGINES } from "../helpers/app-engines.ts";
import { startTestNodes } from "../helpers/app-nodes.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { startMigratedPostgres, type Postgres } from "../helpers/postgres.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

const engine = APP_ENGINES.find((e) => e.name === "PostgreSQL")!;
const it = engine.test;
const OPERATOR = "pr_operator_token_for_pauses";
const OPS = "/api/v0.1/operator/destinations";
const PROVIDER = `[[outbound.destinations]]\nname = "provider"\nmx = [".provider.test"]\nthrottle_replies = ["4.7.28"]\npause = "3s"`;

describe("a destination paused by an operator, on two nodes", () => {
  let pg: Postgres | undefined;
  let dns: TestDnsServer;
  let sink: SmtpSink;
  let node1: TestApp;
  let node2: TestApp;
  const dir = tempDir();

  beforeAll(async () => {
    if (!engine.available()) return;
    pg = await startMigratedPostgres();
    dns = await TestDnsServer.start();
    sink = await SmtpSink.start();
    routeToSink(dns, "paused.example", "open.example");
    for (const d of ["a.test", "b.test"]) {
      dns.set(d, [{ type: "MX", exchange: `mx.${d.split(".")[0]}.provider.test`, priority: 10 }]);
      dns.set(`mx.${d.split(".")[0]}.provider.test`, [{ type: "A", address: "127.0.0.1" }]);
    }
    sink.script = (rcpt, attempt) =>
      rcpt === "first@a.test" && attempt === 1 ? { code: 421, text: "4.7.28 rate limited, try again later", at: "rcpt" } : "accept";
    [node1, node2] = (await startTestNodes(pg, dir.path, 2, {
      dnsServer: dns.address,
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\n${PROVIDER}`,
      extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
    })) as [TestApp, TestApp];
    await verifiedSendingDomain(node1, dns, ACCOUNT_A, "sender.test");
  }, 60_000);
  afterAll(async () => {
    await node2?.stop();
    await node1?.stop();
    await pg?.stop();
    await dns?.stop();
    await sink?.stop();
    dir.remove();
  });

  const send = async (node: TestApp, to: string) => {
    const r = await node.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to, subject: to, plain: "x" },
    });
    expect(r.status).toBe(202);
  };

  it("gets no attempt from either node until resumed, then goes out at once; another destination is not held up", async () => {
    const refused = await node1.json("POST", `${OPS}/paused.example/pause`, { auth: bearer(ACCOUNT_A.token) });
    expect(refused.status).toBe(403);
    const paused = await node1.json("POST", `${OPS}/Paused.Example/pause`, { auth: bearer(OPERATOR) });
    expect([paused.status, paused.body]).toEqual([200, { destination: "paused.example", paused: true }]);
    // Every node reads the pauses each second.
    await Bun.sleep(1200);
    for (let i = 0; i < 4; i++) await send(i % 2 === 0 ? node2 : node1, `r${i}@paused.example`);
    await send(node2, "someone@open.example");
    await eventually(() => sink.to("someone@open.example").length === 1, 10_000, "the other destination's delivery");
    await Bun.sleep(1500);
    expect(sink.messages.filter((m) => m.rcptTo[0]!.endsWith("@paused.example"))).toEqual([]);
    expect([...sink.attempts.keys()].filter((k) => k.endsWith("@paused.example"))).toEqual([]);

    const listed = await node2.json("GET", `${OPS}/paused`, { auth: bearer(OPERATOR) });
    expect(listed.body).toEqual([
      {
        destination: "paused.example",
        source: "operator",
        reason: expect.stringContaining("admin_tokens:"),
        paused_at: expect.any(String),
        until: null,
      },
    ]);

    const resumedAt = Date.now();
    const resumed = await node2.json("POST", `${OPS}/paused.example/resume`, { auth: bearer(OPERATOR) });
    expect([resumed.status, resumed.body]).toEqual([200, { destination: "paused.example", paused: false }]);
    await eventually(() => sink.messages.filter((m) => m.rcptTo[0]!.endsWith("@paused.example")).length === 4, 10_000, "4 delivered");
    expect(Date.now() - resumedAt).toBeLessThan(5000);
    const bad = await node2.json("POST", `${OPS}/not a destination/pause`, { auth: bearer(OPERATOR) });
    expect(bad.status).toBe(422);
  }, 60_000);

  it("a throttle reply seen by one node pauses the destination on the other within a second", async () => {
    await send(node1, "first@a.test");
    await eventually(() => sink.attempts.get("first@a.test") === 1, 10_000, "the throttled attempt");
    const throttledAt = Date.now();
    await Bun.sleep(1100);
    for (let i = 0; i < 4; i++) await send(i % 2 === 0 ? node2 : node1, `b${i}@b.test`);
    await Bun.sleep(1000);
    // Neither node attempts the destination while it is paused (3 s from the throttle).
    expect([...sink.attempts.keys()].filter((k) => k.endsWith("@b.test"))).toEqual([]);
    await eventually(
      () => sink.messages.filter((m) => m.rcptTo[0]!.endsWith("@b.test") || m.rcptTo[0] === "first@a.test").length === 5,
      15_000,
      "5 delivered after the pause",
    );
    const elapsed = Date.now() - throttledAt;
    expect(elapsed).toBeGreaterThanOrEqual(3000);
    expect(elapsed).toBeLessThan(9000);
    expect(sink.attempts.get("first@a.test")).toBe(2);
    // Each recipient's row records its destination, whichever node resolved it.
    const sql = new SQL(pg!.url);
    try {
      const rows = await sql`SELECT destination, count(*)::int AS n FROM outbound_recipients GROUP BY destination ORDER BY destination`;
      expect([...rows]).toEqual([
        { destination: "open.example", n: 1 },
        { destination: "paused.example", n: 4 },
        { destination: "provider", n: 5 },
      ]);
    } finally {
      await sql.close();
    }
  }, 60_000);
});
