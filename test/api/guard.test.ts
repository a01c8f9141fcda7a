// Guard tests over the published surface: every route under an account needs that
// account's bearer token, except E11, which needs the outbound account's key; every
// operator route (API.md section 10) an operator token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { basic, bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { hashSecret } from "../../src/auth/secrets.ts";

const OPERATOR = "pr_operator_token_guard";
const OPERATOR_PREFIX = "/api/v0.1/operator/";
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]` });
});
afterAll(() => t.stop());

// Public by design: health, the API description, and attachment downloads, whose signed
// URL is the credential (test/inbound/attachments-local.test.ts checks the signature).
// The same holds for tracking links (test/e2e/webhooks.test.ts checks forged ones are 404).
const PUBLIC = new Set([
  "GET /healthz",
  "GET /api/v0.1/openapi.json",
  "GET /attachments/:id/:name",
  "GET /t/o/:token",
  "GET /t/c/:token",
  "GET /t/u/:token",
  "POST /t/u/:token",
]);
/** E11, the one route that takes the outbound account's SMTP key instead of the account's token. */
const E11 = "POST /api/v0.1/:accountId/messages";

function concretePath(pattern: string, accountId: string): string {
  return pattern
    .replace(":accountId", accountId)
    .replace(/:addressId/, "00000000000000000000")
    .replace(/:[A-Za-z]+/g, "0000000000000000");
}

describe("route table guard", () => {
  test("the table is not empty and every route is either public or under an account", () => {
    expect(t.app.routes.length).toBeGreaterThan(8);
    for (const r of t.app.routes) {
      if (PUBLIC.has(`${r.method} ${r.path}`) || r.path.startsWith(OPERATOR_PREFIX)) continue;
      expect(r.path).toStartWith("/api/v0.1/:accountId/");
    }
  });

  test("every route under an account refuses a missing, wrong, foreign or wrong-kind credential", async () => {
    const failures: string[] = [];
    for (const r of t.app.routes) {
      if (PUBLIC.has(`${r.method} ${r.path}`) || r.path.startsWith(OPERATOR_PREFIX)) continue;
      const scheme = `${r.method} ${r.path}` === E11 ? "smtpAuth" : "bearerAPIToken";
      const pathId = scheme === "smtpAuth" ? ACCOUNT_A.outboundId : ACCOUNT_A.id;
      const path = concretePath(r.path, pathId) + (r.path.includes("custom_domains") ? "?address_id=00000000000000000000" : "");
      const right = scheme === "smtpAuth" ? ACCOUNT_A.smtpKey : ACCOUNT_A.token;
      const wrongKind = scheme === "smtpAuth" ? ACCOUNT_A.token : ACCOUNT_A.smtpKey;
      const foreign = scheme === "smtpAuth" ? ACCOUNT_B.smtpKey : ACCOUNT_B.token;
      const expectations: [string | null, number][] = [
        [null, 401],
        [bearer("pr_not_a_token"), 401],
        [basic(pathId, "pr_not_a_token"), 401],
        [bearer(wrongKind), 403],
        [bearer(foreign), 403],
      ];
      for (const [auth, status] of expectations) {
        const res = await t.call(r.method, path, { auth, body: r.method === "GET" || r.method === "DELETE" ? undefined : {} });
        if (res.status !== status)
          failures.push(`${r.method} ${r.path} with ${auth ?? "no credential"}: ${res.status}, expected ${status}`);
      }
      const ok = await t.call(r.method, path, { auth: bearer(right), body: r.method === "GET" || r.method === "DELETE" ? undefined : {} });
      if (ok.status === 401 || ok.status === 403) failures.push(`${r.method} ${r.path} with the right credential: ${ok.status}`);
    }
    expect(failures).toEqual([]);
  });

  test("every operator route refuses a missing or wrong credential (401) and an account's token or key (403)", async () => {
    const operatorRoutes = t.app.routes.filter((r) => r.path.startsWith(OPERATOR_PREFIX));
    expect(operatorRoutes.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const r of operatorRoutes) {
      const path = concretePath(r.path, ACCOUNT_A.id);
      const body = r.method === "GET" || r.method === "DELETE" ? undefined : {};
      for (const [auth, status] of [
        [null, 401],
        [bearer("pr_not_a_token"), 401],
        [bearer(ACCOUNT_A.token), 403],
        [bearer(ACCOUNT_A.smtpKey), 403],
      ] as const) {
        const res = await t.call(r.method, path, { auth, body });
        if (res.status !== status)
          failures.push(`${r.method} ${r.path} with ${auth ?? "no credential"}: ${res.status}, expected ${status}`);
      }
      const ok = await t.call(r.method, path, { auth: bearer(OPERATOR), body });
      if (ok.status === 401 || ok.status === 403) failures.push(`${r.method} ${r.path} with an operator token: ${ok.status}`);
    }
    expect(failures).toEqual([]);
  });

  test("public routes answer without credentials", async () => {
    expect((await t.call("GET", "/healthz")).status).toBe(200);
    expect((await t.call("GET", "/api/v0.1/openapi.json")).status).toBe(200);
  });
});
