// Webhook endpoints in the built binary, as a SaaS's code uses them over HTTP: two
// endpoints with different filters, made through the account API, get exactly their kinds
// of a real send (a real SMTP sink answers 250 for one recipient and 550 for the other),
// each signed with its own secret, while the config's webhook gets every event.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";

const SECRET = "whsec_" + Buffer.from("binary webhook endpoints secret!").toString("base64");
const UNKNOWN_YET = "whsec_" + Buffer.from("not the endpoint's secret at all").toString("base64");
let appliance: BinaryAppliance;
let dns: TestDnsServer;
let sink: SmtpSink;
let config: WebhookReceiver;
let deliveries: WebhookReceiver;
let problems: WebhookReceiver;

const api = async (path: string, method = "GET", body?: unknown, key = ACCOUNT_A.token) => {
  const res = await fetch(`${appliance.http}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

beforeAll(async () => {
  sink = await SmtpSink.start();
  sink.script = (rcpt) => (rcpt.startsWith("gone@") ? { code: 550, text: "5.1.1 no such mailbox here", at: "rcpt" } : "accept");
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  config = WebhookReceiver.start(SECRET);
  deliveries = WebhookReceiver.start(UNKNOWN_YET);
  problems = WebhookReceiver.start(UNKNOWN_YET);
  appliance = await startBinaryAppliance({
    accounts: [{ ...ACCOUNT_A, extra: `webhook = { url = "${config.url}", token = "hook-token", signing_secret = "${SECRET}" }` }],
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    extra: "[webhooks]\nallow_private = true",
  });
  const domain = await api(`/api/v0.1/${ACCOUNT_A.id}/sending_domains`, "POST", { domain: "sender.test" });
  publishRecords(dns, domain.body);
  expect((await api(`/api/v0.1/${ACCOUNT_A.id}/sending_domains/${domain.body.id}/verify`, "POST")).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await appliance?.stop();
  await sink?.stop();
  await dns?.stop();
  for (const r of [config, deliveries, problems]) await r?.stop();
});

describe("webhook endpoints in the built binary", () => {
  test("two endpoints with different filters get exactly their kinds, each signed with its own secret", async () => {
    const hooks = `/api/v0.1/${ACCOUNT_A.id}/webhooks`;
    const d = await api(hooks, "POST", { outbound_account_id: ACCOUNT_A.outboundId, url: deliveries.url, events: ["delivery"] });
    const p = await api(hooks, "POST", {
      outbound_account_id: ACCOUNT_A.outboundId,
      url: problems.url,
      events: ["bounce", "soft_bounce", "retries_exhausted"],
      token: "problems-token",
    });
    expect([d.status, p.status]).toEqual([201, 201]);
    deliveries.secret = d.body.signing_secret;
    problems.secret = p.body.signing_secret;
    const sent = await api(
      `/api/v0.1/${ACCOUNT_A.outboundId}/messages`,
      "POST",
      { from: "ann@sender.test", to: ["ok@example.org", "gone@example.org"], subject: "hello", plain: "Hi" },
      ACCOUNT_A.smtpKey,
    );
    expect(sent.status).toBe(202);
    const kinds = (r: WebhookReceiver) =>
      r
        .acknowledged()
        .filter((e) => e.message_id === sent.body.id)
        .map((e) => `${e.kind} ${e.recipient}`)
        .sort();
    await eventually(() => kinds(config).length === 6, 15_000, "six events at the config's webhook");
    await eventually(() => kinds(deliveries).length >= 1 && kinds(problems).length >= 1, 15_000, "the endpoints' events");
    await Bun.sleep(300);
    expect(kinds(deliveries)).toEqual(["delivery ok@example.org"]);
    expect(kinds(problems)).toEqual(["bounce gone@example.org"]);
    expect(kinds(config)).toEqual([
      "bounce gone@example.org",
      "delivery ok@example.org",
      "dispatch gone@example.org",
      "dispatch ok@example.org",
      "registration gone@example.org",
      "registration ok@example.org",
    ]);
    for (const post of [...config.posts, ...deliveries.posts, ...problems.posts]) expect(post.verified).toBe(true);
    expect(problems.posts[0]!.headers.authorization).toBe("Bearer problems-token");
    expect(deliveries.posts[0]!.headers.authorization).toBeUndefined();
  }, 60_000);
});
