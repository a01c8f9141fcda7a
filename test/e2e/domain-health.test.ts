// A sending domain's health (E14-E18), against a real DNS server on loopback: its DMARC
// policy read from _dmarc.<domain> (or a parent's), whether DKIM and the return path align,
// and what to publish for each point, refreshed by E18.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);

let dns: TestDnsServer;
let t: TestApp;

beforeAll(async () => {
  dns = await TestDnsServer.start();
  t = await startTestApp({ dnsServer: dns.address, outbound: SENDING_KEYS });
});
afterAll(async () => {
  await t.stop();
  await dns.stop();
});

const verify = async (id: string) => (await t.json("POST", `${A}/sending_domains/${id}/verify`, { auth })).body;

describe("a sending domain's health", () => {
  test("null until the first check", async () => {
    const created = await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "fresh.example" } });
    expect(created.body.health).toBeNull();
  });

  test("without DMARC: missing, and what to publish; then p=quarantine once published", async () => {
    const d = await verifiedSendingDomain(t, dns, ACCOUNT_A, "dmarc.example");
    expect(d.health).toEqual({
      dmarc: "missing",
      dmarc_record: null,
      dkim_aligned: true,
      return_path_aligned: true,
      fix: {
        dmarc: expect.stringContaining(
          'publish a TXT record at _dmarc.dmarc.example: "v=DMARC1; p=none; rua=mailto:dmarc-reports@dmarc.example"',
        ),
        dkim_aligned: null,
        return_path_aligned: null,
      },
      unknown: null,
    });
    dns.set("_dmarc.dmarc.example", [{ type: "TXT", data: "v=DMARC1; p=quarantine; rua=mailto:r@dmarc.example" }]);
    const after = await verify(d.id);
    expect(after.health).toMatchObject({
      dmarc: "quarantine",
      dmarc_record: "v=DMARC1; p=quarantine; rua=mailto:r@dmarc.example",
      fix: { dmarc: null, dkim_aligned: null, return_path_aligned: null },
    });
    expect((await t.json("GET", `${A}/sending_domains/${d.id}`, { auth })).body.health.dmarc).toBe("quarantine");
  });

  test("a DNS failure keeps the policy seen last and says so", async () => {
    const d = await verifiedSendingDomain(t, dns, ACCOUNT_A, "flaky.example");
    dns.set("_dmarc.flaky.example", [{ type: "TXT", data: "v=DMARC1; p=reject" }]);
    expect((await verify(d.id)).health.dmarc).toBe("reject");
    dns.set("_dmarc.flaky.example", [{ type: "FAIL", qtype: "TXT", rcode: "SERVFAIL" }]);
    const h = (await verify(d.id)).health;
    expect(h.dmarc).toBe("reject");
    expect(h.unknown).toContain("could not look up the DMARC record at _dmarc.flaky.example (ESERVFAIL)");
  });

  test("a subdomain takes its parent's sp=; aspf=s leaves the return path unaligned", async () => {
    dns.set("_dmarc.parent.example", [{ type: "TXT", data: "v=DMARC1; p=reject; sp=none; aspf=s" }]);
    const d = await verifiedSendingDomain(t, dns, ACCOUNT_A, "news.parent.example");
    expect(d.health).toMatchObject({ dmarc: "none", dkim_aligned: true, return_path_aligned: false });
    expect(d.health.fix.return_path_aligned).toContain("remove aspf=s");
  });

  test("without the DKIM record: not aligned, and which record to publish", async () => {
    const created = await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "nokey.example" } });
    const h = (await verify(created.body.id)).health;
    expect(h.dkim_aligned).toBe(false);
    expect(h.fix.dkim_aligned).toContain(`publish the TXT record at ${created.body.dkim_domain}`);
    expect(h.return_path_aligned).toBe(false);
    expect(h.fix.return_path_aligned).toContain("publish the CNAME mta.nokey.example → bounces.postroom.test");
  });
});
