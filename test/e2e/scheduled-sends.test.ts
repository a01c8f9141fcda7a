// Issue 34 through E11 on the real clock, to a real SMTP sink found through a real DNS
// server: a message with send_at is not delivered before its time and is within seconds
// after it, also across a restart of the app on the same data dir; cancel and reschedule;
// E12's status:scheduled; send_at's rules.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const sendKey = bearer(ACCOUNT_A.smtpKey);
const token = bearer(ACCOUNT_A.token);

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;
const dir = tempDir();

const start = async () => {
  t = await startTestApp({
    dataDir: dir.path,
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
  });
};
const send = (body: Record<string, unknown>) => t.json("POST", SEND, { auth: sendKey, body });
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const search = async (query: string) =>
  (
    await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=${encodeURIComponent(query)}`, {
      auth: token,
    })
  ).body.map((m: any) => m.id);
const message = async (id: string) => (await t.json("GET", `${A}/outbound_messages/${id}`, { auth: token })).body;

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  dns.set("example.org", [{ type: "MX", exchange: "mx.sink.test", priority: 10 }]);
  dns.set("mx.sink.test", [{ type: "A", address: "127.0.0.1" }]);
  await start();
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  dir.remove();
});

describe("send_at", () => {
  test("not delivered before its time, delivered within seconds after it; echoed; status:scheduled until then", async () => {
    const at = inSeconds(4);
    const res = await send({ from: "ann@sender.test", to: "later@example.org", subject: "later", plain: "x", send_at: at });
    expect(res.status).toBe(202);
    expect(res.body.send_at).toBe(new Date(at).toISOString());
    expect(await search("status:scheduled")).toContain(res.body.id);
    expect((await message(res.body.id)).send_at).toBe(new Date(at).toISOString());
    // Looks just before the time, however long the requests above took on a loaded machine:
    // a fixed sleep from here once looked after it and found the message, rightly, delivered.
    await Bun.sleep(Math.max(0, Date.parse(at) - 700 - Date.now()));
    expect(sink.to("later@example.org")).toHaveLength(0);
    expect(Date.now()).toBeLessThan(Date.parse(at));
    await eventually(() => sink.to("later@example.org").length === 1, 4000, "delivery within seconds of send_at");
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at));
    // The sink has it before the attempt's outcome is written; until then the recipient is
    // still waiting for its first attempt, which is what status:scheduled means.
    await eventually(async () => (await message(res.body.id)).recipients[0].status === "delivery", 5000, "recorded");
    expect(await search("status:scheduled")).not.toContain(res.body.id);
  });

  test("survives a restart: stopped before its time, started again, delivered within seconds after it", async () => {
    const at = inSeconds(4);
    const res = await send({ from: "ann@sender.test", to: "restart@example.org", subject: "restart", plain: "x", send_at: at });
    expect(res.status).toBe(202);
    await t.stop();
    await start();
    expect(sink.to("restart@example.org")).toHaveLength(0);
    await eventually(() => sink.to("restart@example.org").length === 1, 8000, "delivery after the restart");
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at));
  });

  test("cancel before its time: never delivered, an error event", async () => {
    const res = await send({ from: "ann@sender.test", to: "cancelled@example.org", subject: "c", plain: "x", send_at: inSeconds(2) });
    const cancel = await t.json("POST", `${A}/outbound_messages/${res.body.id}/cancel`, { auth: token });
    expect(cancel.body).toEqual({ cancelled: 1, in_delivery: 0 });
    await Bun.sleep(3500);
    expect(sink.to("cancelled@example.org")).toHaveLength(0);
    expect((await message(res.body.id)).recipients[0].status).toBe("error");
  });

  test("PATCH send_at reschedules: later, then sooner; 409 once attempted", async () => {
    const res = await send({ from: "ann@sender.test", to: "moved@example.org", subject: "m", plain: "x", send_at: inSeconds(2) });
    const path = `${A}/outbound_messages/${res.body.id}`;
    const later = inSeconds(3600);
    const moved = await t.json("PATCH", path, { auth: token, body: { send_at: later } });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ id: res.body.id, send_at: new Date(later).toISOString(), rescheduled: 1 });
    await Bun.sleep(3000);
    expect(sink.to("moved@example.org")).toHaveLength(0);
    expect(await search("status:scheduled")).toContain(res.body.id);
    const sooner = await t.json("PATCH", path, { auth: token, body: { send_at: inSeconds(1) } });
    expect(sooner.status).toBe(200);
    await eventually(() => sink.to("moved@example.org").length === 1, 5000, "delivery at the new time");
    await eventually(async () => (await message(res.body.id)).recipients[0].status === "delivery", 5000, "recorded");
    const again = await t.json("PATCH", path, { auth: token, body: { send_at: inSeconds(60) } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/^Conflict: .*attempted/);
  });

  test("another account's message is 404 to PATCH", async () => {
    const res = await t.json("PATCH", `${A}/outbound_messages/00000000-0000-4000-8000-000000000000`, {
      auth: token,
      body: { send_at: inSeconds(60) },
    });
    expect(res.status).toBe(404);
  });

  test("a time in the past goes out now; malformed or beyond 30 days is 422 naming send_at", async () => {
    const past = await send({ from: "ann@sender.test", to: "past@example.org", subject: "p", plain: "x", send_at: "2020-01-01T00:00:00Z" });
    expect(past.status).toBe(202);
    await eventually(() => sink.to("past@example.org").length === 1, 5000, "a past send_at delivered at once");
    for (const bad of ["tomorrow", "2026-12-01T09:00:00", inSeconds(31 * 86_400)]) {
      const res = await send({ from: "ann@sender.test", to: "no@example.org", plain: "x", send_at: bad });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatch(/^send_at: /);
    }
    const patch = await t.json("PATCH", `${A}/outbound_messages/${past.body.id}`, { auth: token, body: { send_at: "soon" } });
    expect(patch.status).toBe(422);
    expect(patch.body.error).toMatch(/^send_at: /);
  });
});
