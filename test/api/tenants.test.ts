// Tenants are isolated: another account's resource is 404, another account's path 403.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const B = `/api/v0.1/${ACCOUNT_B.id}`;
const authA = bearer(ACCOUNT_A.token);
const authB = bearer(ACCOUNT_B.token);

let t: TestApp;
let addressB: string;
let domainB: string;
beforeAll(async () => {
  t = await startTestApp();
  addressB = (
    await t.json("POST", `${B}/addresses`, {
      auth: authB,
      body: { target: "https://b.example/", target_format: "json+n", nickname: "B's" },
    })
  ).body.id;
  domainB = (await t.json("POST", `${B}/custom_domains?address_id=${addressB}`, { auth: authB, body: { domain: "b-owned.example" } })).body
    .id;
});
afterAll(() => t.stop());

describe("account A cannot reach account B", () => {
  test("A's token on B's path is 403", async () => {
    for (const [m, p] of [
      ["GET", `${B}/addresses`],
      ["GET", `${B}/addresses/${addressB}`],
      ["DELETE", `${B}/addresses/${addressB}`],
      ["GET", `${B}/custom_domains?address_id=${addressB}`],
    ]) {
      expect((await t.json(m!, p!, { auth: authA })).status).toBe(403);
    }
  });

  test("B's resources under A's path are 404, exactly like unknown ones", async () => {
    const cases: [string, string, unknown][] = [
      ["GET", `${A}/addresses/${addressB}`, undefined],
      ["PUT", `${A}/addresses/${addressB}`, { target: "https://evil.example/", target_format: "json+n" }],
      ["PATCH", `${A}/addresses/${addressB}`, { target: "https://evil.example/" }],
      ["DELETE", `${A}/addresses/${addressB}`, undefined],
      ["GET", `${A}/custom_domains?address_id=${addressB}`, undefined],
      ["POST", `${A}/custom_domains?address_id=${addressB}`, { domain: "hijack.example" }],
      ["DELETE", `${A}/custom_domains/${domainB}?address_id=${addressB}`, undefined],
    ];
    for (const [m, p, body] of cases) {
      const res = await t.json(m, p, { auth: authA, body });
      expect({ call: `${m} ${p}`, ...res.body }).toEqual({
        call: `${m} ${p}`,
        status: 404,
        error: `Not Found: no address "${addressB}" in this account; GET ${A}/addresses lists them`,
      });
    }
    expect((await t.json("GET", `${A}/addresses`, { auth: authA })).body).toEqual([]);
  });

  test("and B's data is untouched", async () => {
    const b = await t.json("GET", `${B}/addresses/${addressB}`, { auth: authB });
    expect(b.body).toMatchObject({ target: "https://b.example/", nickname: "B's" });
    expect((await t.json("GET", `${B}/custom_domains?address_id=${addressB}`, { auth: authB })).body).toHaveLength(1);
  });
});
