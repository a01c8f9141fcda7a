// The spam complaint rate of an outbound account: complaints (ARF reports to our bounce
// addresses) per delivered message over the last 24 hours, on /metrics
// (postroom_outbound_complaint_rate) and the overview (GET /stats), with a warning above
// outbound.complaint_rate_warning. Mail is delivered to a real SMTP sink and the report
// comes in over inbound SMTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";

const METRICS_TOKEN = "pr_metrics_token_complaints";
const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;

const arf = (recipient: string) => `From: feedback@mx.remote.example
To: someone
Subject: Complaint about message
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="b1"

--b1
Content-Type: text/plain

This is an email abuse report.

--b1
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: remote/1.0
Version: 1
Original-Rcpt-To: ${recipient}

--b1--
`;

async function send(to: string): Promise<string> {
  const res = await t.json("POST", SEND, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to, subject: "news", plain: "x" },
  });
  expect(res.status).toBe(202);
  await eventually(() => sink.to(to).length === 1, 10_000, "delivery");
  return sink.to(to)[0]!.mailFrom;
}

async function complain(bounceAddress: string, recipient: string): Promise<void> {
  const { session } = await SmtpSession.open(t.app.inboundPort!);
  try {
    await session.command("EHLO mx.remote.example");
    await session.command("MAIL FROM:<>");
    expect(await session.command(`RCPT TO:<${bounceAddress}>`)).toStartWith("250");
    expect(await session.data(arf(recipient))).toStartWith("250");
  } finally {
    await session.close();
  }
}

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    inbound: true,
    dnsServer: dns.address,
    http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"`,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\ndnsbl_zones = []`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  const bounceAddress = await send("annoyed@example.org");
  for (const i of [1, 2, 3]) await send(`happy-${i}@example.org`);
  await complain(bounceAddress, "annoyed@example.org");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
});

describe("complaint rate", () => {
  test("/metrics: one complaint for four delivered is 0.25", async () => {
    const scrape = await scrapeMetrics(t.app.httpPort!, METRICS_TOKEN);
    expect(scrape.value("postroom_outbound_complaint_rate", { outbound_account_id: ACCOUNT_A.outboundId })).toBe(0.25);
    // An outbound account that sent nothing has no series.
    expect(scrape.value("postroom_outbound_complaint_rate", { outbound_account_id: ACCOUNT_B.outboundId })).toBeUndefined();
  });

  test("the overview shows the rate and warns above outbound.complaint_rate_warning", async () => {
    const stats = (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/stats`, { auth: bearer(ACCOUNT_A.token) })).body;
    expect(stats.complaint_rates).toEqual([{ outbound_account_id: ACCOUNT_A.outboundId, delivered: 4, complaints: 1, rate: 0.25 }]);
    expect(stats.warnings.map((w: string) => w.split(";")[0])).toContain(
      `outbound account ${ACCOUNT_A.outboundId}: 1 spam complaint for 4 delivered in 24 h (25 %, above 0.1 %)`,
    );
  });

  test("another account's overview shows none of it", async () => {
    const stats = (await t.json("GET", `/api/v0.1/${ACCOUNT_B.id}/stats`, { auth: bearer(ACCOUNT_B.token) })).body;
    expect(stats.complaint_rates).toEqual([]);
    expect(stats.warnings.join("\n")).not.toContain("complaint");
  });
});
