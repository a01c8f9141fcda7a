// Sending domains end to end: add through the API, publish the records in a real DNS
// server, verify, send, and check the signature with an independent verifier (dkimpy).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPublicKey } from "node:crypto";
import nodemailer from "nodemailer";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { dkimpyVerify } from "../helpers/dkimpy.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { publishRecords, SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { requireTools } from "../helpers/tools.ts";

/** What a send from brand.example says before it is verified: the records, E18's verify, test mode. */
const UNVERIFIED_BRAND =
  /^from: domain brand\.example is not verified: publish the records in dns_records of GET \/api\/v0\.1\/a000000000000001\/sending_domains\/\S+, then POST \/api\/v0\.1\/a000000000000001\/sending_domains\/\S+\/verify; test_mode: true sends without verification$/;

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const clock = new ManualClock(Date.now());

let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    clock,
    dnsServer: dns.address,
    submission: true,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
  });
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
});

describe("E15 create, E18 verify, send, dkimverify", () => {
  let domain: any;

  test("E15: the record carries a fresh key, a 12-character selector and the records to publish", async () => {
    const res = await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "Brand.Example" } });
    expect(res.status).toBe(201);
    domain = res.body;
    // (A copy: Bun's toMatchObject writes its asymmetric matchers into the object it checks.)
    expect(structuredClone(domain)).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      domain: "brand.example",
      mta_domain: "mta.brand.example",
      dkim_selector: expect.stringMatching(/^[a-z][a-z0-9]{11}$/),
      required_cname: "bounces.postroom.test",
      dkim_verified: false,
      return_path_verified: false,
      spf_verified: false,
      verified_at: null,
      sending_status: "unverified",
    });
    expect(domain.dkim_domain).toBe(`${domain.dkim_selector}._domainkey.brand.example`);
    const p = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/=]+)$/.exec(domain.dkim_public_record)![1]!;
    expect(createPublicKey({ key: Buffer.from(p, "base64"), format: "der", type: "spki" }).asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(domain.dns_records.map((r: any) => [r.type, r.host, r.purpose, r.required])).toEqual([
      ["TXT", domain.dkim_domain, "dkim", true],
      ["CNAME", "mta.brand.example", "return_path", true],
      ["TXT", "bounces.postroom.test", "spf", true],
      ["TXT", domain.dkim_ed25519_domain, "dkim_ed25519", false],
    ]);
    expect(domain.dns_records[0].value).toBe(domain.dkim_public_record);
    expect(domain.dns_records[1].value).toBe("bounces.postroom.test");
    expect(domain.dns_records[2].value).toBe("v=spf1 ip4:127.0.0.1 -all");
    expect(JSON.stringify(domain)).not.toContain("PRIVATE");
  });

  test("E18 before anything is published: 422 with the record and a reason per record", async () => {
    const res = await t.json("POST", `${A}/sending_domains/${domain.id}/verify`, { auth });
    expect(res.status).toBe(422);
    expect(res.body.id).toBe(domain.id);
    expect(res.body.dns_records.map((r: any) => r.reason)).toEqual([
      `no TXT record at ${domain.dkim_domain}`,
      "no CNAME at mta.brand.example; it must point at bounces.postroom.test",
      "the SPF policy reached at mta.brand.example does not authorise 127.0.0.1 (none)",
      `no TXT record at ${domain.dkim_ed25519_domain}`,
    ]);
  });

  test("sending before verification is refused through the API and SMTP", async () => {
    const api = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "news@brand.example", to: "x@example.org", plain: "x" },
    });
    expect(api.body.error).toMatch(UNVERIFIED_BRAND);
    const unknown = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "a@elsewhere.example", to: "x@example.org", plain: "x" },
    });
    expect(unknown.body).toEqual({
      status: 422,
      error:
        "from: domain elsewhere.example is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    });
    const testMode = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "news@brand.example", to: "x@example.org", plain: "x", test_mode: true },
    });
    expect(testMode.status).toBe(202);
    const smtp = nodemailer.createTransport({
      host: "127.0.0.1",
      port: t.app.submissionPort!,
      ignoreTLS: true,
      auth: { user: ACCOUNT_A.outboundId, pass: ACCOUNT_A.smtpKey },
    });
    await expect(smtp.sendMail({ from: "news@brand.example", to: "x@example.org", text: "x" })).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringMatching(/^550 5\.7\.1 domain brand\.example is not verified: publish the records in dns_records of GET /),
    });
  });

  test("records published: E18 answers 200 with all three flags true", async () => {
    publishRecords(dns, domain);
    const res = await t.json("POST", `${A}/sending_domains/${domain.id}/verify`, { auth });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      dkim_verified: true,
      return_path_verified: true,
      spf_verified: true,
      dkim_ed25519_verified: true,
      sending_status: "verified",
    });
    expect(res.body.verified_at).toBeString();
    expect(res.body.dns_records.every((r: any) => r.verified && r.reason === null)).toBe(true);
  });

  test("mail from it (and from a subdomain) is signed, every header that matters and From twice", async () => {
    const res = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: {
        from: "News <news@brand.example>",
        to: "reader@example.org",
        cc: "copy@example.org",
        subject: "Signed ✓",
        html: "<p>hi</p>",
        plain: "hi",
      },
    });
    expect(res.status).toBe(202);
    const sub = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "alerts@ops.brand.example", to: "reader2@example.org", subject: "from a subdomain", plain: "x" },
    });
    expect(sub.status).toBe(202);
    await eventually(() => sink.to("reader@example.org").length === 1 && sink.to("reader2@example.org").length === 1, 10_000, "deliveries");
    const raw = sink.to("reader@example.org")[0]!.raw;
    expect(raw).toMatch(/^DKIM-Signature: .*a=rsa-sha256/m);
    expect(raw).toMatch(/c=relaxed\/relaxed/);
    // Every header that matters is signed, and From once more (oversigned).
    const h = /h=([^;]+);/.exec(raw)![1]!.replace(/\s+/g, "").toLowerCase().split(":");
    expect(h.sort()).toEqual(["cc", "content-type", "date", "from", "from", "message-id", "mime-version", "subject", "to"]);
  });

  requireTools("python3-dkim")("dkimpy verifies the RSA and the Ed25519 signature of both, and a changed byte breaks them", () => {
    const raw = sink.to("reader@example.org")[0]!.raw;
    const records = { [domain.dkim_domain]: domain.dkim_public_record, [domain.dkim_ed25519_domain]: domain.dkim_ed25519_public_record };
    const verdicts = (message: string) =>
      dkimpyVerify(message, records)
        .map((r) => [r.algorithm, r.domain, r.valid])
        .sort();
    expect(verdicts(raw)).toEqual([
      ["ed25519-sha256", "brand.example", true],
      ["rsa-sha256", "brand.example", true],
    ]);
    // A changed byte breaks both: the verifier really checks.
    expect(raw).toContain("<p>hi</p>");
    expect(verdicts(raw.replace("<p>hi</p>", "<p>ho</p>"))).toEqual([
      ["ed25519-sha256", "brand.example", false],
      ["rsa-sha256", "brand.example", false],
    ]);
    // Mail from a subdomain is signed for the sending domain.
    expect(verdicts(sink.to("reader2@example.org")[0]!.raw)).toEqual([
      ["ed25519-sha256", "brand.example", true],
      ["rsa-sha256", "brand.example", true],
    ]);
  });

  test("the DKIM record removed: E18 answers 422 with dkim_verified false and the reason", async () => {
    dns.zone.delete(domain.dkim_domain);
    const res = await t.json("POST", `${A}/sending_domains/${domain.id}/verify`, { auth });
    expect(res.status).toBe(422);
    expect(res.body.dkim_verified).toBe(false);
    expect(res.body.dns_records[0].reason).toBe(`no TXT record at ${domain.dkim_domain}`);
    // A verified domain whose record disappears keeps sending for the grace period.
    expect(res.body.sending_status).toBe("grace");
    expect(Date.parse(res.body.grace_until) - clock.nowMs()).toBe(72 * 3600_000);
    dns.set(domain.dkim_domain, [{ type: "TXT", data: ["v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAsomethingelse"] }]);
    expect((await t.json("POST", `${A}/sending_domains/${domain.id}/verify`, { auth })).body.dns_records[0].reason).toBe(
      `TXT at ${domain.dkim_domain} has a different key`,
    );
  });

  test("after the grace period the background verifier stops sending from it", async () => {
    expect(
      (
        await t.json("POST", SEND, {
          auth: bearer(ACCOUNT_A.smtpKey),
          body: { from: "news@brand.example", to: "x@example.org", plain: "x" },
        })
      ).status,
    ).toBe(202);
    clock.advance(73 * 3600_000);
    expect(await t.app.domains.verifyDue()).toBeGreaterThanOrEqual(1);
    const d = (await t.json("GET", `${A}/sending_domains/${domain.id}`, { auth })).body;
    expect(d).toMatchObject({ sending_status: "unverified", verified_at: null, dkim_verified: false });
    const refused = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "news@brand.example", to: "x@example.org", plain: "x" },
    });
    expect(refused.body.error).toMatch(UNVERIFIED_BRAND);
  });
});

describe("the background verifier, listing and deletion", () => {
  test("a domain whose records are published is verified by the background job without E18", async () => {
    const created = (await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "quiet.example" } })).body;
    publishRecords(dns, created);
    clock.advance(61_000);
    await t.app.domains.verifyDue();
    expect((await t.json("GET", `${A}/sending_domains/${created.id}`, { auth })).body).toMatchObject({
      dkim_verified: true,
      spf_verified: true,
      return_path_verified: true,
      sending_status: "verified",
    });
  });

  test("E14 lists with a substring query; E17 deletes (202) and mail from it is refused at once", async () => {
    const d = await verifiedSendingDomain(t, dns, ACCOUNT_A, "gone.example");
    const list = (await t.json("GET", `${A}/sending_domains?query=gone`, { auth })).body;
    expect(list.map((x: any) => x.domain)).toEqual(["gone.example"]);
    expect((await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "gone.example" } })).body).toEqual({
      status: 422,
      error: "domain: gone.example is already a sending domain of this account",
    });
    const del = await t.json("DELETE", `${A}/sending_domains/${d.id}`, { auth });
    expect(del.status).toBe(202);
    expect(del.body.id).toBe(d.id);
    expect((await t.json("GET", `${A}/sending_domains/${d.id}`, { auth })).status).toBe(404);
    const refused = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "x@gone.example", to: "x@example.org", plain: "x" },
    });
    expect(refused.body).toEqual({
      status: 422,
      error:
        "from: domain gone.example is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    });
  });

  test("another account cannot see, verify or send from it", async () => {
    const d = await verifiedSendingDomain(t, dns, ACCOUNT_A, "mine.example");
    expect((await t.json("GET", `/api/v0.1/${ACCOUNT_B.id}/sending_domains/${d.id}`, { auth: bearer(ACCOUNT_B.token) })).status).toBe(404);
    expect(
      (await t.json("POST", `/api/v0.1/${ACCOUNT_B.id}/sending_domains/${d.id}/verify`, { auth: bearer(ACCOUNT_B.token) })).status,
    ).toBe(404);
    const b = await t.json("POST", `/api/v0.1/${ACCOUNT_B.outboundId}/messages`, {
      auth: bearer(ACCOUNT_B.smtpKey),
      body: { from: "x@mine.example", to: "x@example.org", plain: "x" },
    });
    expect(b.body).toEqual({
      status: 422,
      error:
        "from: domain mine.example is not a sending domain of this account: add it with POST /api/v0.1/b000000000000002/sending_domains, then verify it",
    });
  });
});
