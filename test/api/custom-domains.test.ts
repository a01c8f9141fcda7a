// E7-E9 as a client sees them, with a real DNS server on loopback answering the MX.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const B = `/api/v0.1/${ACCOUNT_B.id}`;
const authA = bearer(ACCOUNT_A.token);
const authB = bearer(ACCOUNT_B.token);

let t: TestApp;
let dns: TestDnsServer;
let addressA: string;
let addressB: string;

beforeAll(async () => {
  dns = await TestDnsServer.start();
  t = await startTestApp({
    dnsServer: dns.address,
    accounts: [
      { ...ACCOUNT_A, extra: "domain_targets = true" },
      { ...ACCOUNT_B, rateLimit: "off" },
    ],
  });
  addressA = (await t.json("POST", `${A}/addresses`, { auth: authA, body: { target: "https://a.example/", target_format: "json+n" } })).body
    .id;
  addressB = (await t.json("POST", `${B}/addresses`, { auth: authB, body: { target: "https://b.example/", target_format: "json+n" } })).body
    .id;
});
afterAll(async () => {
  await t.stop();
  await dns.stop();
});

const add = (path: string, address: string, body: unknown, auth = authA) =>
  t.json("POST", `${path}/custom_domains?address_id=${address}`, { auth, body });

describe("create (E8)", () => {
  test("201 with the record; mx_verified reflects the domain's MX in DNS", async () => {
    dns.set("pointed.example", [{ type: "MX", exchange: "mx.postroom.test", priority: 10 }]);
    dns.set("elsewhere.example", [{ type: "MX", exchange: "mx.other-provider.example", priority: 10 }]);
    const ok = await add(A, addressA, { domain: "Pointed.Example." });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      address_id: addressA,
      domain: "pointed.example",
      auth_regex: null,
      domain_target: null,
      mx_host: "mx.postroom.test",
      mx_verified: true,
      created_at: expect.any(String),
    });
    expect((await add(A, addressA, { domain: "elsewhere.example" })).body.mx_verified).toBe(false);
    expect((await add(A, addressA, { domain: "nxdomain.example" })).body.mx_verified).toBe(false);
  });

  test("auth_regex is kept; an invalid one is 422", async () => {
    const ok = await add(A, addressA, { domain: "regex.example", auth_regex: "(sales|support)@regex\\.example" });
    expect(ok.body.auth_regex).toBe("(sales|support)@regex\\.example");
    const bad = await add(A, addressA, { domain: "regex2.example", auth_regex: "(sales" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toStartWith("auth_regex: is not a valid regular expression (");
  });

  test("domain_target needs the account flag, and its password is masked", async () => {
    const ok = await add(A, addressA, { domain: "dt.example", domain_target: "https://u:pw@other.example/in" });
    expect(ok.body.domain_target).toBe("https://u:***@other.example/in");
    const refused = await add(B, addressB, { domain: "dt-b.example", domain_target: "https://other.example/in" }, authB);
    expect(refused.body).toEqual({
      status: 422,
      error: "domain_target: is not enabled for this account (an operator turns on accounts.domain_targets)",
    });
  });

  test("a domain belongs to one address across the server (another account's: 409, test/api/domain-ownership.test.ts); deleting it frees it", async () => {
    const first = await add(A, addressA, { domain: "taken.example" });
    expect(first.status).toBe(201);
    const other = (await t.json("POST", `${A}/addresses`, { auth: authA, body: { target: "https://a.example/", target_format: "json+n" } }))
      .body.id;
    expect((await add(A, other, { domain: "taken.example." })).body).toEqual({
      status: 422,
      error: `domain: taken.example is already a custom domain of address ${addressA} of this account; delete it there first`,
    });
    const again = await add(B, addressB, { domain: "TAKEN.example" }, authB);
    expect(again.status).toBe(409);
    expect(again.body.error).toStartWith("Conflict: taken.example is a custom domain of another account.");
    await t.json("DELETE", `${A}/custom_domains/${first.body.id}?address_id=${addressA}`, { auth: authA });
    expect((await add(B, addressB, { domain: "taken.example" }, authB)).status).toBe(201);
  });

  test.each([
    [{ domain: "not a domain" }, "domain: must be a domain name such as example.com"],
    [{ domain: "ok.example", extra: 1 }, "extra: unknown field"],
    [{}, "domain: is required"],
  ])("%j is refused", async (body, error) => {
    expect((await add(A, addressA, body)).body).toEqual({ status: 422, error });
  });
});

describe("list (E7) and delete (E9)", () => {
  test("list by address with a substring query; delete answers 202 and removes it", async () => {
    const addr = (await t.json("POST", `${A}/addresses`, { auth: authA, body: { target: "https://a.example/", target_format: "json+n" } }))
      .body.id;
    for (const d of ["alpha.example", "beta.example", "alphabet.example"]) await add(A, addr, { domain: d });
    const all = await t.json("GET", `${A}/custom_domains?address_id=${addr}`, { auth: authA });
    expect(all.body.map((d: { domain: string }) => d.domain).sort()).toEqual(["alpha.example", "alphabet.example", "beta.example"]);
    const alpha = await t.json("GET", `${A}/custom_domains?address_id=${addr}&query=alpha`, { auth: authA });
    expect(alpha.body.map((d: { domain: string }) => d.domain).sort()).toEqual(["alpha.example", "alphabet.example"]);

    const victim = all.body.find((d: { domain: string }) => d.domain === "beta.example");
    const del = await t.json("DELETE", `${A}/custom_domains/${victim.id}?address_id=${addr}`, { auth: authA });
    expect(del).toMatchObject({ status: 202, body: victim });
    const after = await t.json("GET", `${A}/custom_domains?address_id=${addr}`, { auth: authA });
    expect(after.body).toHaveLength(2);
    expect((await t.json("DELETE", `${A}/custom_domains/${victim.id}?address_id=${addr}`, { auth: authA })).status).toBe(404);
  });

  test("a domain under another address of the same account is 404 on delete", async () => {
    const other = (await t.json("POST", `${A}/addresses`, { auth: authA, body: { target: "https://a.example/", target_format: "json+n" } }))
      .body.id;
    const d = (await add(A, addressA, { domain: "wrong-address.example" })).body;
    expect((await t.json("DELETE", `${A}/custom_domains/${d.id}?address_id=${other}`, { auth: authA })).status).toBe(404);
  });

  test("deleting the address removes its domains and frees them", async () => {
    const addr = (await t.json("POST", `${A}/addresses`, { auth: authA, body: { target: "https://a.example/", target_format: "json+n" } }))
      .body.id;
    await add(A, addr, { domain: "goes-with-address.example" });
    await t.json("DELETE", `${A}/addresses/${addr}`, { auth: authA });
    expect((await t.json("GET", `${A}/custom_domains?address_id=${addr}`, { auth: authA })).status).toBe(404);
    expect((await add(A, addressA, { domain: "goes-with-address.example" })).status).toBe(201);
  });
});
