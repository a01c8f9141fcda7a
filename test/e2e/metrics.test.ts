// /metrics before and after real traffic (docs/operations.md, Monitoring): mail received
// over SMTP from nodemailer and a line-level client and posted to a real HTTP target that
// answers 2xx, 4xx and 5xx; recipients refused; messages sent through the API to a loopback
// MX that takes one and refuses the other; their events posted to a real webhook receiver;
// API requests that succeed and fail. Every series a dashboard or an alert reads must move,
// and promtool (Debian's prometheus package) must accept the scrape.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { hashSecret } from "../../src/auth/secrets.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { scrapeMetrics, type Scrape } from "../helpers/metrics.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";

const METRICS_TOKEN = "pr_metrics_token_for_tests";
const SECRET = "whsec_" + Buffer.from("postroom metrics test secret 12").toString("base64");
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const clock = new ManualClock(Date.now());
const dir = tempDir();
const promtoolTest = requireTools("promtool");

let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
let target: TestTarget;
let hook: WebhookReceiver;
let certFile: string;
/** A mail server that accepts connections and never greets: a delivery to it stays due. */
let silent: Server;
const silentSockets: Socket[] = [];

const scrape = () => scrapeMetrics(t.app.httpPort!, METRICS_TOKEN);
/** An API request over the real HTTP listener. */
const api = (method: string, path: string, auth: string, body?: unknown) =>
  fetch(`http://127.0.0.1:${t.app.httpPort}${path}`, {
    method,
    headers: { authorization: auth, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  target = TestTarget.start();
  target.answers.set("/refuses", { status: 422, contentType: "text/plain", body: "no thanks" });
  target.answers.set("/fails", { status: 503 });
  sink = await SmtpSink.start();
  sink.script = (rcpt) => (rcpt === "bad@example.org" ? { code: 550, text: "no such user", at: "rcpt" } : "accept");
  silent = createServer((socket) => void silentSockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(sink.port, "127.0.0.2", resolve));
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  dns.set("silent.example", [{ type: "MX", exchange: "mx.silent.test", priority: 10 }]);
  dns.set("mx.silent.test", [{ type: "A", address: "127.0.0.2" }]);
  hook = WebhookReceiver.start(SECRET);
  const cert = makeSelfSignedCert(dir.path, "mx.postroom.test", "server", 30);
  certFile = cert.certFile;
  t = await startTestApp({
    dataDir: dir.path,
    clock,
    dnsServer: dns.address,
    inbound: true,
    accounts: [{ ...ACCOUNT_A, extra: `webhook = { url = "${hook.url}", token = "hook-token", signing_secret = "${SECRET}" }` }],
    // The queue test moves the clock 90 s while an attempt waits: a lease longer than that
    // keeps the recipient with its worker (the default 30 s would end under the jump).
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nlease_time = "15m"`,
    http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"`,
    tls: `mode = "files"\ncert_file = "${cert.certFile}"\nkey_file = "${cert.keyFile}"`,
    extra: "[webhooks]\nallow_private = true",
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});

afterAll(async () => {
  for (const s of silentSockets) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await t.stop();
  await Promise.all([sink.stop(), dns.stop(), target.stop(), hook.stop()]);
  dir.remove();
});

async function addressFor(path: string): Promise<string> {
  const res = await t.json("POST", `${A}/addresses`, {
    auth: bearer(ACCOUNT_A.token),
    body: { target: target.url(path), target_format: "json+n" },
  });
  expect(res.status).toBe(201);
  return res.body.email;
}

const mail = (to: string, subject: string) => ({ from: "alice@sender.test", to, subject, text: "hello" });

describe("/metrics before and after real traffic", () => {
  let before: Scrape;
  let after: Scrape;
  /** How much a series grew between the two scrapes. */
  const moved = (name: string, labels: Record<string, string> = {}) => after.sum(name, labels) - before.sum(name, labels);

  test("inbound mail, refusals, API sends, webhook posts and API requests move their series", async () => {
    const ok = await addressFor("/takes");
    const refused = await addressFor("/refuses");
    const failing = await addressFor("/fails");
    before = await scrape();

    // Received mail, posted to a target that answers 200, 422 and 503.
    expect((await sendWithNodemailer(t.app.inboundPort!, mail(ok, "one"))).code).toBe(250);
    expect((await sendWithNodemailer(t.app.inboundPort!, mail(refused, "two"))).code).toBe(550);
    expect((await sendWithNodemailer(t.app.inboundPort!, mail(failing, "three"))).code).toBe(451);
    // Recipients refused at RCPT: an unknown address here, and a domain that is not ours.
    const { session } = await SmtpSession.open(t.app.inboundPort!);
    await session.command("EHLO client.example.org");
    expect(await session.command("MAIL FROM:<alice@sender.test>")).toStartWith("250");
    expect(await session.command("RCPT TO:<00000000000000000000@in.postroom.test>")).toBe("550 5.1.1 no such recipient here");
    expect(await session.command("RCPT TO:<someone@gmail.com>")).toBe("550 5.7.1 relay not permitted");
    await session.close();

    // Sent through the API: one delivered, one refused by the MX (a bounce).
    for (const to of ["good@example.org", "bad@example.org"]) {
      const res = await api("POST", SEND, bearer(ACCOUNT_A.smtpKey), { from: "ann@sender.test", to, subject: "hi", plain: "hello" });
      expect(res.status).toBe(202);
    }
    await eventually(() => sink.to("good@example.org").length === 1, 10_000, "the delivery");
    // Their events (registration, dispatch, delivery, bounce) acknowledged by the receiver.
    await eventually(
      () => hook.acknowledged().filter((e) => e.kind === "delivery" || e.kind === "bounce").length === 2,
      10_000,
      "the webhook posts",
    );
    await eventually(async () => (await scrape()).value("postroom_webhook_events_pending") === 0, 10_000, "no event pending");

    // API requests: one that succeeds, one with a wrong token.
    expect((await api("GET", `${A}/addresses`, bearer(ACCOUNT_A.token))).status).toBe(200);
    expect((await api("GET", `${A}/addresses`, bearer("pr_not_the_token"))).status).toBe(401);

    after = await scrape();
    expect({
      accepted: moved("postroom_inbound_messages_total", { outcome: "accepted" }),
      rejected: moved("postroom_inbound_messages_total", { outcome: "rejected" }),
      deferred: moved("postroom_inbound_messages_total", { outcome: "deferred" }),
      unknown: moved("postroom_inbound_smtp_refusals_total", { reason: "unknown_recipient" }),
      relay: moved("postroom_inbound_smtp_refusals_total", { reason: "relay_denied" }),
      target2xx: moved("postroom_target_posts_total", { status_class: "2xx" }),
      target4xx: moved("postroom_target_posts_total", { status_class: "4xx" }),
      target5xx: moved("postroom_target_posts_total", { status_class: "5xx" }),
      targetTimed: moved("postroom_target_post_duration_seconds_count"),
      delivered: moved("postroom_outbound_deliveries_total", { result: "delivered" }),
      bounced: moved("postroom_outbound_deliveries_total", { result: "bounced" }),
      deliveryTimed: moved("postroom_outbound_delivery_duration_seconds_count"),
      addresses2xx: moved("postroom_http_requests_total", { method: "GET", route: "/api/v0.1/:accountId/addresses", status_class: "2xx" }),
      addresses4xx: moved("postroom_http_requests_total", { method: "GET", route: "/api/v0.1/:accountId/addresses", status_class: "4xx" }),
      addressesTimed: moved("postroom_http_request_duration_seconds_count", { method: "GET", route: "/api/v0.1/:accountId/addresses" }),
    }).toEqual({
      accepted: 1,
      rejected: 1,
      deferred: 1,
      unknown: 1,
      relay: 1,
      target2xx: 1,
      target4xx: 1,
      target5xx: 1,
      targetTimed: 3,
      delivered: 1,
      bounced: 1,
      deliveryTimed: 1,
      addresses2xx: 1,
      addresses4xx: 1,
      addressesTimed: 2,
    });
    // Every batch of events acknowledged; the sends themselves were requests too.
    expect(moved("postroom_webhook_posts_total", { result: "2xx" })).toBeGreaterThanOrEqual(1);
    expect(moved("postroom_http_requests_total", { method: "POST", route: "/api/v0.1/:accountId/messages", status_class: "2xx" })).toBe(2);
    expect(moved("postroom_target_post_duration_seconds_sum")).toBeGreaterThan(0);
    // No raw path and no address is a label value.
    expect(after.text).not.toContain(ACCOUNT_A.id);
    expect(after.text).not.toContain("@");
    // The process's own metrics: CPU spent on all that, memory held.
    expect(moved("process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(after.value("process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
    // The event loop's lag is sampled between scrapes (prom-client resets it at each): on a
    // loaded machine a short interval may hold no sample, so its presence is what is checked.
    expect(after.value("nodejs_eventloop_lag_p99_seconds")).toBeNumber();
    // The certificate in use, its expiry read from the file by node:crypto.
    const expiry = Date.parse(new X509Certificate(readFileSync(certFile)).validTo) / 1000;
    expect(
      after.value("postroom_tls_certificate_expiry_timestamp_seconds", { names: "mx.postroom.test", issuer: "mx.postroom.test" }),
    ).toBe(expiry);
  });

  promtoolTest("promtool check metrics accepts the scrape", async () => {
    const proc = Bun.spawn(["promtool", "check", "metrics"], {
      stdin: new TextEncoder().encode(after.text),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect({ code: await proc.exited, out, err }).toEqual({ code: 0, out: "", err: "" });
  });
});

describe("the queue and the webhook backlog, read from the store", () => {
  test("a delivery held by a silent server is due and ages; deferred, it is scheduled; unacknowledged events age", async () => {
    const before = await scrape();
    expect(before.value("postroom_outbound_recipients_queued", { state: "due" })).toBe(0);
    expect(before.value("postroom_webhook_backlog_age_seconds")).toBe(0);
    hook.script.push(...Array.from({ length: 50 }, () => 503));
    const res = await api("POST", SEND, bearer(ACCOUNT_A.smtpKey), {
      from: "ann@sender.test",
      to: "someone@silent.example",
      subject: "hi",
      plain: "hello",
    });
    expect(res.status).toBe(202);
    // The worker has connected and waits for a greeting that does not come.
    await eventually(() => silentSockets.length === 1, 10_000, "a connection to the silent server");
    await eventually(
      async () =>
        (await scrape()).value("postroom_webhook_posts_total", { result: "5xx" })! >
        before.value("postroom_webhook_posts_total", { result: "5xx" })!,
      10_000,
      "a refused webhook post",
    );
    clock.advance(90_000);

    const held = await scrape();
    expect(held.value("postroom_outbound_recipients_queued", { state: "due" })).toBe(1);
    expect(held.value("postroom_outbound_oldest_due_age_seconds")).toBe(90);
    expect(held.value("postroom_webhook_events_pending")).toBeGreaterThanOrEqual(1);
    expect(held.value("postroom_webhook_backlog_age_seconds")).toBe(90);

    // The server hangs up: a temporary failure, retried after outbound.retry_delays[0].
    for (const s of silentSockets) s.destroy();
    await eventually(
      async () => (await scrape()).value("postroom_outbound_recipients_queued", { state: "scheduled" }) === 1,
      10_000,
      "the retry scheduled",
    );
    const deferred = await scrape();
    expect(deferred.value("postroom_outbound_recipients_queued", { state: "due" })).toBe(0);
    expect(deferred.value("postroom_outbound_oldest_due_age_seconds")).toBe(0);
    expect(
      deferred.value("postroom_outbound_deliveries_total", { result: "deferred" })! -
        before.value("postroom_outbound_deliveries_total", { result: "deferred" })!,
    ).toBe(1);

    // An operator holds it: neither due nor scheduled, counted as held until released.
    expect(await t.app.repos.queueControl.hold({ destination: "silent.example" }, clock.nowMs())).toBe(1);
    const onHold = await scrape();
    expect(onHold.value("postroom_outbound_recipients_queued", { state: "held" })).toBe(1);
    expect(onHold.value("postroom_outbound_recipients_queued", { state: "scheduled" })).toBe(0);
    expect(await t.app.repos.queueControl.cancel({ destination: "silent.example" }, clock.nowMs(), "test", () => false)).toBe(1);
    expect((await scrape()).value("postroom_outbound_recipients_queued", { state: "held" })).toBe(0);
    hook.script.length = 0;
  });
});
