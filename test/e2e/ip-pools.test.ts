// Sending IPs in pools (issue 29), seen from a real SMTP server on loopback: an outbound
// account's mail leaves from its pool's address (127.0.0.2, 127.0.0.3: loopback on Linux)
// and greets with that address's name; the events name the source_ip; a pool of two
// spreads destinations over both, each always from the same one; the SPF record offered
// authorises every pool address. Without a pool nothing changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseConfigText } from "../../src/config/load.ts";
import { pickSourceAddress } from "../../src/outbound/delivery/source-address.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B, type AccountToml } from "../helpers/fixtures.ts";
import { publishRecords, SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";

const ACCOUNT_C = { id: "c000000000000003", token: "pr_token_account_c", outboundId: "c0000000000000f3", smtpKey: "pr_key_outbound_c" };
const ACCOUNT_D = { id: "d000000000000004", token: "pr_token_account_d", outboundId: "d0000000000000f4", smtpKey: "pr_key_outbound_d" };

const POOLS = `
[[outbound.ip_pools]]
name = "transactional"
addresses = [{ ip = "127.0.0.2", helo = "mta2.postroom.test" }]
[[outbound.ip_pools]]
name = "bulk"
addresses = [{ ip = "127.0.0.3", helo = "mta3.postroom.test" }]
[[outbound.ip_pools]]
name = "spread"
addresses = [{ ip = "127.0.0.2", helo = "mta2.postroom.test" }, { ip = "127.0.0.3", helo = "mta3.postroom.test" }]
`;
const SPREAD_DOMAINS = Array.from({ length: 12 }, (_, i) => `d${i}.example`);

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;
const senders: Record<string, string> = {};

const accounts: (AccountToml & { domain: string })[] = [
  { ...ACCOUNT_A, domain: "a-sender.test", outboundExtra: 'ip_pool = "transactional"' },
  { ...ACCOUNT_B, domain: "b-sender.test", outboundExtra: 'ip_pool = "bulk"' },
  { ...ACCOUNT_C, domain: "c-sender.test", outboundExtra: 'ip_pool = "spread"' },
  { ...ACCOUNT_D, domain: "d-sender.test" },
];

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org", ...SPREAD_DOMAINS);
  t = await startTestApp({
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\n${POOLS}`,
    accounts,
  });
  for (const a of accounts) senders[a.outboundId] = (await verifiedSendingDomain(t, dns, a, a.domain)).domain;
});
afterAll(async () => {
  await t?.stop();
  await sink?.stop();
  await dns?.stop();
});

/** Sends one message from `account` to `to` and waits for the sink to have it. */
async function sendAndWait(account: (typeof accounts)[number], to: string): Promise<{ id: string; sink: (typeof sink.messages)[number] }> {
  const before = sink.to(to).length;
  const r = await t.json("POST", `/api/v0.1/${account.outboundId}/messages`, {
    auth: bearer(account.smtpKey),
    body: { from: `ann@${account.domain}`, to, subject: "pools", plain: "hello" },
  });
  expect(r.status).toBe(202);
  await eventually(() => sink.to(to).length > before, 10_000, `delivery to ${to}`);
  return { id: r.body.id, sink: sink.to(to)[before]! };
}

async function attemptDetails(account: (typeof accounts)[number], id: string, kind: string) {
  const m = await eventually(async () => {
    const got = (await t.json("GET", `/api/v0.1/${account.id}/outbound_messages/${id}`, { auth: bearer(account.token) })).body;
    return got.recipients[0].events.some((e: any) => e.kind === "delivery") ? got : undefined;
  });
  return m.recipients[0].events.find((e: any) => e.kind === kind).details;
}

describe("an outbound account with an ip_pool", () => {
  test("leaves from its pool's address and greets with that address's name; the events name source_ip", async () => {
    const { id, sink: got } = await sendAndWait(accounts[0]!, "ann@example.org");
    expect([got.remoteAddress, got.helo]).toEqual(["127.0.0.2", "mta2.postroom.test"]);
    expect(await attemptDetails(accounts[0]!, id, "dispatch")).toMatchObject({ mx: "mx.sink.test", source_ip: "127.0.0.2" });
    expect(await attemptDetails(accounts[0]!, id, "delivery")).toMatchObject({ smtp_code: 250, source_ip: "127.0.0.2" });
  });

  test("two pools: two addresses, two names", async () => {
    const { sink: got } = await sendAndWait(accounts[1]!, "bob@example.org");
    expect([got.remoteAddress, got.helo]).toEqual(["127.0.0.3", "mta3.postroom.test"]);
  });

  test("a connection kept open for one source is not taken by mail from another", async () => {
    // The account without a pool leaves a connection to example.org idle (2 s); the pool's
    // mail right after must open its own from 127.0.0.2.
    const plain = await sendAndWait(accounts[3]!, "carol@example.org");
    const pooled = await sendAndWait(accounts[0]!, "dave@example.org");
    expect(plain.sink.remoteAddress).toBe("127.0.0.1");
    expect([pooled.sink.remoteAddress, pooled.sink.helo]).toEqual(["127.0.0.2", "mta2.postroom.test"]);
  });

  test("a pool of two spreads destinations over both, each destination always from the same one", async () => {
    const config = parseConfigText(`[outbound]\n${POOLS}`);
    if (!config.ok) throw new Error(config.problems.join("\n"));
    const spread = config.config.outbound.ipPools.find((p) => p.name === "spread")!.addresses;
    const seen = new Map<string, Set<string>>();
    for (const round of [1, 2]) {
      for (const domain of SPREAD_DOMAINS) {
        const { sink: got } = await sendAndWait(accounts[2]!, `r${round}@${domain}`);
        const from = pickSourceAddress(spread, domain);
        expect([domain, got.remoteAddress, got.helo]).toEqual([domain, from.ip, from.helo]);
        seen.set(domain, (seen.get(domain) ?? new Set()).add(got.remoteAddress));
      }
    }
    expect([...seen.values()].every((s) => s.size === 1)).toBe(true);
    expect(new Set([...seen.values()].flatMap((s) => [...s]))).toEqual(new Set(["127.0.0.2", "127.0.0.3"]));
  }, 30_000);
});

describe("without an ip_pool nothing changes", () => {
  test("the system's default address, EHLO = hostname, no source_ip in the events", async () => {
    const { id, sink: got } = await sendAndWait(accounts[3]!, "erin@example.org");
    expect([got.remoteAddress, got.helo]).toEqual(["127.0.0.1", "mx.postroom.test"]);
    expect(await attemptDetails(accounts[3]!, id, "delivery")).toEqual({
      mx: "mx.sink.test",
      smtp_code: 250,
      smtp_response: "250 OK queued as sink",
      attempt: 1,
    });
  });
});

describe("SPF advice", () => {
  test("the SPF record offered authorises sending_ips and every pool address", async () => {
    const list = await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/sending_domains`, { auth: bearer(ACCOUNT_A.token) });
    const spf = list.body[0].dns_records.find((r: { value: string }) => r.value.startsWith("v=spf1"));
    expect(spf.value).toBe("v=spf1 ip4:127.0.0.1 ip4:127.0.0.2 ip4:127.0.0.3 -all");
  });
});

describe("SPF verification", () => {
  test("a record that authorises only sending_ips fails, naming each pool address it leaves out", async () => {
    const auth = bearer(ACCOUNT_A.token);
    const created = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/sending_domains`, { auth, body: { domain: "old-spf.test" } });
    expect(created.status).toBe(201);
    publishRecords(dns, created.body);
    const spf = created.body.dns_records.find((r: { value: string }) => r.value.startsWith("v=spf1"));
    const published = dns.zone.get(spf.host);
    // The SPF record as it was before the pools: sending_ips only.
    dns.set(spf.host, [{ type: "TXT", data: ["v=spf1 ip4:127.0.0.1 -all"] }]);
    try {
      const verified = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/sending_domains/${created.body.id}/verify`, { auth });
      const row = verified.body.dns_records.find((r: { value: string }) => r.value.startsWith("v=spf1"));
      expect(row.verified).toBe(false);
      expect(row.reason).toContain("does not authorise 127.0.0.2 (fail), 127.0.0.3 (fail)");
    } finally {
      dns.set(spf.host, published ?? []);
    }
  });
});
