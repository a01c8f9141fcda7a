// An IPv6 sending address (issue 29), end to end on loopback: a pool of ::1 reaches a real
// SMTP server listening on both families. A dual-stack MX (an A and an AAAA record, as
// Gmail's and Microsoft's have) is reached over IPv6 from an IPv6-only pool, greeting with
// the address's name; an IPv4-only MX is not reachable from it and the attempt says why;
// the SPF record offered names the address as ip6.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";

const POOL = `[[outbound.ip_pools]]\nname = "six"\naddresses = [{ ip = "::1", helo = "mta6.postroom.test" }]`;

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;

beforeAll(async () => {
  sink = await SmtpSink.start({ host: "::" });
  dns = await TestDnsServer.start();
  dns.set("dual.example", [{ type: "MX", exchange: "mx.dual.example", priority: 10 }]);
  dns.set("mx.dual.example", [
    { type: "A", address: "127.0.0.1" },
    { type: "AAAA", address: "::1" },
  ]);
  dns.set("four.example", [{ type: "MX", exchange: "mx.four.example", priority: 10 }]);
  dns.set("mx.four.example", [{ type: "A", address: "127.0.0.1" }]);
  t = await startTestApp({
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nretry_delays = ["1h"]\n${POOL}`,
    accounts: [{ ...ACCOUNT_A, outboundExtra: 'ip_pool = "six"' }],
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t?.stop();
  await sink?.stop();
  await dns?.stop();
});

const send = async (to: string): Promise<string> => {
  const r = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to, subject: "six", plain: "hello" },
  });
  expect(r.status).toBe(202);
  return r.body.id;
};
const eventsOf = async (id: string, kind: string) =>
  eventually(async () => {
    const m = (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;
    return m.recipients[0].events.find((e: { kind: string }) => e.kind === kind);
  }, 10_000);

describe("an IPv6-only pool", () => {
  test("reaches a dual-stack MX over IPv6, from ::1, greeting with the address's name", async () => {
    const id = await send("ann@dual.example");
    await eventually(() => sink.to("ann@dual.example").length === 1, 10_000, "delivery over IPv6");
    const got = sink.to("ann@dual.example")[0]!;
    expect([got.remoteAddress, got.helo]).toEqual(["::1", "mta6.postroom.test"]);
    expect((await eventsOf(id, "delivery")).details).toMatchObject({ smtp_code: 250, source_ip: "::1" });
  });

  test("cannot reach an IPv4-only MX, and the soft bounce says so", async () => {
    const id = await send("bob@four.example");
    const soft = await eventsOf(id, "soft_bounce");
    expect(soft.details.message ?? soft.details.smtp_response).toContain("the pool has no IPv4 address to reach it from");
    expect(sink.to("bob@four.example")).toHaveLength(0);
  });

  test("the SPF record offered authorises the address as ip6", async () => {
    const list = await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/sending_domains`, { auth: bearer(ACCOUNT_A.token) });
    const spf = list.body[0].dns_records.find((r: { value: string }) => r.value.startsWith("v=spf1"));
    expect(spf.value).toContain("ip6:::1");
  });
});
