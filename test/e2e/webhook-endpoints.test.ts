// Webhook endpoints made through the account API (issue 33): each gets exactly the event
// kinds its filter names, signed with its own secret, with its own retries (one that is
// down holds nobody else's events); the config's webhook still gets everything; a deleted
// endpoint gets nothing more. Real receivers (Bun.serve), real deliveries to an SMTP sink.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";

const SECRET = "whsec_" + Buffer.from("postroom webhook test secret 123").toString("base64");
/** Until an endpoint's 201 gives its own. */
const UNKNOWN_YET = "whsec_" + Buffer.from("not the endpoint's secret at all").toString("base64");
const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const HOOKS_A = `/api/v0.1/${ACCOUNT_A.id}/webhooks`;
const MAX = 3;
const clock = new ManualClock(Date.now());
const dir = tempDir();

let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
let config: WebhookReceiver;
let deliveries: WebhookReceiver;
let bounces: WebhookReceiver;
let deliveriesId: string;
let bouncesId: string;

const kindsOf = (r: WebhookReceiver, messageId: string) =>
  r
    .acknowledged()
    .filter((e) => e.message_id === messageId)
    .map((e) => `${e.kind} ${e.recipient.replace(/\d+@/, "@")}`)
    .sort();

let sends = 0;
/** A message to a good and a bad address (new ones each time: a bounced address is suppressed); kinds are named by "good"/"bad". */
const send = async () => {
  sends++;
  const to = [`good${sends}@example.org`, `bad${sends}@example.org`];
  const res = await t.json("POST", SEND, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to, subject: "hello", plain: "Hi" },
  });
  expect(res.status).toBe(202);
  return res.body.id as string;
};

const create = (body: unknown, token = ACCOUNT_A.token) => t.json("POST", HOOKS_A, { auth: bearer(token), body });

beforeAll(async () => {
  sink = await SmtpSink.start();
  sink.script = (rcpt) => (rcpt.startsWith("bad") ? { code: 550, text: "no such user", at: "rcpt" } : "accept");
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  config = WebhookReceiver.start(SECRET);
  deliveries = WebhookReceiver.start(UNKNOWN_YET);
  bounces = WebhookReceiver.start(UNKNOWN_YET);
  t = await start();
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
const start = () =>
  startTestApp({
    dataDir: dir.path,
    clock,
    dnsServer: dns.address,
    accounts: [
      { ...ACCOUNT_A, extra: `webhook = { url = "${config.url}", token = "hook-token", signing_secret = "${SECRET}" }` },
      ACCOUNT_B,
    ],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nwebhook_endpoints_max = ${MAX}`,
    // The receivers are on loopback.
    extra: "[webhooks]\nallow_private = true",
  });
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  for (const r of [config, deliveries, bounces]) await r.stop();
  dir.remove();
});

describe("webhook endpoints", () => {
  test("POST makes an endpoint: 201 with its signing secret once; GET lists it without the secret or token", async () => {
    const made = await create({ outbound_account_id: ACCOUNT_A.outboundId, url: deliveries.url, events: ["delivery"], token: "tok-d" });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      outbound_account_id: ACCOUNT_A.outboundId,
      url: deliveries.url,
      events: ["delivery"],
      has_token: true,
      created_at: expect.any(String),
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    deliveriesId = made.body.id;
    deliveries.secret = made.body.signing_secret;
    const other = await create({ outbound_account_id: ACCOUNT_A.outboundId, url: bounces.url, events: ["bounce"] });
    expect(other.status).toBe(201);
    expect(other.body.signing_secret).not.toBe(made.body.signing_secret);
    bouncesId = other.body.id;
    bounces.secret = other.body.signing_secret;
    const list = await t.json("GET", HOOKS_A, { auth: bearer(ACCOUNT_A.token) });
    expect(list.status).toBe(200);
    const shown = list.body.map((e: any) => [e.id, e.events, e.has_token]);
    expect(shown).toHaveLength(2);
    expect(shown).toContainEqual([deliveriesId, ["delivery"], true]);
    expect(shown).toContainEqual([bouncesId, ["bounce"], false]);
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
    expect(JSON.stringify(list.body)).not.toContain("tok-d");
  });

  test("each endpoint gets exactly its kinds, signed with its own secret; the config's webhook gets every event", async () => {
    const id = await send();
    await eventually(() => kindsOf(config, id).length === 6, 10_000, "six events at the config's webhook");
    await eventually(() => kindsOf(deliveries, id).length === 1 && kindsOf(bounces, id).length === 1, 10_000, "one event each");
    expect(kindsOf(config, id)).toEqual([
      "bounce bad@example.org",
      "delivery good@example.org",
      "dispatch bad@example.org",
      "dispatch good@example.org",
      "registration bad@example.org",
      "registration good@example.org",
    ]);
    // Nothing more arrives later.
    await Bun.sleep(300);
    expect(kindsOf(deliveries, id)).toEqual(["delivery good@example.org"]);
    expect(kindsOf(bounces, id)).toEqual(["bounce bad@example.org"]);
    for (const post of [...deliveries.posts, ...bounces.posts, ...config.posts]) expect(post.verified).toBe(true);
    // Signed with its own secret: another endpoint's does not verify it.
    const post = deliveries.posts[0]!;
    expect(() => new Webhook(bounces.secret).verify(post.raw, post.headers)).toThrow();
    expect(() => new Webhook(SECRET).verify(post.raw, post.headers)).toThrow();
    expect(post.headers.authorization).toBe("Bearer tok-d");
    expect(bounces.posts[0]!.headers.authorization).toBeUndefined();
    expect(config.posts[0]!.headers.authorization).toBe("Bearer hook-token");
  }, 30_000);

  test("an endpoint that is down retries on its own; the other endpoint and the config's webhook get their events meanwhile", async () => {
    const before = deliveries.posts.length;
    deliveries.script.push(503);
    const id = await send();
    await eventually(() => deliveries.posts.length > before, 10_000, "the refused POST");
    await eventually(() => kindsOf(bounces, id).length === 1 && kindsOf(config, id).length === 6, 10_000, "the others' events");
    expect(kindsOf(deliveries, id)).toEqual([]);
    // The first retry is about 10 s later (webhooks.retry_delays, 10% jitter), counted from
    // when the dispatcher took the 503, which may be just after the receiver recorded it.
    for (let i = 0; i < 50 && kindsOf(deliveries, id).length === 0; i++) {
      clock.advance(12_000);
      await Bun.sleep(200);
    }
    const [refused, retried] = deliveries.posts.slice(before);
    expect(refused!.status).toBe(503);
    expect(retried!.headers["webhook-id"]).toBe(refused!.headers["webhook-id"]);
    expect(kindsOf(deliveries, id)).toEqual(["delivery good@example.org"]);
  }, 30_000);

  test("a deleted endpoint gets nothing more; the others go on", async () => {
    const del = await t.json("DELETE", `${HOOKS_A}/${deliveriesId}`, { auth: bearer(ACCOUNT_A.token) });
    expect(del.status).toBe(202);
    expect(del.body.id).toBe(deliveriesId);
    expect((await t.json("DELETE", `${HOOKS_A}/${deliveriesId}`, { auth: bearer(ACCOUNT_A.token) })).status).toBe(404);
    const before = deliveries.posts.length;
    const id = await send();
    await eventually(() => kindsOf(bounces, id).length === 1 && kindsOf(config, id).length === 6, 10_000, "the others' events");
    await Bun.sleep(300);
    expect(deliveries.posts.length).toBe(before);
    const list = await t.json("GET", HOOKS_A, { auth: bearer(ACCOUNT_A.token) });
    expect(list.body.map((e: any) => e.id)).toEqual([bouncesId]);
  }, 30_000);

  test("another account's outbound account or endpoint is 404", async () => {
    const mine = { outbound_account_id: ACCOUNT_B.outboundId, url: bounces.url };
    const made = await create(mine);
    expect(made.status).toBe(404);
    expect(made.body.error).toStartWith("Not Found:");
    expect((await t.json("GET", `${HOOKS_A}?outbound_account_id=${ACCOUNT_B.outboundId}`, { auth: bearer(ACCOUNT_A.token) })).status).toBe(
      404,
    );
    const theirs = await t.json("POST", `/api/v0.1/${ACCOUNT_B.id}/webhooks`, {
      auth: bearer(ACCOUNT_B.token),
      body: { outbound_account_id: ACCOUNT_B.outboundId, url: bounces.url },
    });
    expect(theirs.status).toBe(201);
    const del = await t.json("DELETE", `${HOOKS_A}/${theirs.body.id}`, { auth: bearer(ACCOUNT_A.token) });
    expect(del.status).toBe(404);
    expect((await t.json("GET", HOOKS_A, { auth: bearer(ACCOUNT_A.token) })).body.map((e: any) => e.id)).toEqual([bouncesId]);
    // Another account's path with one's own token is 403, as for every account route.
    expect((await t.json("GET", `/api/v0.1/${ACCOUNT_B.id}/webhooks`, { auth: bearer(ACCOUNT_A.token) })).status).toBe(403);
  });

  test("bad input is 422 naming the field, and nothing is made", async () => {
    const base = { outbound_account_id: ACCOUNT_A.outboundId, url: bounces.url };
    const cases: [unknown, string][] = [
      [{ ...base, events: ["delivery", "deliverd"] }, "events"],
      [{ ...base, events: ["process"] }, "events"],
      [{ ...base, url: "ftp://hooks.example.com/x" }, "url"],
      [{ ...base, url: "not a url" }, "url"],
      [{ ...base, url: "https://user:pass@hooks.example.com/x" }, "url"],
      [{ ...base, url: "http://169.254.169.254/latest" }, "url"],
      [{ ...base, token: "a\r\nX-Evil: 1" }, "token"],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect([res.status, res.body.error]).toEqual([422, expect.stringContaining(field)]);
    }
    expect((await t.json("GET", HOOKS_A, { auth: bearer(ACCOUNT_A.token) })).body).toHaveLength(1);
  });

  test(`at most ${MAX} endpoints per outbound account (outbound.webhook_endpoints_max): the next is 422`, async () => {
    const base = { outbound_account_id: ACCOUNT_A.outboundId, url: bounces.url, events: ["open"] };
    for (let n = 1; n < MAX; n++) expect((await create(base)).status).toBe(201);
    const over = await create(base);
    expect(over.status).toBe(422);
    expect(over.body.error).toContain("outbound.webhook_endpoints_max");
    expect(over.body.error).toStartWith("outbound_account_id");
    expect((await t.json("GET", HOOKS_A, { auth: bearer(ACCOUNT_A.token) })).body).toHaveLength(MAX);
  });

  test("a restart keeps the endpoints, their filters and their secrets", async () => {
    const listed = (await t.json("GET", HOOKS_A, { auth: bearer(ACCOUNT_A.token) })).body;
    await t.stop();
    t = await start();
    expect((await t.json("GET", HOOKS_A, { auth: bearer(ACCOUNT_A.token) })).body).toEqual(listed);
    const before = bounces.posts.length;
    const id = await send();
    await eventually(() => kindsOf(bounces, id).length === 1, 10_000, "the bounce at the endpoint");
    expect(kindsOf(bounces, id)).toEqual(["bounce bad@example.org"]);
    expect(bounces.posts.slice(before).every((p) => p.verified)).toBe(true);
  }, 30_000);
});
