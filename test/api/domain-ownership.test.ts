// Domains belong to their owner (issue 31, finding 4): a custom domain (E8) that is another
// account's sending domain, the return-path host (mta.) of one, another account's custom
// domain, or this server's own inbound domain or bounce host is 409 naming why; a sending
// domain (E15) that is another account's custom domain is 409 too. The real owner takes a
// domain back by publishing the TXT record the 409 names (in the real DNS server on
// loopback) and sending the request again: the domain moves, mail to it goes to the new
// owner's target (a real SMTP client to the inbound listener, a real HTTP target), and the
// previous holder's lists no longer show it. On both store engines.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { createLogger } from "../../src/lib/logger.ts";
import { bearer, type TestApp } from "../helpers/app.ts";
import { APP_ENGINES } from "../helpers/app-engines.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const B = `/api/v0.1/${ACCOUNT_B.id}`;
const authA = bearer(ACCOUNT_A.token);
const authB = bearer(ACCOUNT_B.token);

describe.each(APP_ENGINES)("domains belong to their owner, on $name", (engine) => {
  const it = engine.test;
  let t: TestApp;
  let dns: TestDnsServer;
  let target: TestTarget;
  let addressA: string;
  let addressB: string;
  const logLines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    if (!engine.available()) return;
    dns = await TestDnsServer.start();
    target = TestTarget.start();
    t = await engine.start({
      dnsServer: dns.address,
      inbound: true,
      outbound: SENDING_KEYS,
      accounts: [ACCOUNT_A, ACCOUNT_B],
      logger: createLogger({ level: "warn", sink: (line) => logLines.push(JSON.parse(line)) }),
    });
    const address = async (path: string, auth: string) =>
      (await t.json("POST", `${path}/addresses`, { auth, body: { target: target.url(path === A ? "/a" : "/b"), target_format: "json+n" } }))
        .body.id as string;
    addressA = await address(A, authA);
    addressB = await address(B, authB);
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await dns?.stop();
    await target?.stop();
  });

  const customDomain = (path: string, address: string, domain: string, auth: string) =>
    t.json("POST", `${path}/custom_domains?address_id=${address}`, { auth, body: { domain } });
  const customDomainOfA = (domain: string) => customDomain(A, addressA, domain, authA);
  const customDomainOfB = (domain: string) => customDomain(B, addressB, domain, authB);
  const listed = async (path: string, address: string, auth: string) =>
    ((await t.json("GET", `${path}/custom_domains?address_id=${address}`, { auth })).body as { domain: string }[]).map((d) => d.domain);
  const sendingDomains = async (path: string, auth: string) =>
    ((await t.json("GET", `${path}/sending_domains`, { auth })).body as { domain: string }[]).map((d) => d.domain);
  const publishProof = (verification: { type: string; host: string; value: string }) => {
    expect(verification.type).toBe("TXT");
    dns.set(verification.host, [{ type: "TXT", data: verification.value }]);
  };
  /** Where mail to `rcpt` ends up: the path of the target that got it, or the SMTP refusal. */
  const deliver = async (rcpt: string): Promise<string> => {
    const before = { a: target.at("/a").length, b: target.at("/b").length };
    const sent = await sendWithNodemailer(t.app.inboundPort!, {
      from: "alice@sender.test",
      to: rcpt,
      subject: `to ${rcpt}`,
      text: "hello",
    });
    if (!sent.ok) return sent.response;
    if (target.at("/a").length > before.a) return "/a";
    if (target.at("/b").length > before.b) return "/b";
    return "nowhere";
  };

  it("another account's verified sending domain, and its mta. host, are 409 naming why, with the TXT record that takes them back", async () => {
    await verifiedSendingDomain(t, dns, ACCOUNT_A, "owned.example");
    const taken = await customDomainOfB("Owned.Example.");
    expect(taken.status).toBe(409);
    expect(taken.body.status).toBe(409);
    expect(taken.body.error).toStartWith("Conflict: owned.example is a sending domain of another account.");
    expect(taken.body.verification).toEqual({
      type: "TXT",
      host: "_postroom-verify.owned.example",
      value: expect.stringMatching(/^postroom-verify=[0-9a-f]{32}$/),
    });
    expect(taken.body.error).toContain(`_postroom-verify.owned.example with the value ${taken.body.verification.value}`);
    // Stable: the same claimant is told the same record again.
    expect((await customDomainOfB("owned.example")).body.verification).toEqual(taken.body.verification);

    const mta = await customDomainOfB("MTA.owned.example");
    expect(mta.status).toBe(409);
    expect(mta.body.error).toStartWith(
      "Conflict: mta.owned.example is the return-path host of a sending domain of another account (owned.example). If owned.example is yours, publish",
    );
    expect(mta.body.verification.host).toBe("_postroom-verify.owned.example");
    // Mail from news.owned.example has its envelope sender at mta.news.owned.example.
    expect((await customDomainOfB("mta.news.owned.example")).body.error).toStartWith(
      "Conflict: mta.news.owned.example is the return-path host of a sending domain of another account (owned.example).",
    );
    expect(await listed(B, addressB, authB)).toEqual([]);
    // The owner itself may use its sending domain for receiving too.
    expect((await customDomainOfA("owned.example")).status).toBe(201);
  });

  it("another account's custom domain is 409 for a custom domain and for a sending domain; the account's own is not", async () => {
    expect((await customDomainOfA("inbox-a.example")).status).toBe(201);
    const custom = await customDomainOfB("INBOX-A.example");
    expect(custom.status).toBe(409);
    expect(custom.body.error).toStartWith("Conflict: inbox-a.example is a custom domain of another account.");
    const sending = await t.json("POST", `${B}/sending_domains`, { auth: authB, body: { domain: "inbox-a.example." } });
    expect(sending.status).toBe(409);
    expect(sending.body.error).toStartWith("Conflict: inbox-a.example is a custom domain of another account.");
    expect(sending.body.verification.host).toBe("_postroom-verify.inbox-a.example");
    expect(await sendingDomains(B, authB)).not.toContain("inbox-a.example");
    expect((await t.json("POST", `${A}/sending_domains`, { auth: authA, body: { domain: "inbox-a.example" } })).status).toBe(201);
  });

  it("the inbound domain, the bounce host and names under them are 409 and never claimable, not even with a TXT record", async () => {
    for (const [domain, why] of [
      ["in.postroom.test", "the inbound domain"],
      ["x.IN.postroom.test.", "under the inbound domain in.postroom.test"],
      ["bounces.postroom.test", "the bounce host"],
      ["mta.bounces.postroom.test", "under the bounce host bounces.postroom.test"],
    ] as const) {
      const normal = domain.toLowerCase().replace(/\.$/, "");
      dns.set(`_postroom-verify.${normal}`, [{ type: "TXT", data: "postroom-verify=anything" }]);
      const res = await customDomainOfB(domain);
      expect({ domain, body: res.body }).toEqual({
        domain,
        body: {
          status: 409,
          error: `Conflict: ${normal} is this server's own domain (${why}); mail to it is the server's, so no account can have it. Use a domain of your own`,
        },
      });
    }
  });

  it("the owner takes back a custom domain another account took before the fix: TXT published, request repeated, mail follows at once", async () => {
    // B's claim as it was stored before the fix (the API now refuses it to A's domain).
    await t.app.repos.customDomains.insert({
      id: "b0000000000c1a17",
      accountId: ACCOUNT_B.id,
      addressId: addressB,
      domain: "stolen.example",
      authRegex: null,
      domainTarget: null,
      mxVerified: true,
      mxCheckedAtMs: Date.now(),
      createdAtMs: Date.now(),
    });
    expect(await deliver("sales@stolen.example")).toBe("/b");

    const refused = await customDomainOfA("stolen.example");
    expect(refused.status).toBe(409);
    expect(refused.body.error).toStartWith("Conflict: stolen.example is a custom domain of another account.");
    // Without the record, or with another value there, the claim stays refused.
    expect((await customDomainOfA("stolen.example")).status).toBe(409);
    dns.set(refused.body.verification.host, [{ type: "TXT", data: "postroom-verify=0123456789abcdef0123456789abcdef" }]);
    expect((await customDomainOfA("stolen.example")).status).toBe(409);
    expect(await deliver("sales@stolen.example")).toBe("/b");

    publishProof(refused.body.verification);
    const claimed = await customDomainOfA("stolen.example");
    expect(claimed.status).toBe(201);
    expect(claimed.body).toMatchObject({ address_id: addressA, domain: "stolen.example" });
    expect(await listed(B, addressB, authB)).not.toContain("stolen.example");
    expect(await listed(A, addressA, authA)).toContain("stolen.example");
    expect(await deliver("sales@stolen.example")).toBe("/a");
    expect(logLines.filter((l) => l.msg === "domain taken back by DNS proof" && l.domain === "stolen.example")).toEqual([
      expect.objectContaining({
        level: "warn",
        held_domain: "stolen.example",
        as: "custom_domain",
        record_id: "b0000000000c1a17",
        from_account: ACCOUNT_B.id,
        to_account: ACCOUNT_A.id,
      }),
    ]);
    // B cannot take it again: its own token is not what the domain publishes.
    const again = await customDomainOfB("stolen.example");
    expect(again.status).toBe(409);
    expect(again.body.verification.value).not.toBe(refused.body.verification.value);
  });

  it("a sending domain another account holds is taken back as a custom domain by proof, and the holder's sending domain goes", async () => {
    expect((await t.json("POST", `${B}/sending_domains`, { auth: authB, body: { domain: "squatted.example" } })).status).toBe(201);
    const refused = await customDomainOfA("squatted.example");
    expect(refused.status).toBe(409);
    expect(refused.body.error).toStartWith("Conflict: squatted.example is a sending domain of another account.");
    publishProof(refused.body.verification);
    expect((await customDomainOfA("squatted.example")).status).toBe(201);
    expect(await sendingDomains(B, authB)).not.toContain("squatted.example");
    expect(await deliver("sales@squatted.example")).toBe("/a");
  });

  it("a custom domain another account holds is taken back as a sending domain by proof", async () => {
    expect((await customDomainOfB("mine-really.example")).status).toBe(201);
    expect(await deliver("info@mine-really.example")).toBe("/b");
    const refused = await t.json("POST", `${A}/sending_domains`, { auth: authA, body: { domain: "mine-really.example" } });
    expect(refused.status).toBe(409);
    publishProof(refused.body.verification);
    const claimed = await t.json("POST", `${A}/sending_domains`, { auth: authA, body: { domain: "mine-really.example" } });
    expect(claimed.status).toBe(201);
    expect(await listed(B, addressB, authB)).not.toContain("mine-really.example");
    expect(await deliver("info@mine-really.example")).toStartWith("550");
  });
});
