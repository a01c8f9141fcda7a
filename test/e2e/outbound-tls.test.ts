// Outbound TLS policy: opportunistic STARTTLS by default; outbound.require_tls refuses to
// deliver in clear (retried, then retries_exhausted, the reason on every attempt); an
// MTA-STS policy in enforce mode (fetched over HTTPS from a real policy host) allows only
// its MX hosts, over TLS, with a certificate valid for the MX name.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { makeTestCa } from "../helpers/certs.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const A = `/api/v0.1/${ACCOUNT_A.id}`;

async function sendTo(t: TestApp, to: string): Promise<string> {
  const res = await t.json("POST", SEND, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to, subject: `to ${to}`, plain: "x" },
  });
  expect(res.status).toBe(202);
  return res.body.id;
}

async function recipient(t: TestApp, id: string): Promise<{ status: string; events: { kind: string; details: any }[] }> {
  return (await t.json("GET", `${A}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body.recipients[0];
}

function mx(dns: TestDnsServer, domain: string, host: string): void {
  dns.set(domain, [{ type: "MX", exchange: host, priority: 10 }]);
  dns.set(host, [{ type: "A", address: "127.0.0.1" }]);
}

describe("outbound.require_tls against a server that offers no STARTTLS", () => {
  const clock = new ManualClock(Date.parse("2026-11-22T12:00:00Z"));
  let t: TestApp;
  let sink: SmtpSink;
  let dns: TestDnsServer;
  beforeAll(async () => {
    sink = await SmtpSink.start();
    dns = await TestDnsServer.start();
    mx(dns, "secure.example", "mx.secure.example");
    mx(dns, "open.example", "mx.open.example");
    t = await startTestApp({
      clock,
      dnsServer: dns.address,
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nretry_delays = ["5m", "30m"]\nmax_queue_time = "1h"\nrequire_tls = ["secure.example"]`,
    });
    await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  });
  afterAll(async () => {
    await t.stop();
    await sink.stop();
    await dns.stop();
  });

  test("an unlisted domain gets its mail in clear; a listed one never does: soft bounces with the reason, then retries_exhausted", async () => {
    const open = await sendTo(t, "bob@open.example");
    const secure = await sendTo(t, "alice@secure.example");
    await eventually(async () => (await recipient(t, open)).status === "delivery", 10_000, "delivery in clear");
    expect(sink.to("bob@open.example")[0]!.tls).toBe(false);

    await eventually(async () => (await recipient(t, secure)).status === "soft_bounce", 10_000, "refusal");
    const first = (await recipient(t, secure)).events.at(-1)!;
    expect(first.details.smtp_code).toBeNull();
    // nodemailer asks for STARTTLS even unannounced; the server's refusal is the reason.
    expect(first.details.smtp_response).toStartWith("mx.secure.example: Error upgrading connection with STARTTLS: 500 ");
    expect(first.details.smtp_response).toEndWith("(TLS is required: outbound.require_tls lists secure.example)");
    for (const step of [5, 30, 30]) {
      clock.advance(step * 60_000);
      t.app.delivery.kick();
      await Bun.sleep(150);
      await t.app.delivery.idle();
    }
    const done = await eventually(async () => {
      const r = await recipient(t, secure);
      return r.status === "retries_exhausted" ? r : null;
    });
    expect(
      done.events
        .filter((e) => e.kind === "soft_bounce")
        .every((e) => e.details.smtp_response.endsWith("(TLS is required: outbound.require_tls lists secure.example)")),
    ).toBe(true);
    expect(sink.to("alice@secure.example")).toEqual([]);
  });
});

describe("MTA-STS", () => {
  const dir = tempDir();
  let t: TestApp;
  let sink: SmtpSink;
  let dns: TestDnsServer;
  let policyHost: ReturnType<typeof Bun.serve>;
  const policies = new Map<string, string>();

  function publishPolicy(domain: string, policy: string): void {
    dns.set(`_mta-sts.${domain}`, [{ type: "TXT", data: "v=STSv1; id=20261122T1;" }]);
    dns.set(`mta-sts.${domain}`, [{ type: "A", address: "127.0.0.1" }]);
    policies.set(`mta-sts.${domain}`, policy);
  }

  beforeAll(async () => {
    const ca = makeTestCa(dir.path);
    const mxCert = ca.issue("mx", "DNS:mx.sts.example");
    const hostCert = ca.issue("policy", ["sts", "wrongmx", "badcert", "testing"].map((d) => `DNS:mta-sts.${d}.example`).join(","));
    // One sink stands for every MX (one mx_port); its certificate names mx.sts.example only.
    sink = await SmtpSink.start({ tls: { key: await Bun.file(mxCert.keyFile).text(), cert: await Bun.file(mxCert.certFile).text() } });
    policyHost = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { key: await Bun.file(hostCert.keyFile).text(), cert: await Bun.file(hostCert.certFile).text() },
      fetch: (req) => {
        const policy = policies.get(req.headers.get("host")!.split(":")[0]!);
        return policy ? new Response(policy, { headers: { "content-type": "text/plain" } }) : new Response("no", { status: 404 });
      },
    });
    dns = await TestDnsServer.start();
    mx(dns, "sts.example", "mx.sts.example");
    publishPolicy("sts.example", "version: STSv1\nmode: enforce\nmx: mx.sts.example\nmax_age: 86400\n");
    mx(dns, "wrongmx.example", "mx.elsewhere.example");
    publishPolicy("wrongmx.example", "version: STSv1\nmode: enforce\nmx: mx.wrongmx.example\nmax_age: 86400\n");
    mx(dns, "badcert.example", "mx.badcert.example");
    publishPolicy("badcert.example", "version: STSv1\nmode: enforce\nmx: mx.badcert.example\nmax_age: 86400\n");
    mx(dns, "testing.example", "mx.testing.example");
    publishPolicy("testing.example", "version: STSv1\nmode: testing\nmx: mx.nothere.example\nmax_age: 86400\n");
    mx(dns, "plain.example", "mx.plain.example");
    t = await startTestApp({
      dnsServer: dns.address,
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nmta_sts_port = ${policyHost.port}\ntls_ca_file = "${ca.certFile}"`,
    });
    await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  });
  afterAll(async () => {
    await t.stop();
    await sink.stop();
    policyHost.stop(true);
    await dns.stop();
    dir.remove();
  });

  test("enforce: delivered over TLS to the named MX whose certificate verifies", async () => {
    const id = await sendTo(t, "carol@sts.example");
    await eventually(async () => (await recipient(t, id)).status === "delivery", 10_000, "delivery");
    expect(sink.to("carol@sts.example")[0]!.tls).toBe(true);
  });

  test("enforce: an MX the policy does not name is never used", async () => {
    const id = await sendTo(t, "dan@wrongmx.example");
    await eventually(async () => (await recipient(t, id)).status === "soft_bounce", 10_000, "refusal");
    expect((await recipient(t, id)).events.at(-1)!.details.smtp_response).toBe(
      "MX mx.elsewhere.example is not named by the MTA-STS policy of wrongmx.example (enforce) (mx: mx.wrongmx.example)",
    );
    expect(sink.to("dan@wrongmx.example")).toEqual([]);
  });

  test("enforce: a certificate for another name is refused", async () => {
    const id = await sendTo(t, "erin@badcert.example");
    await eventually(async () => (await recipient(t, id)).status === "soft_bounce", 10_000, "refusal");
    const reason = (await recipient(t, id)).events.at(-1)!.details.smtp_response as string;
    expect(reason).toStartWith("mx.badcert.example: Hostname/IP does not match certificate's altnames: ");
    expect(reason).toContain("DNS:mx.sts.example");
    expect(reason).toEndWith("(TLS is required: the MTA-STS policy of badcert.example (enforce))");
    expect(sink.to("erin@badcert.example")).toEqual([]);
  });

  test("testing mode and no policy: delivered as usual, opportunistic STARTTLS", async () => {
    for (const to of ["fay@testing.example", "gus@plain.example"]) {
      const id = await sendTo(t, to);
      await eventually(async () => (await recipient(t, id)).status === "delivery", 10_000, `delivery to ${to}`);
      expect(sink.to(to)[0]!.tls).toBe(true);
    }
  });
});
