// Deliverability health end to end, against a real DNS server on loopback serving PTR
// records, forward records and two blocklist zones: one that lists an address (with its
// TXT reason) and one that fails (SERVFAIL, timeout). The operator sees each sending IP
// through GET /api/v0.1/operator/health/sending, /healthz's warnings and /metrics; a DNS
// failure is "unknown", never "not listed".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { dnsblQueryName, ptrQueryName } from "../../src/deliverability/dnsbl.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";

const OPERATOR = "pr_operator_token_sending_health";
const METRICS_TOKEN = "pr_metrics_token_sending_health";
const PATH = "/api/v0.1/operator/health/sending";
const HELO = "mx.postroom.test";
const CONFIRMED = "192.0.2.10"; // PTR mx.postroom.test, which resolves back to it
const MISMATCHED = "192.0.2.11"; // PTR host-11.isp.test, which resolves elsewhere
const LISTED = "192.0.2.12"; // PTR mx.postroom.test, listed on bl.test
const LISTED_V6 = "2001:db8::12"; // no PTR, listed on bl.test
const PTR_FAILS = "192.0.2.13"; // its PTR lookup gets SERVFAIL
const REASON = `Listed for spam; see https://bl.test/lookup?ip=${LISTED}`;

let dns: TestDnsServer;
let t: TestApp;

beforeAll(async () => {
  dns = await TestDnsServer.start();
  dns.set(ptrQueryName(CONFIRMED), [{ type: "PTR", domain: HELO }]);
  dns.set(ptrQueryName(LISTED), [{ type: "PTR", domain: HELO }]);
  dns.set(HELO, [
    { type: "A", address: CONFIRMED },
    { type: "A", address: LISTED },
  ]);
  dns.set(ptrQueryName(MISMATCHED), [{ type: "PTR", domain: "host-11.isp.test" }]);
  dns.set("host-11.isp.test", [{ type: "A", address: "198.51.100.11" }]);
  dns.set(ptrQueryName(PTR_FAILS), [{ type: "FAIL", qtype: "PTR", rcode: "SERVFAIL" }]);
  dns.set(dnsblQueryName(PTR_FAILS, "broken.test"), [{ type: "FAIL", qtype: "A", rcode: "SERVFAIL" }]);
  for (const ip of [LISTED, LISTED_V6])
    dns.set(dnsblQueryName(ip, "bl.test"), [
      { type: "A", address: "127.0.0.2" },
      { type: "TXT", data: REASON },
    ]);
  // broken.test cannot be asked: SERVFAIL for three addresses, no answer at all for one.
  for (const ip of [CONFIRMED, LISTED, LISTED_V6])
    dns.set(dnsblQueryName(ip, "broken.test"), [{ type: "FAIL", qtype: "A", rcode: "SERVFAIL" }]);
  dns.set(dnsblQueryName(MISMATCHED, "broken.test"), [{ type: "FAIL", qtype: "A", rcode: "TIMEOUT" }]);
  t = await startTestApp({
    dnsServer: dns.address,
    extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
    http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"`,
    outbound: `sending_ips = ["${CONFIRMED}", "${MISMATCHED}", "${LISTED}", "${PTR_FAILS}", "${LISTED_V6}"]\ndnsbl_zones = ["bl.test", "broken.test"]`,
  });
  await t.app.deliverability.sending.check();
});
afterAll(async () => {
  await t.stop();
  await dns.stop();
});

const health = async () => (await t.json("GET", PATH, { auth: bearer(OPERATOR) })).body;
const ipOf = async (ip: string) => (await health()).ips.find((h: { ip: string }) => h.ip === ip);
const brokenUnknown = { check: "broken.test", reason: "the blocklist did not answer (ESERVFAIL)" };

describe("GET /api/v0.1/operator/health/sending", () => {
  test("every sending IP, with when it was checked", async () => {
    const res = await t.json("GET", PATH, { auth: bearer(OPERATOR) });
    expect(res.status).toBe(200);
    expect(res.body.ips.map((h: { ip: string }) => h.ip)).toEqual([CONFIRMED, MISMATCHED, LISTED, PTR_FAILS, LISTED_V6]);
    expect(Date.now() - Date.parse(res.body.checked_at)).toBeLessThan(60_000);
  });

  test("an IP whose PTR confirms and is its HELO name: nothing to fix but the zone that failed", async () => {
    expect(await ipOf(CONFIRMED)).toEqual({
      ip: CONFIRMED,
      helo: HELO,
      ptr: HELO,
      fcrdns: true,
      helo_matches: true,
      listed: [],
      unknown: [brokenUnknown],
      warnings: [`sending IP ${CONFIRMED}: the broken.test blocklist check could not be made (the blocklist did not answer (ESERVFAIL))`],
    });
  });

  test("an IP whose PTR does not resolve back and is not its HELO name", async () => {
    const h = await ipOf(MISMATCHED);
    expect(h).toMatchObject({ ptr: "host-11.isp.test", fcrdns: false, helo_matches: false, listed: [] });
    expect(h.warnings).toContain(
      `sending IP ${MISMATCHED}'s PTR name host-11.isp.test does not resolve back to it: publish an A or AAAA record host-11.isp.test → ${MISMATCHED}`,
    );
    expect(h.warnings.join("\n")).toContain(`is not its EHLO name ${HELO}`);
  });

  test("a listed IP, v4 and v6, with the zone's TXT reason", async () => {
    expect(await ipOf(LISTED)).toMatchObject({ ptr: HELO, fcrdns: true, helo_matches: true, listed: [{ zone: "bl.test", text: REASON }] });
    expect(await ipOf(LISTED_V6)).toMatchObject({
      ptr: null,
      fcrdns: false,
      helo_matches: null,
      listed: [{ zone: "bl.test", text: REASON }],
    });
  });

  test("a blocklist that fails (SERVFAIL or no answer) is unknown, never not listed", async () => {
    for (const ip of [CONFIRMED, MISMATCHED, LISTED, PTR_FAILS, LISTED_V6]) {
      const h = await ipOf(ip);
      expect(h.listed.map((l: { zone: string }) => l.zone)).not.toContain("broken.test");
      expect(h.unknown.map((u: { check: string }) => u.check)).toContain("broken.test");
    }
    expect((await ipOf(MISMATCHED)).unknown[0].reason).toBe("the blocklist did not answer (ETIMEOUT)");
  });

  test("a PTR lookup that fails is unknown: neither a PTR nor its absence", async () => {
    expect(await ipOf(PTR_FAILS)).toEqual({
      ip: PTR_FAILS,
      helo: HELO,
      ptr: null,
      fcrdns: null,
      helo_matches: null,
      listed: [],
      unknown: [{ check: "ptr", reason: "the PTR lookup failed (ESERVFAIL)" }, brokenUnknown],
      warnings: [
        `sending IP ${PTR_FAILS}: the PTR check could not be made (the PTR lookup failed (ESERVFAIL))`,
        `sending IP ${PTR_FAILS}: the broken.test blocklist check could not be made (the blocklist did not answer (ESERVFAIL))`,
      ],
    });
    const scrape = await scrapeMetrics(t.app.httpPort!, METRICS_TOKEN);
    expect(scrape.value("postroom_sending_ip_fcrdns", { ip: PTR_FAILS })).toBeUndefined();
  });

  test("an account's token gets 403, none 401", async () => {
    const account = await t.json("GET", PATH, { auth: bearer(ACCOUNT_A.token) });
    expect(account.status).toBe(403);
    expect(account.body.error).toStartWith("Forbidden: ");
    expect((await t.json("GET", PATH, { auth: null })).status).toBe(401);
  });
});

describe("/healthz and /metrics", () => {
  test("/healthz stays ok and warns about the listed and mismatched IPs", async () => {
    const res = await fetch(`http://127.0.0.1:${t.app.httpPort}/healthz`);
    expect(res.status).toBe(200);
    const { warnings } = (await res.json()) as { warnings: string[] };
    expect(warnings).toContain(
      `sending IP ${LISTED} is listed on bl.test (${REASON}): find the cause, then ask for delisting on the list's site`,
    );
    expect(warnings.join("\n")).toContain(`sending IP ${LISTED_V6} has no PTR record`);
    expect(warnings.join("\n")).toContain(`sending IP ${MISMATCHED}'s PTR name host-11.isp.test does not resolve back to it`);
    expect(warnings.filter((w) => w.includes(`${CONFIRMED} `) || w.includes(`${CONFIRMED}'`))).toEqual([]);
  });

  test("postroom_sending_ip_listed and postroom_sending_ip_fcrdns; an unknown zone has no series", async () => {
    const scrape = await scrapeMetrics(t.app.httpPort!, METRICS_TOKEN);
    expect(scrape.value("postroom_sending_ip_listed", { ip: LISTED, zone: "bl.test" })).toBe(1);
    expect(scrape.value("postroom_sending_ip_listed", { ip: LISTED_V6, zone: "bl.test" })).toBe(1);
    expect(scrape.value("postroom_sending_ip_listed", { ip: CONFIRMED, zone: "bl.test" })).toBe(0);
    expect(scrape.value("postroom_sending_ip_listed", { ip: CONFIRMED, zone: "broken.test" })).toBeUndefined();
    expect(scrape.value("postroom_sending_ip_fcrdns", { ip: CONFIRMED })).toBe(1);
    expect(scrape.value("postroom_sending_ip_fcrdns", { ip: MISMATCHED })).toBe(0);
    expect(scrape.families.get("postroom_sending_ip_listed")).toBe("gauge");
  });

  test("a delisted IP is seen at the next check", async () => {
    dns.zone.delete(dnsblQueryName(LISTED, "bl.test"));
    await t.app.deliverability.sending.check();
    expect((await ipOf(LISTED)).listed).toEqual([]);
    const scrape = await scrapeMetrics(t.app.httpPort!, METRICS_TOKEN);
    expect(scrape.value("postroom_sending_ip_listed", { ip: LISTED, zone: "bl.test" })).toBe(0);
  });
});
