// A delivery that cannot even be attempted (the recipient's copy cannot be made or signed)
// is an `error` event in E13 and at the account's webhook, never a silent retry loop
// (issue 14, point 6): final when the message itself is at fault, retried when it is ours.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/lib/clock.ts";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { queuePorts } from "../../src/outbound/queue/wiring.ts";
import { NO_TRACKING } from "../../src/outbound/queue/message.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";

const SECRET = "whsec_" + Buffer.from("postroom webhook test secret 123").toString("base64");
const clock = new ManualClock(Date.now());
const dir = tempDir();
let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
let hook: WebhookReceiver;

const start = () =>
  startTestApp({
    dataDir: dir.path,
    clock,
    dnsServer: dns.address,
    accounts: [{ ...ACCOUNT_A, extra: `webhook = { url = "${hook.url}", token = "hook-token", signing_secret = "${SECRET}" }` }],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    extra: "[webhooks]\nallow_private = true",
  });
const sent = async (id: string) =>
  (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;
const hooked = (id: string) => hook.acknowledged().filter((e) => e.message_id === id);

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  hook = WebhookReceiver.start(SECRET);
  t = await start();
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  await hook.stop();
  dir.remove();
});

describe("a delivery that cannot be attempted", () => {
  test("a message queued without From (accepted by an earlier version): one error event in E13 and at the webhook, given up, nothing sent", async () => {
    // What submission queued before From was required: the envelope sender as from, no From header.
    const id = "0e770000-0000-4000-8000-000000000001";
    const raw = Buffer.from("To: nofrom@example.org\r\nSubject: no from\r\nMessage-ID: <nofrom@x>\r\n\r\nbody\r\n");
    const now = clock.nowMs();
    const message = {
      id,
      accountId: ACCOUNT_A.id,
      outboundAccountId: ACCOUNT_A.outboundId,
      from: "ann@sender.test",
      subject: "no from",
      messageId: "<nofrom@x>",
      to: ["nofrom@example.org"],
      cc: [],
      tags: [],
      testMode: false,
      priority: "standard" as const,
      sizeBytes: raw.length,
      tracking: NO_TRACKING,
      createdAtMs: now,
    };
    const recipient = {
      id: "0e77000000000r01",
      messageId: id,
      position: 0,
      email: "nofrom@example.org",
      domain: "example.org",
      type: "to" as const,
      status: "registration" as const,
      state: "queued" as const,
      lane: 1,
      attempts: 0,
      firstAttemptAtMs: null,
      nextAttemptAtMs: now,
    };
    const registration = { messageId: id, recipientId: recipient.id, kind: "registration" as const, details: {}, createdAtMs: now };
    await createOutboundRepo(t.app.store, queuePorts(t.app.store)).insert(message, [recipient], [registration], { raw, webhook: true });
    t.app.delivery.kick();

    const m = await eventually(
      async () => {
        const x = await sent(id);
        return x.recipients[0].status === "error" ? x : null;
      },
      10_000,
      "the error event",
    );
    const events = m.recipients[0].events;
    expect(events.map((e: any) => e.kind)).toEqual(["registration", "error"]);
    expect(events[1].details).toEqual({
      message: "the message has no From header, so it cannot be DKIM-signed; send it again with one",
      attempt: 1,
      retried: false,
    });
    await eventually(() => hooked(id).length === 2, 10_000, "both events at the webhook");
    expect(hooked(id).map((e) => [e.kind, e.recipient])).toEqual([
      ["registration", "nofrom@example.org"],
      ["error", "nofrom@example.org"],
    ]);
    // Given up: no later attempt, nothing ever reached the MX. A message due at once, sent
    // an hour on: once it is delivered and the worker idle, a retry due by then is over too.
    clock.advance(60 * 60_000);
    const probe = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to: "probe@example.org", subject: "probe", plain: "x" },
    });
    expect(probe.status).toBe(202);
    await eventually(() => sink.to("probe@example.org").length === 1, 10_000, "the probe's delivery");
    await t.app.delivery.idle();
    expect((await sent(id)).recipients[0].events.map((e: any) => e.kind)).toEqual(["registration", "error"]);
    expect(sink.to("nofrom@example.org")).toEqual([]);
  });

  test("the DKIM key cannot be decrypted (data_dir restored without keys/dkim.key): an error event each attempt, delivered once the key is back", async () => {
    const keyFile = join(t.dataDir, "keys", "dkim.key");
    const key = readFileSync(keyFile);
    await t.stop();
    writeFileSync(keyFile, Buffer.alloc(key.length, 7));
    t = await start();
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to: "nokey@example.org", subject: "no key", plain: "x" },
    });
    expect(res.status).toBe(202);
    const id = res.body.id;
    const m = await eventually(
      async () => {
        const x = await sent(id);
        return x.recipients[0].status === "error" ? x : null;
      },
      10_000,
      "the error event",
    );
    expect(m.recipients[0].events.map((e: any) => e.kind)).toEqual(["registration", "error"]);
    // A sentence for the account; the decryption error itself goes to the log only.
    expect(m.recipients[0].events[1].details).toEqual({
      message: "the message could not be prepared for delivery (DKIM signing or tracking failed on our side)",
      attempt: 1,
      retried: true,
    });
    await eventually(() => hooked(id).some((e) => e.kind === "error"), 10_000, "the error at the webhook");
    expect(sink.to("nokey@example.org")).toEqual([]);

    // The operator puts the key back; the next attempt (retry_delays: 5m first) goes out signed.
    await t.stop();
    writeFileSync(keyFile, key);
    t = await start();
    clock.advance(5 * 60_000 + 1000);
    t.app.delivery.kick();
    const [got] = await eventually(
      () => (sink.to("nokey@example.org").length === 1 ? sink.to("nokey@example.org") : null),
      10_000,
      "the delivery",
    );
    expect(got!.raw).toMatch(/^DKIM-Signature:[\s\S]*?\bd=sender\.test;/);
    await eventually(async () => (await sent(id)).recipients[0].status === "delivery", 10_000, "delivery recorded");
    expect((await sent(id)).recipients[0].events.map((e: any) => e.kind)).toEqual(["registration", "error", "dispatch", "delivery"]);
  });
});
