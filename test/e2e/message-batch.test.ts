// Issue 34: POST /messages/batch through the app's HTTP handler, delivering to a real SMTP
// sink found through a real DNS server: one result per message in order, an invalid message
// refusing only itself, the batch's limit (outbound.batch_max_messages), an Idempotency-Key
// covering the whole batch, and the send rate limit counting each message.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";

const BATCH = `/api/v0.1/${ACCOUNT_A.outboundId}/messages/batch`;
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const sendKey = bearer(ACCOUNT_A.smtpKey);
const token = bearer(ACCOUNT_A.token);

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;

const batch = (messages: unknown[], headers: Record<string, string> = {}, path = BATCH, auth = sendKey) =>
  t.call("POST", path, { auth, body: { messages }, headers });
const json = async (res: Response) => ({ status: res.status, headers: res.headers, body: (await res.json()) as any });
const listed = async () =>
  (await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth: token })).body as any[];
const mail = (to: string, extra: Record<string, unknown> = {}) => ({
  from: "ann@sender.test",
  to,
  subject: `to ${to}`,
  plain: "x",
  ...extra,
});

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  dns.set("example.org", [{ type: "MX", exchange: "mx.sink.test", priority: 10 }]);
  dns.set("mx.sink.test", [{ type: "A", address: "127.0.0.1" }]);
  t = await startTestApp({
    dnsServer: dns.address,
    accounts: [ACCOUNT_A, { ...ACCOUNT_B, sendRateLimit: "3/min" }],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nbatch_max_messages = 6`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  await verifiedSendingDomain(t, dns, ACCOUNT_B, "b-sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
});

describe("POST /messages/batch", () => {
  test("an invalid message among valid ones: one result each, in order; only the valid ones are queued and delivered", async () => {
    const res = await json(
      await batch([
        mail("b1@example.org", { metadata: { n: "1" } }),
        mail("not an address"),
        "a string",
        mail("b2@example.org", { bcc: "b2-hidden@example.org" }),
        { ...mail("b3@example.org"), surprise: true },
        mail("b4@example.org", { send_at: "2020-01-01T00:00:00Z" }),
      ]),
    );
    expect(res.status).toBe(200);
    const r = res.body.results;
    expect(r.map((x: any) => x.status)).toEqual([202, 422, 422, 202, 422, 202]);
    expect(r[0]).toEqual({
      status: 202,
      id: expect.any(String),
      from: "ann@sender.test",
      to: ["b1@example.org"],
      cc: [],
      test_mode: false,
      subject: "to b1@example.org",
      tags: [],
    });
    expect(r[1].error).toMatch(/^to: /);
    expect(r[2].error).toBe("body must be a JSON object");
    expect(r[4].error).toBe("surprise: unknown field");
    // On disk before the answer: every accepted one is there to read at once.
    for (const i of [0, 3, 5]) expect((await t.json("GET", `${A}/outbound_messages/${r[i].id}`, { auth: token })).status).toBe(200);
    const all = ["b1@example.org", "b2@example.org", "b2-hidden@example.org", "b4@example.org"];
    await eventually(() => all.every((a) => sink.to(a).length === 1), 10_000, "the valid ones delivered");
    expect(sink.messages.filter((m) => m.rcptTo.some((a) => a.includes("not an address") || a === "b3@example.org"))).toEqual([]);
    expect((await t.json("GET", `${A}/outbound_messages/${r[0].id}`, { auth: token })).body.metadata).toEqual({ n: "1" });
  });

  test("more than outbound.batch_max_messages, none, or no messages array: 422 naming messages, nothing queued", async () => {
    const before = (await listed()).length;
    const seven = await json(await batch(Array.from({ length: 7 }, (_, i) => mail(`many${i}@example.org`))));
    expect(seven.status).toBe(422);
    expect(seven.body.error).toBe("messages: holds at most 6 messages (outbound.batch_max_messages), not 7; split the batch");
    const none = await json(await batch([]));
    expect(none.status).toBe(422);
    expect(none.body.error).toMatch(/^messages: /);
    const bare = await json(await t.call("POST", BATCH, { auth: sendKey, body: { message: [] } }));
    expect(bare.status).toBe(422);
    expect((await listed()).length).toBe(before);
  });

  test("an Idempotency-Key covers the whole batch: the same body replays the first 200, another body is 409", async () => {
    const messages = [mail("idem1@example.org"), mail("bad"), mail("idem2@example.org")];
    const first = await json(await batch(messages, { "Idempotency-Key": "batch-1" }));
    expect(first.status).toBe(200);
    const count = (await listed()).length;
    const again = await json(await batch(messages, { "Idempotency-Key": "batch-1" }));
    expect(again.status).toBe(200);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await listed()).length).toBe(count);
    const other = await json(await batch([mail("idem3@example.org")], { "Idempotency-Key": "batch-1" }));
    expect(other.status).toBe(409);
    await eventually(() => sink.to("idem2@example.org").length === 1, 10_000, "delivered once");
    expect(sink.to("idem1@example.org")).toHaveLength(1);
  });

  test("the send rate limit counts each message: past it, a message gets 429 in its place and is not sent", async () => {
    const res = await json(
      await batch(
        ["r1", "r2", "r3", "r4"].map((n) => ({ from: "bob@b-sender.test", to: `${n}@example.org`, plain: "x" })),
        {},
        `/api/v0.1/${ACCOUNT_B.outboundId}/messages/batch`,
        bearer(ACCOUNT_B.smtpKey),
      ),
    );
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: any) => r.status)).toEqual([202, 202, 202, 429]);
    expect(res.body.results[3].error).toMatch(/^Too Many Requests: /);
    expect(res.headers.get("RateLimit-Remaining")).toBe("0");
    const next = await json(
      await batch(
        [{ from: "bob@b-sender.test", to: "r5@example.org", plain: "x" }],
        {},
        `/api/v0.1/${ACCOUNT_B.outboundId}/messages/batch`,
        bearer(ACCOUNT_B.smtpKey),
      ),
    );
    expect(next.status).toBe(429);
  });

  test("another outbound account's key, or the account's token, is refused as E11 refuses it", async () => {
    for (const auth of [bearer(ACCOUNT_B.smtpKey), token]) {
      const single = await t.call("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, { auth, body: mail("x@example.org") });
      const many = await batch([mail("x@example.org")], {}, BATCH, auth);
      expect([401, 403]).toContain(many.status);
      expect(many.status).toBe(single.status);
    }
  });
});

describe("the memory budget counts each message of a batch", () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await startTestApp({
      dnsServer: dns.address,
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
      extra: '[limits]\nmail_in_flight = "8MB"',
    });
    await verifiedSendingDomain(small, dns, ACCOUNT_A, "sender.test");
  });
  afterAll(async () => {
    await small.stop();
  });

  test("a batch whose messages need more than limits.mail_in_flight has is 503 before anything is sent; a smaller one passes", async () => {
    // 200 messages of a few hundred bytes: small as bytes, but each holds E11's share while it is composed.
    const many = Array.from({ length: 200 }, (_, i) => mail(`budget${i}@example.org`, { test_mode: true }));
    // As over HTTP, with its Content-Length (without one, E11's middleware reserves for its largest body).
    const post = (messages: unknown[]) => {
      const body = JSON.stringify({ messages });
      return small.call("POST", BATCH, { auth: sendKey, body, headers: { "content-length": String(Buffer.byteLength(body)) } });
    };
    // Other mail holds 2 MB of the 8 MB meanwhile: the batch's bytes (some 70 KB) would fit
    // beside it, its 200 messages' share (12.8 MB) does not.
    const other = small.app.budget.reserve(2 * 1024 * 1024, null)!;
    const refused = await post(many);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("Retry-After")).toBe("5");
    const listedSmall = async () =>
      (await small.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth: token })).body.length;
    expect(await listedSmall()).toBe(0);
    const few = await post(many.slice(0, 20));
    other.release();
    expect(few.status).toBe(200);
    expect(await listedSmall()).toBe(20);
  });
});
