// The one router, through the appliance's HTTP handler: the operator group and its token,
// the account group's 401 before 404, middleware headers on every answer, the dashboard's
// group, and routing that does not depend on the Host's length.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AccountRegistry } from "../../src/auth/accounts.ts";
import { hashSecret } from "../../src/auth/secrets.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { operatorVerdict } from "../../src/http/authenticate.ts";
import { routableUrl } from "../../src/http/serve.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B, testConfigToml } from "../helpers/fixtures.ts";
import { NO_SUCH_PATH, unauthorized } from "../../src/http/refusals.ts";

const OPERATOR = "pr_operator_token_1";
const operatorConfig = `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`;

let t: TestApp;
let off: TestApp;
beforeAll(async () => {
  t = await startTestApp({ accounts: [{ ...ACCOUNT_A, rateLimit: "100/min" }, ACCOUNT_B], extra: operatorConfig });
  off = await startTestApp({ accounts: [ACCOUNT_A], extra: "[dashboard]\nenabled = false" });
});
afterAll(async () => {
  await t.stop();
  await off.stop();
});

describe("operatorVerdict", () => {
  const parsed = parseConfigText(testConfigToml({ dataDir: "/tmp/x", accounts: [ACCOUNT_A] }));
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  const registry = new AccountRegistry(parsed.config.accounts);
  test.each([
    [`Bearer ${OPERATOR}`, "ok"],
    [null, 401],
    ["Bearer ", 401],
    ["Bearer pr_not_a_token", 401],
    [`Basic ${Buffer.from(`x:${OPERATOR}`).toString("base64")}`, 401],
    [`Bearer ${ACCOUNT_A.token}`, 403],
    [`Bearer ${ACCOUNT_A.smtpKey}`, 403],
  ] as const)("%p: %p", (authorization, verdict) => {
    expect(operatorVerdict(authorization, [hashSecret(OPERATOR)], registry)).toBe(verdict);
  });
});

describe("the operator group (/api/v0.1/operator/)", () => {
  test("no token: 401 with a Bearer challenge; an account's token: 403", async () => {
    const none = await t.call("GET", "/api/v0.1/operator/queue");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="postroom"');
    expect(await none.json()).toEqual({ status: 401, error: unauthorized("operator") });
    const account = await t.call("GET", "/api/v0.1/operator/queue", { auth: bearer(ACCOUNT_A.token) });
    expect(account.status).toBe(403);
    expect(((await account.json()) as { error: string }).error).toBe(
      "Forbidden: operator paths take an operator token (dashboard.admin_tokens), not an account's token or key",
    );
  });

  test("an operator token passes its middleware (a path not served there: 404), and opens no account", async () => {
    const res = await t.call("GET", "/api/v0.1/operator/nothing/here", { auth: bearer(OPERATOR) });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ status: 404, error: NO_SUCH_PATH });
    expect((await t.call("GET", "/api/v0.1/operator/queue", { auth: bearer(OPERATOR) })).status).toBe(200);
    expect((await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { auth: bearer(OPERATOR) })).status).toBe(401);
  });
});

describe("the account group", () => {
  test("a path it does not serve is 401 without a token, 404 with the account's, with RateLimit-* counted", async () => {
    expect((await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/nothing/here`)).status).toBe(401);
    const res = await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/nothing/here`, { auth: bearer(ACCOUNT_A.token) });
    expect(res.status).toBe(404);
    expect(res.headers.get("ratelimit-limit")).toBe("100");
  });

  test("a refused body (422) carries the RateLimit-* headers of the call it counted", async () => {
    const res = await t.call("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { auth: bearer(ACCOUNT_A.token), body: "[1]" });
    expect(res.status).toBe(422);
    expect(res.headers.get("ratelimit-limit")).toBe("100");
    expect(Number(res.headers.get("ratelimit-remaining"))).toBeLessThan(100);
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("routing", () => {
  test("a one-letter Host routes like any other", async () => {
    expect((await t.app.handle(new Request("http://x/healthz"))).status).toBe(200);
    const res = await t.app.handle(
      new Request(`http://x/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: { authorization: bearer(ACCOUNT_A.token) } }),
    );
    expect(res.status).toBe(200);
  });

  test("an https:// URL routes like an http:// one, whatever the Host's length", async () => {
    // Once routed as if the scheme were http:// (the path was cut at "//127.0.0.1:8443"): 404.
    for (const origin of ["https://127.0.0.1:8443", "https://mx.postroom.test", "https://x", "https://ab:1"]) {
      expect({ origin, status: (await t.app.handle(new Request(`${origin}/healthz`))).status }).toEqual({ origin, status: 200 });
      const res = await t.app.handle(
        new Request(`${origin}/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: { authorization: bearer(ACCOUNT_A.token) } }),
      );
      expect({ origin, status: res.status }).toEqual({ origin, status: 200 });
    }
  });
});

describe("routableUrl", () => {
  test.each([
    ["http://127.0.0.1:8080/healthz", null],
    ["https://127.0.0.1:8443/healthz", null],
    ["http://x/healthz", "http://localhost/healthz"],
    ["https://ab/a//b?q=1", "https://localhost/a/b?q=1"],
    ["http://mx.example.com//api///v0.1", "http://mx.example.com/api/v0.1"],
  ])("%s", (url, expected) => {
    expect(routableUrl(new URL(url))?.toString() ?? null).toBe(expected);
  });
});

describe("the dashboard group", () => {
  test("/ and /dashboard lead to /dashboard/, which is the page with its CSP (no redirect loop)", async () => {
    expect((await t.call("GET", "/")).headers.get("location")).toBe("/dashboard/");
    expect((await t.call("GET", "/dashboard")).headers.get("location")).toBe("/dashboard/");
    const page = await t.call("GET", "/dashboard/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  test("a write to a page's URL is 405 with Allow; an unknown asset is 404", async () => {
    const res = await t.call("POST", "/dashboard/addresses", { body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect((await t.call("GET", "/dashboard/assets/nothing.js")).status).toBe(404);
  });

  test("off (dashboard.enabled = false): its paths are 404, its cookie opens nothing", async () => {
    for (const path of ["/", "/dashboard", "/dashboard/", "/dashboard/session", "/dashboard/assets/x.js"]) {
      const res = await off.call("GET", path);
      expect([path, res.status]).toEqual([path, 404]);
    }
    const res = await off.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: { cookie: "postroom_session=abc" } });
    expect(res.status).toBe(401);
  });
});
