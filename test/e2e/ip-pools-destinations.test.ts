// IP pools and destinations together (issue 29): a destination rule's max_connections
// holds per source, so two outbound accounts in two pools each get the rule's connections
// from their own address, never more; the pool's address serves every domain of the
// destination. Seen from a real SMTP server on loopback (127.0.0.2, 127.0.0.3).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B, type AccountToml } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";

const POOLS = `
[[outbound.ip_pools]]
name = "transactional"
addresses = [{ ip = "127.0.0.2", helo = "mta2.postroom.test" }]
[[outbound.ip_pools]]
name = "bulk"
addresses = [{ ip = "127.0.0.3", helo = "mta3.postroom.test" }]
[[outbound.destinations]]
name = "provider"
mx = [".provider.test"]
max_connections = 1
`;
const DOMAINS = ["a.test", "b.test", "c.test"];
const accounts: (AccountToml & { domain: string })[] = [
  { ...ACCOUNT_A, domain: "a-sender.test", outboundExtra: 'ip_pool = "transactional"' },
  { ...ACCOUNT_B, domain: "b-sender.test", outboundExtra: 'ip_pool = "bulk"' },
];

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  for (const d of DOMAINS) {
    const mx = `mx.${d.split(".")[0]}.provider.test`;
    dns.set(d, [{ type: "MX", exchange: mx, priority: 10 }]);
    dns.set(mx, [{ type: "A", address: "127.0.0.1" }]);
  }
  t = await startTestApp({
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\n${POOLS}`,
    accounts,
  });
  for (const a of accounts) await verifiedSendingDomain(t, dns, a, a.domain);
  sink.dataDelayMs = 100;
});
afterAll(async () => {
  await t?.stop();
  await sink?.stop();
  await dns?.stop();
});

test("max_connections = 1 holds per pool address: one session from each, both at once", async () => {
  const send = async (a: (typeof accounts)[number], to: string) => {
    const r = await t.json("POST", `/api/v0.1/${a.outboundId}/messages`, {
      auth: bearer(a.smtpKey),
      body: { from: `ann@${a.domain}`, to, subject: "lanes", plain: "x" },
    });
    expect(r.status).toBe(202);
  };
  for (let i = 0; i < 24; i += 4)
    await Promise.all(Array.from({ length: 4 }, (_, j) => send(accounts[(i + j) % 2]!, `r${i + j}@${DOMAINS[(i + j) % 3]}`)));
  await eventually(() => sink.messages.length === 24, 30_000, "24 delivered");
  expect(Object.fromEntries(sink.maxOpenFrom)).toEqual({ "127.0.0.2": 1, "127.0.0.3": 1 });
  // Each pool's lane has its own window: the two addresses' sessions overlapped.
  expect(sink.maxOpen).toBe(2);
  expect(new Set(sink.messages.map((m) => `${m.remoteAddress} ${m.helo}`))).toEqual(
    new Set(["127.0.0.2 mta2.postroom.test", "127.0.0.3 mta3.postroom.test"]),
  );
}, 60_000);
