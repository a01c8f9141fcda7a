// dns_records of a sending domain and outbound.sending_ips: the SPF record is offered
// only once the operator has said which addresses mail leaves from; with none, the only
// record there would be to offer is `v=spf1 -all`, which authorises nobody.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
type Row = { type: string; host: string; value: string; purpose: string; required: boolean; verified: boolean; reason: string | null };

describe("outbound.sending_ips empty (as `postroom init` writes it)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ outbound: "sending_ips = []" });
  });
  afterAll(() => t.stop());

  test("dns_records offers no SPF record, least of all v=spf1 -all; the rest are there", async () => {
    const created = await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "no-ips.example" } });
    expect(created.status).toBe(201);
    const rows: Row[] = created.body.dns_records;
    expect(rows.map((r) => r.value).filter((v) => v.startsWith("v=spf1"))).toEqual([]);
    expect(rows.map((r) => [r.type, r.host, r.purpose, r.required])).toEqual([
      ["TXT", created.body.dkim_domain, "dkim", true],
      ["CNAME", "mta.no-ips.example", "return_path", true],
      ["TXT", created.body.dkim_ed25519_domain, "dkim_ed25519", false],
    ]);
    const listed = await t.json("GET", `${A}/sending_domains`, { auth });
    expect(JSON.stringify(listed.body)).not.toContain("v=spf1");
  });

  test("verify cannot pass SPF: 422 with spf_verified false", async () => {
    const created = await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "verify-no-ips.example" } });
    const verified = await t.json("POST", `${A}/sending_domains/${created.body.id}/verify`, { auth });
    expect(verified.status).toBe(422);
    expect(verified.body.spf_verified).toBe(false);
    expect(verified.body.dns_records.map((r: Row) => r.purpose)).toEqual(["dkim", "return_path", "dkim_ed25519"]);
  });
});

describe("outbound.sending_ips set", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ outbound: `sending_ips = ["203.0.113.7", "2001:db8::7"]` });
  });
  afterAll(() => t.stop());

  test("dns_records offers the SPF record for the bounce host that authorises exactly those addresses", async () => {
    const created = await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "ips.example" } });
    expect(created.status).toBe(201);
    const spf = (created.body.dns_records as Row[]).filter((r) => r.purpose === "spf");
    expect(spf).toEqual([
      {
        type: "TXT",
        host: "bounces.postroom.test",
        value: "v=spf1 ip4:203.0.113.7 ip6:2001:db8::7 -all",
        purpose: "spf",
        required: true,
        verified: false,
        reason: "not checked yet",
      },
    ]);
    expect((created.body.dns_records as Row[]).map((r) => r.purpose)).toEqual(["dkim", "return_path", "spf", "dkim_ed25519"]);
  });
});

describe("sending from a domain not yet verified", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.stop());

  test("E11 names the records to publish, the verification and test mode", async () => {
    const created = await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "not-yet.example" } });
    expect(created.status).toBe(201);
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@not-yet.example", to: "x@example.org", subject: "hi", plain: "x" },
    });
    const at = `${A}/sending_domains/${created.body.id}`;
    expect(res.body).toEqual({
      status: 422,
      error:
        `from: domain not-yet.example is not verified: publish the records in dns_records of GET ${at}, ` +
        `then POST ${at}/verify; test_mode: true sends without verification`,
    });
  });

  test("E11 from a domain the account does not have says how to add it", async () => {
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@unknown.example", to: "x@example.org", subject: "hi", plain: "x" },
    });
    expect(res.body).toEqual({
      status: 422,
      error: `from: domain unknown.example is not a sending domain of this account: add it with POST ${A}/sending_domains, then verify it`,
    });
  });
});
