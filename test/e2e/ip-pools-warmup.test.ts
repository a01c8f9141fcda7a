// Warm-up caps (issue 29) over simulated days, against a real SMTP server on loopback: an
// address warming up gives a destination at most the day's cap; the rest waits (no
// attempt counted, no soft_bounce, no bounce) and goes when the next day's cap opens; once
// the schedule ends there is no cap. The clock is the test's (ManualClock).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";

// Day 1 of the warm-up (it started 2026-11-01): cap 3; day 2: cap 2; day 3 on: no cap.
const clock = new ManualClock(Date.parse("2026-11-02T10:00:00Z"));
const POOL = `
[[outbound.ip_pools]]
name = "warm"
addresses = [{ ip = "127.0.0.2", helo = "mta2.postroom.test", warmup = { start = "2026-11-01", daily = [1, 3, 2] } }]
`;

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org", "example.net");
  t = await startTestApp({
    clock,
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\n${POOL}`,
    accounts: [{ ...ACCOUNT_A, outboundExtra: 'ip_pool = "warm"' }, ACCOUNT_B],
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t?.stop();
  await sink?.stop();
  await dns?.stop();
});

const ids: Record<string, string> = {};
async function send(to: string): Promise<void> {
  const r = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to, subject: "warm", plain: "hello" },
  });
  expect(r.status).toBe(202);
  ids[to] = r.body.id;
}

/** Lets the worker claim what is due and finish. */
async function settle(): Promise<void> {
  t.app.delivery.kick();
  await Bun.sleep(100);
  await t.app.delivery.idle();
  await Bun.sleep(50);
}

const delivered = (domain: string) => sink.messages.filter((m) => m.rcptTo[0]!.endsWith(`@${domain}`)).map((m) => m.rcptTo[0]!);

async function recipient(to: string) {
  const m = (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${ids[to]}`, { auth: bearer(ACCOUNT_A.token) })).body;
  return m.recipients[0];
}

describe("warm-up caps over simulated days", () => {
  const five = ["r1", "r2", "r3", "r4", "r5"].map((r) => `${r}@example.org`);

  test("day 1 (cap 3): three of five go; two wait with no attempt, no soft_bounce, no bounce", async () => {
    for (const to of five) await send(to);
    await eventually(() => delivered("example.org").length >= 3, 10_000, "three delivered");
    await settle();
    expect(delivered("example.org").length).toBe(3);
    expect(new Set(sink.messages.map((m) => `${m.remoteAddress} ${m.helo}`))).toEqual(new Set(["127.0.0.2 mta2.postroom.test"]));
    const waiting = five.filter((to) => !delivered("example.org").includes(to));
    expect(waiting.length).toBe(2);
    for (const to of waiting) {
      const r = await recipient(to);
      expect([r.status, r.events.map((e: { kind: string }) => e.kind)]).toEqual(["registration", ["registration"]]);
    }
  });

  test("the cap is per destination: another domain from the same address is not held", async () => {
    await send("x@example.net");
    await eventually(() => delivered("example.net").length === 1, 10_000, "example.net delivered");
  });

  test("the same day, later: still capped, and no connection is opened for it", async () => {
    clock.advance(6 * 3600_000);
    // Kept connections close after 2 s idle: the capped destination has none to reuse.
    await Bun.sleep(2100);
    const connections = sink.connections;
    await send("r6@example.org");
    await settle();
    expect(delivered("example.org").length).toBe(3);
    expect(sink.connections).toBe(connections);
    expect((await recipient("r6@example.org")).events.map((e: { kind: string }) => e.kind)).toEqual(["registration"]);
  });

  test("the next day (cap 2): two of the three waiting go, the third waits again", async () => {
    clock.set(Date.parse("2026-11-03T00:00:01Z"));
    await settle();
    await eventually(() => delivered("example.org").length >= 5, 10_000, "two more delivered");
    await settle();
    expect(delivered("example.org").length).toBe(5);
  });

  test("after the schedule ends: no cap, the last one goes", async () => {
    clock.set(Date.parse("2026-11-04T00:00:01Z"));
    await settle();
    await eventually(() => delivered("example.org").length === 6, 10_000, "all six delivered");
    for (const to of [...five, "r6@example.org"]) {
      const r = await recipient(to);
      // One attempt each, whatever the days it waited.
      expect([to, r.events.filter((e: { kind: string }) => e.kind === "dispatch").length, r.status]).toEqual([to, 1, "delivery"]);
    }
  });
});
