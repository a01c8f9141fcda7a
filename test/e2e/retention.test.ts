// Retention through the whole appliance and the test clock: mail received and sent 31
// days ago is gone from the API after a purge (E6, E12, E13), the mail of today stays, and
// a message still queued keeps everything it needs and is delivered later all the same.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const DAY = 86_400_000;
const T0 = Date.parse("2026-10-01T12:00:00Z");
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const sendKey = bearer(ACCOUNT_A.smtpKey);

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;
let target: TestTarget;
const clock = new ManualClock(T0);
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  sink = await SmtpSink.start();
  // The greylisting MX: "later" is refused for a while (its message stays queued), then taken.
  sink.script = (rcpt, attempt) =>
    rcpt.startsWith("later@") && attempt === 1 ? { code: 451, text: "4.7.1 Greylisted, try again later", at: "rcpt" } : "accept";
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  target = TestTarget.start();
  t = await startTestApp({
    inbound: true,
    dnsServer: dns.address,
    clock,
    logger: createLogger({ sink: (line) => logLines.push(JSON.parse(line)) }),
    // The retry comes after the purge (day 45); the message may be queued for 60 days.
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nretry_delays = ["45d"]\nmax_queue_time = "60d"`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  await target.stop();
});

const receive = async (to: string, subject: string) =>
  expect((await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to, subject, text: subject })).code).toBe(250);
const statusSubjects = async (addressId: string) =>
  ((await t.json("GET", `${A}/incoming_statuses?address_id=${addressId}`, { auth })).body as { subject: string }[]).map((s) => s.subject);
const send = async (to: string, subject: string): Promise<string> => {
  const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
    auth: sendKey,
    body: { from: "ann@sender.test", to, subject, plain: subject },
  });
  expect(res.status).toBe(202);
  return res.body.id;
};
const message = (id: string) => t.json("GET", `${A}/outbound_messages/${id}`, { auth });
const eventKinds = async (id: string) => ((await message(id)).body?.recipients?.[0]?.events ?? []).map((e: { kind: string }) => e.kind);
const listedSubjects = async () =>
  ((await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth })).body as { subject: string }[])
    .map((m) => m.subject)
    .sort();

test("a purge 31 days on: the old statuses, messages and events leave the API, today's and the queued one stay", async () => {
  const address = (await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url("/in"), target_format: "json+n" } })).body as {
    id: string;
    email: string;
  };

  // Day 0: mail in, mail out (one delivered, one greylisted and queued for a retry on day 45).
  await receive(address.email, "old inbound");
  const oldSent = await send("bob@example.org", "old sent");
  const queued = await send("later@example.org", "queued since day 0");
  await eventually(async () => (await eventKinds(oldSent)).includes("delivery"), 10_000, "the old message's delivery");
  await eventually(async () => (await eventKinds(queued)).includes("soft_bounce"), 10_000, "the queued message's first attempt");
  expect(await statusSubjects(address.id)).toEqual(["old inbound"]);

  // Day 31: today's mail.
  clock.set(T0 + 31 * DAY);
  await receive(address.email, "young inbound");
  const youngSent = await send("carol@example.org", "young sent");
  await eventually(async () => (await eventKinds(youngSent)).includes("delivery"), 10_000, "the young message's delivery");

  const deleted = await t.app.retention.run();

  expect(deleted).toMatchObject({ incoming_statuses: 1, messages: 1 });
  expect(await statusSubjects(address.id)).toEqual(["young inbound"]);
  expect(await listedSubjects()).toEqual(["queued since day 0", "young sent"]);
  expect((await message(oldSent)).status).toBe(404);
  expect(await eventKinds(youngSent)).toContain("delivery");
  expect(await eventKinds(queued)).toEqual(["registration", "dispatch", "soft_bounce"]);
  // One line per run, with what went from each table.
  const line = logLines.find((l) => l.msg === "retention purge");
  expect(line).toMatchObject({ level: "info", component: "retention", deleted: { incoming_statuses: 1, messages: 1 } });

  // Day 46: the queued message's retry; its body was kept, so it is delivered.
  clock.set(T0 + 46 * DAY);
  t.app.delivery.kick();
  await eventually(async () => (await eventKinds(queued)).includes("delivery"), 10_000, "the queued message's delivery on day 46");
  expect(sink.to("later@example.org")[0]!.raw).toContain("queued since day 0");
});
