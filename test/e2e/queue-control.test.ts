// The operator's queue and bounce classes, end to end with the real SMTP sink: a block does
// not suppress, a hard bounce does until its expiry; held recipients are not attempted,
// not even by retry, and stay held across a restart; release and retry deliver at once;
// cancel by message; redeliver after a block; bad input and the wrong token refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

const OPERATOR = "pr_operator_queue_token";
const OP = "/api/v0.1/operator";
const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const MIN = 60_000;
/** A destination rule taking two domains by their MX host (issue 29: the queue shows destinations). */
const RULE = `[[outbound.destinations]]\nname = "ruled"\nmx = [".ruled.test"]`;
const clock = new ManualClock(Date.now());
const dir = tempDir();
const logLines: string[] = [];

let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;

const start = () =>
  startTestApp({
    dataDir: dir.path,
    clock,
    dnsServer: dns.address,
    accounts: [ACCOUNT_A],
    logger: createLogger({ level: "info", sink: (line) => void logLines.push(line) }),
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nsuppression_ttl = "7d"\n${RULE}`,
    extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
  });

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org", "slow.example", "held.example", "cancel.example");
  for (const domain of ["one.example", "two.example"]) dns.set(domain, [{ type: "MX", exchange: "mx.ruled.test", priority: 10 }]);
  dns.set("mx.ruled.test", [{ type: "A", address: "127.0.0.1" }]);
  t = await start();
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  dir.remove();
});

const op = (method: string, path: string, body?: unknown) => t.json(method, `${OP}${path}`, { auth: bearer(OPERATOR), body });
const send = async (to: string) => {
  const res = await t.json("POST", SEND, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to, subject: "hello", plain: "x" },
  });
  expect(res.status).toBe(202);
  return res.body.id as string;
};
const message = async (id: string) =>
  (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;
const kinds = async (id: string): Promise<string[]> => (await message(id)).recipients[0].events.map((e: { kind: string }) => e.kind);
const suppressionsOf = async (email: string) =>
  (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/suppressions?query=${encodeURIComponent(email)}`, { auth: bearer(ACCOUNT_A.token) }))
    .body;
const attempts = (rcpt: string) => sink.attempts.get(rcpt) ?? 0;
/** Lets the worker look for due work now and finish what it starts. */
const settle = async () => {
  t.app.delivery.kick();
  await Bun.sleep(30);
  await t.app.delivery.idle();
};

describe("bounce classes and suppression", () => {
  test("a block bounce carries bounce_class block and does not suppress the address", async () => {
    sink.script = (rcpt) =>
      rcpt === "listed@example.org"
        ? { code: 554, text: "5.7.1 Service unavailable; client host blocked using zen.spamhaus.org" }
        : "accept";
    const id = await send("listed@example.org");
    await eventually(async () => (await kinds(id)).includes("bounce"), 10_000, "the bounce");
    const bounce = (await message(id)).recipients[0].events.find((e: { kind: string }) => e.kind === "bounce");
    expect(bounce.details).toMatchObject({ smtp_code: 554, bounce_class: "block" });
    expect(await suppressionsOf("listed@")).toEqual([]);
    // The address still gets mail: the next message is attempted, not suppressed.
    const again = await send("listed@example.org");
    expect((await message(again)).recipients[0].status).not.toBe("suppressed");
    // E12 finds the messages by the class of their bounces.
    const found = await t.json(
      "GET",
      `/api/v0.1/${ACCOUNT_A.id}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=bounce_class:block`,
      { auth: bearer(ACCOUNT_A.token) },
    );
    expect(found.body.map((m: { id: string }) => m.id)).toContain(id);
    const bad = await t.json(
      "GET",
      `/api/v0.1/${ACCOUNT_A.id}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=bounce_class:nope`,
      {
        auth: bearer(ACCOUNT_A.token),
      },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.error).toStartWith("query: bounce_class must be one of hard, mailbox_full");
  });

  test("a hard bounce suppresses the address until outbound.suppression_ttl has passed", async () => {
    sink.script = (rcpt) =>
      rcpt === "gone@example.org" ? { code: 550, text: "5.1.1 The email account that you tried to reach does not exist" } : "accept";
    const id = await send("gone@example.org");
    await eventually(async () => (await kinds(id)).includes("bounce"), 10_000, "the bounce");
    const [entry] = await suppressionsOf("gone@");
    expect(entry).toMatchObject({ email: "gone@example.org", reason: "bounce", details: { bounce_class: "hard" } });
    expect(Date.parse(entry.expires_at) - Date.parse(entry.created_at)).toBe(7 * 24 * 60 * MIN);
    const blocked = await send("gone@example.org");
    expect((await message(blocked)).recipients[0].status).toBe("suppressed");
    // Past its expiry the entry stops applying: the address gets mail again.
    clock.advance(7 * 24 * 60 * MIN + 1);
    sink.script = () => "accept";
    const later = await send("gone@example.org");
    expect((await message(later)).recipients[0].status).not.toBe("suppressed");
    await eventually(() => sink.to("gone@example.org").length === 1, 10_000, "the delivery after the expiry");
  });
});

describe("the operator's queue", () => {
  test("held recipients are not attempted, not even by retry, and stay held across a restart; release delivers at once", async () => {
    sink.script = (rcpt, n) => (rcpt === "held@held.example" && n === 1 ? { code: 451, text: "4.3.0 try again later" } : "accept");
    const id = await send("held@held.example");
    await eventually(async () => (await kinds(id)).includes("soft_bounce"), 10_000, "the first, deferred attempt");
    expect(await op("POST", "/queue/hold", { destination: "held.example" })).toMatchObject({ status: 200, body: { affected: 1 } });
    expect(await op("POST", "/queue/retry", { destination: "held.example" })).toMatchObject({ status: 200, body: { affected: 0 } });
    expect(
      (await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}/retry`, { auth: bearer(ACCOUNT_A.token) })).status,
    ).toBeLessThan(500);
    clock.advance(30 * MIN);
    await settle();
    expect(attempts("held@held.example")).toBe(1);
    const summary = (await op("GET", "/queue/summary")).body;
    expect(summary).toContainEqual({
      destination: "held.example",
      queued: 0,
      held: 1,
      paused: false,
      oldest_at: expect.any(String),
      last_response: "451 4.3.0 try again later",
    });
    await t.stop();
    t = await start();
    clock.advance(60 * MIN);
    await settle();
    expect(attempts("held@held.example")).toBe(1);
    const [entry] = (await op("GET", "/queue?state=held&destination=held.example")).body;
    expect(entry).toMatchObject({
      message_id: id,
      recipient: "held@held.example",
      destination: "held.example",
      state: "held",
      attempts: 1,
    });
    expect(await op("POST", "/queue/release", { destination: "held.example" })).toMatchObject({ body: { affected: 1 } });
    await eventually(() => sink.to("held@held.example").length === 1, 5_000, "delivery right after the release");
    expect(logLines.some((l) => l.includes('"msg":"queue hold"') && l.includes("admin_tokens:") && l.includes('"affected":1'))).toBeTrue();
  });

  test("a rule's recipients are listed by its name; a paused destination shows paused until resumed", async () => {
    sink.script = (rcpt, n) =>
      (rcpt.endsWith("@one.example") || rcpt.endsWith("@two.example")) && n === 1 ? { code: 451, text: "4.3.0 later" } : "accept";
    const ids = [await send("a@one.example"), await send("b@two.example")];
    for (const id of ids) await eventually(async () => (await kinds(id)).includes("soft_bounce"), 10_000, "the deferred attempt");
    // Before: the queue knew only domains, so the rule's name found nothing.
    const entries = (await op("GET", "/queue?destination=ruled")).body;
    expect(entries.map((e: { recipient: string; destination: string }) => [e.recipient, e.destination]).sort()).toEqual([
      ["a@one.example", "ruled"],
      ["b@two.example", "ruled"],
    ]);
    expect(await op("POST", "/destinations/ruled/pause")).toMatchObject({ status: 200, body: { destination: "ruled", paused: true } });
    const paused = (await op("GET", "/queue/summary")).body.find((s: { destination: string }) => s.destination === "ruled");
    expect(paused).toMatchObject({ destination: "ruled", queued: 2, paused: true });
    expect(await op("POST", "/destinations/ruled/resume")).toMatchObject({ status: 200, body: { paused: false } });
    const resumed = (await op("GET", "/queue/summary")).body.find((s: { destination: string }) => s.destination === "ruled");
    expect(resumed).toMatchObject({ destination: "ruled", paused: false });
    expect(await op("POST", "/queue/retry", { destination: "ruled" })).toMatchObject({ body: { affected: 2 } });
    await eventually(() => sink.to("a@one.example").length + sink.to("b@two.example").length === 2, 5_000, "both delivered");
  });

  test("retry delivers a deferred recipient at once", async () => {
    sink.script = (rcpt, n) =>
      rcpt === "later@slow.example" && n === 1 ? { code: 421, text: "4.7.0 Try again later, closing connection." } : "accept";
    const id = await send("later@slow.example");
    await eventually(async () => (await kinds(id)).includes("soft_bounce"), 10_000, "the deferred attempt");
    const [entry] = (await op("GET", "/queue?destination=slow.example")).body;
    expect(entry).toMatchObject({ state: "queued", attempts: 1, last_response: "421 4.7.0 Try again later, closing connection." });
    expect(await op("POST", "/queue/retry", { destination: "slow.example", older_than: "1m" })).toMatchObject({ body: { affected: 0 } });
    expect(await op("POST", "/queue/retry", { outbound_account_id: ACCOUNT_A.outboundId, destination: "slow.example" })).toMatchObject({
      body: { affected: 1 },
    });
    await eventually(() => sink.to("later@slow.example").length === 1, 5_000, "delivery right after the retry");
  });

  test("cancel by message ends its waiting recipient with an error event", async () => {
    sink.script = (rcpt) => (rcpt === "no@cancel.example" ? { code: 451, text: "4.4.5 Server busy, try again later." } : "accept");
    const id = await send("no@cancel.example");
    await eventually(async () => (await kinds(id)).includes("soft_bounce"), 10_000, "the deferred attempt");
    expect(await op("POST", "/queue/cancel", { message_id: id })).toMatchObject({ body: { affected: 1 } });
    const events = (await message(id)).recipients[0].events;
    expect(events.at(-1)).toMatchObject({ kind: "error", details: { message: "cancelled by the operator", retried: false } });
    expect((await op("GET", "/queue?destination=cancel.example")).body).toEqual([]);
  });

  test("redeliver after a block queues the blocked recipients again and delivers them", async () => {
    const since = new Date(clock.nowMs()).toISOString();
    sink.script = (rcpt, n) =>
      rcpt === "blocked@example.org" && n === 1 ? { code: 550, text: "5.7.606 Access denied, banned sending IP [127.0.0.1]." } : "accept";
    const id = await send("blocked@example.org");
    await eventually(async () => (await kinds(id)).includes("bounce"), 10_000, "the block");
    expect(await suppressionsOf("blocked@")).toEqual([]);
    expect(await op("POST", "/queue/redeliver", { bounce_class: "hard", since })).toMatchObject({ body: { affected: 0 } });
    expect(await op("POST", "/queue/redeliver", { bounce_class: "block", since, destination: "example.org" })).toMatchObject({
      body: { affected: 1 },
    });
    await eventually(() => sink.to("blocked@example.org").length === 1, 5_000, "delivery after the redeliver");
  });

  test("bad input: a filter with no field is 422, an account token 403, a filter matching nothing {affected: 0}", async () => {
    const empty = await op("POST", "/queue/hold", {});
    expect(empty.status).toBe(422);
    expect(empty.body.error).toBe("destination: a filter needs at least one of destination, outbound_account_id and message_id");
    expect((await op("POST", "/queue/cancel", { older_than: "1h" })).status).toBe(422);
    expect((await op("POST", "/queue/hold", { destination: "x.example", older_than: "soon" })).body.error).toStartWith("older_than:");
    expect((await op("POST", "/queue/redeliver", { bounce_class: "nope", since: "2026-01-01" })).body.error).toStartWith("bounce_class:");
    expect((await op("POST", "/queue/redeliver", { bounce_class: "block", since: "yesterday" })).body.error).toStartWith("since:");
    expect((await op("GET", "/queue?limit=5000")).body.error).toBe("query limit: must be a whole number from 1 to 1000");
    expect((await op("GET", "/queue?state=stuck")).body.error).toBe('query state: must be "queued", "held" or "scheduled"');
    expect((await op("POST", "/queue/hold", { destination: "x.example", everything: true })).body.error).toBe("everything: unknown field");
    for (const [method, path] of [
      ["GET", "/queue"],
      ["GET", "/queue/summary"],
      ["POST", "/queue/hold"],
      ["POST", "/queue/redeliver"],
    ] as const) {
      const res = await t.json(method, `${OP}${path}`, {
        auth: bearer(ACCOUNT_A.token),
        body: method === "POST" ? { destination: "x" } : undefined,
      });
      expect(res.status).toBe(403);
    }
    expect((await t.json("GET", `${OP}/queue`, { auth: null })).status).toBe(401);
    for (const action of ["hold", "release", "retry", "cancel"])
      expect(await op("POST", `/queue/${action}`, { destination: "nowhere.example" })).toEqual({
        status: 200,
        body: { affected: 0 },
        headers: expect.anything(),
      });
  });
});
