// Per-destination concurrency (issue 22): a destination starts with
// outbound.initial_domain_concurrency connections and gets more while its connections carry
// their mail, up to outbound.domain_concurrency, as Postfix's slow start does; through a
// smarthost the relay is the one destination of every domain. Seen from a
// real SMTP server on loopback (the MX of the recipients' domain) that counts its open
// connections and takes a while over each message.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";

const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;

async function sendMany(t: TestApp, count: number, to: (n: number) => string = (n) => `r${n % 50}@example.org`): Promise<void> {
  // A few at a time: the test config's memory budget for mail in flight is small.
  for (let i = 0; i < count; i += 4) {
    const batch = Array.from({ length: Math.min(4, count - i) }, (_, j) => i + j);
    const answers = await Promise.all(
      batch.map((n) =>
        t.json("POST", SEND, {
          auth: bearer(ACCOUNT_A.smtpKey),
          body: { from: "ann@sender.test", to: to(n), subject: `m${n}`, plain: "x" },
        }),
      ),
    );
    for (const a of answers) expect([a.status, a.body]).toEqual([202, expect.anything()]);
  }
}

/** `relay`: through a smarthost (the sink) instead of by MX. */
async function setUp(outbound: string, route: "mx" | "relay" = "mx") {
  const sink = await SmtpSink.start();
  // Slow enough that mail waits for connections even when the API side is slow (a loaded machine).
  sink.dataDelayMs = 100;
  const dns = await TestDnsServer.start();
  dns.set("example.org", [{ type: "MX", exchange: "mx.sink.test", priority: 10 }]);
  dns.set("mx.sink.test", [{ type: "A", address: "127.0.0.1" }]);
  const next = route === "mx" ? `mx_port = ${sink.port}\nallow_private_mx = true` : `smarthost = "smtp://127.0.0.1:${sink.port}"`;
  const t = await startTestApp({ dnsServer: dns.address, outbound: `${SENDING_KEYS}\n${next}\n${outbound}` });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  return { sink, dns, t, stop: async () => (await t.stop(), await sink.stop(), await dns.stop()) };
}

describe("slow start", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp("");
  });
  afterAll(() => s.stop());

  test("a destination that takes its mail gets more than the initial 5 connections, never more than 20", async () => {
    await sendMany(s.t, 300);
    await eventually(() => s.sink.messages.length === 300, 60_000, "300 delivered");
    expect(s.sink.maxOpen).toBeGreaterThan(5);
    expect(s.sink.maxOpen).toBeLessThanOrEqual(20);
  }, 90_000);
});

describe("the limits from the config", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp("initial_domain_concurrency = 1\ndomain_concurrency = 3");
  });
  afterAll(() => s.stop());

  test("domain_concurrency caps the window: at most 3 connections at once", async () => {
    await sendMany(s.t, 150);
    await eventually(() => s.sink.messages.length === 150, 60_000, "150 delivered");
    expect(s.sink.maxOpen).toBeGreaterThan(1);
    expect(s.sink.maxOpen).toBeLessThanOrEqual(3);
  }, 90_000);
});

describe("through a smarthost", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp("initial_domain_concurrency = 1\ndomain_concurrency = 3", "relay");
  });
  afterAll(() => s.stop());

  test("every recipient domain shares the relay's window: mail for 20 domains opens at most 3 connections", async () => {
    // Before, each recipient domain had its own window: 20 domains opened 20 or more connections to the relay.
    await sendMany(s.t, 150, (n) => `r${n}@d${n % 20}.example`);
    await eventually(() => s.sink.messages.length === 150, 60_000, "150 delivered");
    expect(new Set(s.sink.messages.map((m) => m.rcptTo[0]!.split("@")[1])).size).toBe(20);
    expect(s.sink.maxOpen).toBeGreaterThan(1);
    expect(s.sink.maxOpen).toBeLessThanOrEqual(3);
  }, 90_000);
});
