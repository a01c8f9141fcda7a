// How mail leaves: the smarthost instead of MX, the digest window, the priority lane,
// and one connection carrying several messages to one host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { queuePorts } from "../../src/outbound/queue/wiring.ts";
import { openStore } from "../../src/store/store.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { tempDir } from "../helpers/tmp.ts";

const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const body = (to: string, extra: Record<string, unknown> = {}) => ({
  from: "ann@sender.test",
  to,
  subject: `to ${to}`,
  plain: "x",
  ...extra,
});

describe("smarthost", () => {
  let t: TestApp;
  let relay: SmtpSink;
  let dns: TestDnsServer;
  beforeAll(async () => {
    relay = await SmtpSink.start({ auth: { user: "relayuser", pass: "relay pass" } });
    dns = await TestDnsServer.start();
    t = await startTestApp({
      dnsServer: dns.address,
      outbound: `${SENDING_KEYS}\nsmarthost = "smtp://relayuser:relay%20pass@127.0.0.1:${relay.port}"`,
    });
    await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  });
  afterAll(async () => {
    await t.stop();
    await relay.stop();
    await dns.stop();
  });

  test("every message goes through the smarthost, authenticated, whatever the recipient's domain", async () => {
    for (const to of ["a@gmail.com", "b@nowhere.invalid"])
      expect((await t.json("POST", SEND, { auth: bearer(ACCOUNT_A.smtpKey), body: body(to) })).status).toBe(202);
    await eventually(() => relay.messages.length === 2, 10_000, "two relayed");
    expect(relay.messages.map((m) => [m.rcptTo[0], m.user]).sort()).toEqual([
      ["a@gmail.com", "relayuser"],
      ["b@nowhere.invalid", "relayuser"],
    ]);
  });
});

describe("digest and connection reuse", () => {
  let t: TestApp;
  let sink: SmtpSink;
  let dns: TestDnsServer;
  const clock = new ManualClock(Date.parse("2026-11-22T12:01:00Z"));
  beforeAll(async () => {
    sink = await SmtpSink.start();
    dns = await TestDnsServer.start();
    dns.set("example.org", [{ type: "MX", exchange: "mx.sink.test", priority: 10 }]);
    // Another domain on the same sink: its mail never shares a connection with example.org's.
    routeToSink(dns, "probe.example");
    t = await startTestApp({
      clock,
      dnsServer: dns.address,
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\ndigest_interval = "15m"`,
    });
    await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  });
  afterAll(async () => {
    await t.stop();
    await sink.stop();
    await dns.stop();
  });

  test("digest mail waits for the next digest window, then goes out together, over one connection", async () => {
    const digests = ["d1@example.org", "d2@example.org", "d3@example.org", "d4@example.org"];
    for (const to of digests) {
      await t.json("POST", SEND, { auth: bearer(ACCOUNT_A.smtpKey), body: body(to, { priority: "digest" }) });
    }
    // A standard message after them goes at once; once it is delivered and the worker is
    // idle, digest mail that was due would have gone with it (or before).
    expect((await t.json("POST", SEND, { auth: bearer(ACCOUNT_A.smtpKey), body: body("now@probe.example") })).status).toBe(202);
    await eventually(() => sink.to("now@probe.example").length === 1, 10_000, "the standard message");
    await t.app.delivery.idle();
    expect(digests.flatMap((to) => sink.to(to))).toEqual([]);
    const connectionsBefore = sink.connections;
    clock.set(Date.parse("2026-11-22T12:15:00Z"));
    t.app.delivery.kick();
    await eventually(() => digests.every((to) => sink.to(to).length === 1), 10_000, "digest batch");
    // Four messages to one domain in one batch: one connection carried them all (the one
    // kept from the standard message, when it is still open: probe.example has the same MX
    // host, so the same destination, issue 29).
    expect(sink.connections - connectionsBefore).toBeLessThanOrEqual(1);
  });

  test("the connection stays open for the next message to that host; one that saw a refusal is closed", async () => {
    const sendAndWait = async (to: string, done: () => boolean) => {
      expect((await t.json("POST", SEND, { auth: bearer(ACCOUNT_A.smtpKey), body: body(to) })).status).toBe(202);
      await eventually(done, 10_000, `delivery to ${to}`);
      await t.app.delivery.idle();
    };
    await sendAndWait("k1@example.org", () => sink.to("k1@example.org").length === 1);
    const afterFirst = sink.connections;
    await Bun.sleep(100);
    await sendAndWait("k2@example.org", () => sink.to("k2@example.org").length === 1);
    // Sent apart, each on its own claim: the second went over the first one's connection.
    expect(sink.connections).toBe(afterFirst);
    sink.script = (rcpt) => (rcpt === "nobody@example.org" ? { code: 550, text: "no such user", at: "rcpt" } : "accept");
    await sendAndWait("nobody@example.org", () => (sink.attempts.get("nobody@example.org") ?? 0) === 1);
    const afterRefusal = sink.connections;
    await sendAndWait("k3@example.org", () => sink.to("k3@example.org").length === 1);
    expect(sink.connections).toBe(afterRefusal + 1);
    sink.script = () => "accept";
  });
});

describe("the queue (repository)", () => {
  test("the priority lane is served first; a lease hides a recipient until it ends", async () => {
    const dir = tempDir();
    const store = openStore(dir.path);
    const repo = createOutboundRepo(store, queuePorts(store));
    const message = (id: string, priority: "standard" | "priority") => queuedMessage(id, { priority });
    const recipient = (id: string, messageId: string, lane: number) => queuedRecipient(id, messageId, { lane, nextAttemptAtMs: 100 });
    await repo.insert(message("m1", "standard"), [recipient("r1", "m1", 1)], []);
    await repo.insert(message("m2", "priority"), [recipient("r2", "m2", 0)], []);
    const first = await repo.claimDue("w1", 200, 10_000, 1, []);
    expect(first.map((c) => c.recipient.id)).toEqual(["r2"]);
    expect((await repo.claimDue("w2", 300, 10_000, 5, [])).map((c) => c.recipient.id)).toEqual(["r1"]);
    expect(await repo.claimDue("w3", 400, 10_000, 5, [])).toEqual([]);
    // The first worker died: after its lease ends, another worker takes the recipient.
    expect((await repo.claimDue("w3", 10_001, 20_000, 5, [])).map((c) => c.recipient.id).sort()).toEqual(["r1", "r2"]);
    expect(await repo.claimDue("w4", 10_002, 20_000, 5, ["y.z"])).toEqual([]);
    store.close();
    dir.remove();
  });
});
