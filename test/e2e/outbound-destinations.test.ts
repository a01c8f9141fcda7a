// Destinations (issue 29), seen from a real SMTP server on loopback standing in for a
// provider's MX hosts, with recipient domains published by the in-process DNS server:
// domains of one provider share one window (max_connections counted as the server's open
// sessions), a rate spreads deliveries, a throttle reply pauses the whole destination and
// its recipients go out when it resumes, while another destination goes on.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";
import { hashSecret } from "../../src/auth/secrets.ts";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/store/store.ts";

const METRICS_TOKEN = "pr_metrics_token_for_destinations";

const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const DOMAINS = ["a.test", "b.test", "c.test"];

async function send(t: TestApp, to: string): Promise<string> {
  const a = await t.json("POST", SEND, { auth: bearer(ACCOUNT_A.smtpKey), body: { from: "ann@sender.test", to, subject: to, plain: "x" } });
  expect(a.status).toBe(202);
  return a.body.id as string;
}

async function sendMany(t: TestApp, count: number, to: (n: number) => string): Promise<void> {
  // A few at a time: the test config's memory budget for mail in flight is small.
  for (let i = 0; i < count; i += 4) await Promise.all(Array.from({ length: Math.min(4, count - i) }, (_, j) => send(t, to(i + j))));
}

/** `mx`: each domain's MX host (all on 127.0.0.1, where the sink listens). */
async function setUp(outbound: string, mx: (domain: string) => string) {
  const sink = await SmtpSink.start();
  const dns = await TestDnsServer.start();
  for (const d of [...DOMAINS, "other.test"]) {
    dns.set(d, [{ type: "MX", exchange: mx(d), priority: 10 }]);
    dns.set(mx(d), [{ type: "A", address: "127.0.0.1" }]);
  }
  const t = await startTestApp({
    dnsServer: dns.address,
    http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"`,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\n${outbound}`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  return { sink, dns, t, stop: async () => (await t.stop(), await sink.stop(), await dns.stop()) };
}

const providerMx = (d: string) => (d === "other.test" ? "mx.other.test" : `mx.${d.split(".")[0]}.provider.test`);

describe("three domains with the same MX host and no rule", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp("domain_concurrency = 2", () => "mx.shared.test");
    s.sink.dataDelayMs = 100;
  });
  afterAll(() => s.stop());

  test("share one window: never more than domain_concurrency (2) sessions at the MX together", async () => {
    // Before, each domain had its own window: up to 6 sessions at once.
    await sendMany(s.t, 60, (n) => `r${n}@${DOMAINS[n % 3]}`);
    await eventually(() => s.sink.messages.length === 60, 60_000, "60 delivered");
    expect(new Set(s.sink.messages.map((m) => m.rcptTo[0]!.split("@")[1])).size).toBe(3);
    expect(s.sink.maxOpen).toBe(2);
  }, 90_000);
});

describe("a rule taking three domains by their MX hosts' suffix", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp(`[[outbound.destinations]]\nname = "provider"\nmx = [".provider.test"]\nmax_connections = 2`, providerMx);
    s.sink.dataDelayMs = 100;
  });
  afterAll(() => s.stop());

  test("its max_connections holds for the three domains together (each MX host a different name)", async () => {
    await sendMany(s.t, 60, (n) => `r${n}@${DOMAINS[n % 3]}`);
    await eventually(() => s.sink.messages.length === 60, 60_000, "60 delivered");
    expect(s.sink.maxOpen).toBe(2);
  }, 90_000);
});

describe("a rule with a rate", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp(`[[outbound.destinations]]\nname = "provider"\nmx = [".provider.test"]\nrate = "10/s"`, providerMx);
  });
  afterAll(() => s.stop());

  test("spreads its deliveries evenly: one every 100 ms, over its three domains", async () => {
    await sendMany(s.t, 12, (n) => `r${n}@${DOMAINS[n % 3]}`);
    await eventually(() => s.sink.messages.length === 12, 30_000, "12 delivered");
    // A slot every 100 ms, booked as each transaction starts (its MAIL FROM at the server);
    // unpaced, these twelve start within a few ms of each other.
    const at = s.sink.mailFromAtMs;
    expect(at).toHaveLength(12);
    const gaps = at.slice(1).map((ms, i) => ms - at[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(60);
    expect(at.at(-1)! - at[0]!).toBeGreaterThanOrEqual(11 * 90);
  }, 60_000);
});

describe("a throttle reply", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    s = await setUp(
      `[[outbound.destinations]]\nname = "provider"\nmx = [".provider.test"]\nthrottle_replies = ["4.7.28"]\npause = "2s"`,
      providerMx,
    );
    s.sink.script = (rcpt, attempt) =>
      rcpt === "first@a.test" && attempt === 1
        ? { code: 421, text: "4.7.28 Our system has detected an unusual rate of unsolicited mail. rate limited", at: "rcpt" }
        : "accept";
  });
  afterAll(() => s.stop());

  test("pauses the whole destination; its recipients go out when it resumes, not at their retry; another destination goes on", async () => {
    const first = await send(s.t, "first@a.test");
    await eventually(() => s.sink.attempts.get("first@a.test") === 1, 10_000, "the throttled attempt");
    const throttledAt = Date.now();
    const second = await send(s.t, "second@b.test");
    await send(s.t, "elsewhere@other.test");
    // Another destination is not held up.
    await eventually(() => s.sink.to("elsewhere@other.test").length === 1, 5_000, "the other destination's delivery");
    expect(Date.now() - throttledAt).toBeLessThan(1500);
    // The paused destination gets no attempt while paused, for any of its domains...
    expect(s.sink.attempts.get("second@b.test") ?? 0).toBe(0);
    const during = await scrapeMetrics(s.t.app.httpPort!, METRICS_TOKEN);
    expect(during.value("postroom_destination_paused", { destination: "provider", source: "throttle" })).toBe(1);
    expect(during.value("postroom_destination_attempts_total", { destination: "provider", source_ip: "default", result: "deferral" })).toBe(
      1,
    );
    // ...and both go out when the 2 s pause ends (not at the 5-minute retry).
    await eventually(() => s.sink.to("first@a.test").length === 1 && s.sink.to("second@b.test").length === 1, 10_000, "both delivered");
    const resumedAfterMs =
      Math.min(...[...s.sink.to("first@a.test"), ...s.sink.to("second@b.test")].map((m) => m.receivedAtMs)) - throttledAt;
    expect(resumedAfterMs).toBeGreaterThanOrEqual(1500);
    expect(resumedAfterMs).toBeLessThan(6000);
    expect(s.sink.attempts.get("second@b.test")).toBe(1);
    const after = await scrapeMetrics(s.t.app.httpPort!, METRICS_TOKEN);
    expect(after.value("postroom_destination_paused", { destination: "provider", source: "throttle" })).toBeUndefined();
    expect(after.value("postroom_destination_attempts_total", { destination: "provider", source_ip: "default", result: "delivery" })).toBe(
      2,
    );
    expect(after.value("postroom_destination_connections_total", { destination: "provider", source_ip: "default" })).toBeGreaterThanOrEqual(
      2,
    );
    // No rule takes other.test: its label is its MX host set's key.
    expect(
      after.value("postroom_destination_attempts_total", { destination: "mx mx.other.test", source_ip: "default", result: "delivery" }),
    ).toBe(1);

    // The throttled attempt did not count: its deferral says "throttled", the next attempt is number 1 again.
    const eventsOf = async () => {
      const m = (await s.t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${first}`, { auth: bearer(ACCOUNT_A.token) })).body;
      return m.recipients[0].events.map((e: any) => [e.kind, e.details.attempt ?? null, e.details.bounce_class ?? null]);
    };
    await eventually(async () => (await eventsOf()).length === 5, 5_000, "the delivery recorded");
    expect(await eventsOf()).toEqual([
      ["registration", null, null],
      ["dispatch", 1, null],
      ["soft_bounce", 1, "throttled"],
      ["dispatch", 1, null],
      ["delivery", 1, null],
    ]);
    // Each recipient's row records its destination (for the operator's queue): the rule's
    // name, or the domain when no rule takes it.
    const db = new Database(join(s.t.dataDir, DATABASE_FILE), { readonly: true });
    try {
      const rows = db.query("SELECT email, destination FROM outbound_recipients ORDER BY email").all();
      expect(rows).toEqual([
        { email: "elsewhere@other.test", destination: "other.test" },
        { email: "first@a.test", destination: "provider" },
        { email: "second@b.test", destination: "provider" },
      ]);
    } finally {
      db.close();
    }
    expect(second).toBeString();
  }, 30_000);
});

describe("a throttle reply in the greeting", () => {
  let s: Awaited<ReturnType<typeof setUp>>;
  /** A provider's MX that greets every connection with 421 4.7.28 and hangs up (as Microsoft's RP-002 does). */
  let greeter: { stop(closeActiveConnections?: boolean): void };
  const connectedAt: number[] = [];
  beforeAll(async () => {
    s = await setUp(
      `[[outbound.destinations]]\nname = "greeter"\nmx = [".greet.test"]\nthrottle_replies = ["4.7.28"]\npause = "2s"`,
      providerMx,
    );
    // On 127.0.0.2, at the port every MX is reached on (the sink's, on 127.0.0.1).
    greeter = Bun.listen({
      hostname: "127.0.0.2",
      port: s.sink.port,
      socket: {
        open(socket) {
          connectedAt.push(Date.now());
          socket.write("421 4.7.28 mx.greet.test Service not available, rate limited: too many connections\r\n");
          socket.end();
        },
        data() {},
      },
    });
    s.dns.set("g.test", [{ type: "MX", exchange: "mx.greet.test", priority: 10 }]);
    s.dns.set("mx.greet.test", [{ type: "A", address: "127.0.0.2" }]);
  });
  afterAll(async () => {
    greeter.stop(true);
    await s.stop();
  });

  test("pauses the destination too: the recipient is tried again when it resumes, its attempt not counted", async () => {
    const id = await send(s.t, "someone@g.test");
    await eventually(() => connectedAt.length === 1, 10_000, "the first connection");
    // Before, a refused greeting was an ordinary deferral: the next try 5 minutes later.
    await eventually(() => connectedAt.length === 2, 8_000, "a connection once the 2 s pause ended");
    expect(connectedAt[1]! - connectedAt[0]!).toBeGreaterThanOrEqual(1500);
    const m = (await s.t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;
    const deferrals = m.recipients[0].events.filter((e: any) => e.kind === "soft_bounce");
    expect(deferrals[0].details).toMatchObject({ bounce_class: "throttled", attempt: 1, smtp_code: null });
    expect(deferrals[0].details.smtp_response).toContain("4.7.28");
    expect(m.recipients[0].events.some((e: any) => e.kind === "retries_exhausted")).toBe(false);
  }, 30_000);
});
