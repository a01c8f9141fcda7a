// A pool address on a blocklist (issue 29 with the deliverability check): while the pool
// has a clean address, new connections leave from it; outbound.avoid_listed_ips = false
// keeps the ranking. Seen from a real SMTP server on loopback (127.0.0.2, 127.0.0.3) and
// a blocklist served by the in-process DNS server.
import { afterEach, expect, test } from "bun:test";
import { dnsblQueryName } from "../../src/deliverability/dnsbl.ts";
import { pickSourceAddress } from "../../src/outbound/delivery/source-address.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";

const ADDRESSES = ["127.0.0.2", "127.0.0.3"].map((ip) => ({ ip, helo: `mta-${ip}.postroom.test`, warmup: null }));
const POOL = `[[outbound.ip_pools]]\nname = "spread"\naddresses = [${ADDRESSES.map((a) => `{ ip = "${a.ip}", helo = "${a.helo}" }`).join(", ")}]`;
const DOMAIN = "listed.example";
// The address the destination prefers: the one put on the blocklist.
const PREFERRED = pickSourceAddress(ADDRESSES, DOMAIN).ip;
const OTHER = ADDRESSES.find((a) => a.ip !== PREFERRED)!.ip;

let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.reverse()) await stop();
  stops = [];
});

async function sendFrom(avoid: boolean): Promise<string> {
  const sink = await SmtpSink.start();
  const dns = await TestDnsServer.start();
  stops.push(
    () => sink.stop(),
    () => dns.stop(),
  );
  routeToSink(dns, DOMAIN);
  dns.set(dnsblQueryName(PREFERRED, "bl.test"), [{ type: "A", address: "127.0.0.2" }]);
  const t: TestApp = await startTestApp({
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\ndnsbl_zones = ["bl.test"]\navoid_listed_ips = ${avoid}\n${POOL}`,
    accounts: [{ ...ACCOUNT_A, outboundExtra: 'ip_pool = "spread"' }],
  });
  stops.push(() => t.stop());
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  await eventually(() => t.app.deliverability.sending.listedIps().has(PREFERRED), 10_000, "the start-up check's listing");
  const r = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to: `x@${DOMAIN}`, subject: "pools", plain: "hello" },
  });
  expect(r.status).toBe(202);
  await eventually(() => sink.messages.length === 1, 10_000, "the delivery");
  return sink.messages[0]!.remoteAddress;
}

test("a listed address opens no new connection while the pool has a clean one", async () => {
  // Before: mail to the destination left from its preferred address, listed or not.
  expect(await sendFrom(true)).toBe(OTHER);
}, 30_000);

test("outbound.avoid_listed_ips = false: the destination's preferred address, listed or not", async () => {
  expect(await sendFrom(false)).toBe(PREFERRED);
}, 30_000);
