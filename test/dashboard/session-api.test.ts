// Dashboard sessions through the appliance's HTTP handler: sign in with an API token, the
// cookie authenticates the public API for that account only, writes need the dashboard's
// header, sessions survive a restart and end on sign out, expiry, or when the token leaves
// the config; sign-in attempts are rate limited.
import { afterEach, describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B, testConfigToml } from "../helpers/fixtures.ts";
import { tempDir } from "../helpers/tmp.ts";
import { UNKNOWN_SIGN_IN_TOKEN } from "../../src/http/refusals.ts";

const DASH = { "x-postroom-dashboard": "1" };
const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.stop();
});

async function start(opts: Parameters<typeof startTestApp>[0] = {}) {
  const app = await startTestApp({ accounts: [ACCOUNT_A, ACCOUNT_B], ...opts });
  apps.push(app);
  return app;
}

async function signIn(
  app: TestApp,
  token: string,
  headers: Record<string, string> = DASH,
): Promise<{ res: Response; cookie: string | null }> {
  const res = await app.call("POST", "/dashboard/session", { body: { token }, headers });
  const setCookie = res.headers.get("set-cookie");
  return { res, cookie: setCookie ? setCookie.split(";")[0]! : null };
}

const withCookie = (cookie: string, extra: Record<string, string> = {}) => ({ cookie, ...extra });

describe("sign-in", () => {
  test("an account's API token opens a session: HttpOnly, SameSite=Strict cookie and the account's IDs", async () => {
    const app = await start();
    const { res } = await signIn(app, ACCOUNT_A.token);
    expect(res.status).toBe(201);
    expect(res.headers.get("set-cookie")).toMatch(
      /^postroom_session=pr_[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/,
    );
    expect(await res.json()).toMatchObject({
      admin: false,
      accounts: [{ id: ACCOUNT_A.id, outbound_account_ids: [ACCOUNT_A.outboundId] }],
    });
  });

  test.each([
    ["an unknown token", "pr_nobody", 401, UNKNOWN_SIGN_IN_TOKEN],
    ["a sending key (it sends, it does not sign in)", ACCOUNT_A.smtpKey, 401, UNKNOWN_SIGN_IN_TOKEN],
    ["an empty token", "  ", 422, "token: enter an API token"],
  ])("%s is refused with a sentence and no cookie", async (_, token, status, error) => {
    const app = await start();
    const { res, cookie } = await signIn(app, token);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ status, error });
    expect(cookie).toBeNull();
  });

  test("without the dashboard header (a form on another site) the sign-in is refused", async () => {
    const app = await start();
    const { res, cookie } = await signIn(app, ACCOUNT_A.token, {});
    expect(res.status).toBe(403);
    expect(cookie).toBeNull();
  });

  test("sign-in attempts per client address are limited (dashboard.sign_in_rate): 429 with Retry-After", async () => {
    const app = await start({ extra: '[dashboard]\nsign_in_rate = "3/min"' });
    for (let i = 0; i < 3; i++) expect((await signIn(app, "pr_wrong")).res.status).toBe(401);
    const { res } = await signIn(app, ACCOUNT_A.token);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("the session cookie on the API", () => {
  test("reads and writes the session's account like its token, and nothing of another account", async () => {
    const app = await start();
    const { cookie } = await signIn(app, ACCOUNT_A.token);
    const created = await app.call("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
      body: { target: "https://example.com/in", target_format: "json+n" },
      headers: withCookie(cookie!, DASH),
    });
    expect(created.status).toBe(201);
    const list = await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: withCookie(cookie!) });
    expect(list.status).toBe(200);
    expect(((await list.json()) as unknown[]).length).toBe(1);
    expect((await app.call("GET", `/api/v0.1/${ACCOUNT_B.id}/addresses`, { headers: withCookie(cookie!) })).status).toBe(403);
    // A session cannot send: E11 takes a sending key.
    const send = await app.call("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, { body: {}, headers: withCookie(cookie!, DASH) });
    expect(send.status).toBe(403);
  });

  test.each([
    ["without the dashboard header", {}],
    ["from another origin", { ...DASH, origin: "https://evil.example" }],
    ["from a cross-site fetch", { ...DASH, "sec-fetch-site": "cross-site" }],
  ])("a write %s is refused (CSRF) and changes nothing", async (_, headers) => {
    const app = await start();
    const { cookie } = await signIn(app, ACCOUNT_A.token);
    const res = await app.call("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
      body: { target: "https://example.com/in", target_format: "json+n" },
      headers: withCookie(cookie!, headers),
    });
    expect(res.status).toBe(403);
    const list = await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: withCookie(cookie!) });
    expect(await list.json()).toEqual([]);
  });

  test("a session has its own rate limit (dashboard.rate_limit), apart from the account's", async () => {
    const app = await start({ accounts: [{ ...ACCOUNT_A, rateLimit: "2/min" }], extra: '[dashboard]\nrate_limit = "3/min"' });
    const { cookie } = await signIn(app, ACCOUNT_A.token);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: withCookie(cookie!) })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    // The account's integrations still have their own two calls.
    expect((await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { auth: `Bearer ${ACCOUNT_A.token}` })).status).toBe(200);
  });

  test("an Authorization header wins over the cookie (a wrong token is 401 even with a good session)", async () => {
    const app = await start();
    const { cookie } = await signIn(app, ACCOUNT_A.token);
    const res = await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { auth: "Bearer pr_wrong", headers: withCookie(cookie!) });
    expect(res.status).toBe(401);
  });
});

describe("the end of a session", () => {
  const who = (app: TestApp, cookie: string) => app.call("GET", "/dashboard/session", { headers: withCookie(cookie) });

  test("sign out ends it: the cookie no longer opens anything", async () => {
    const app = await start();
    const { cookie } = await signIn(app, ACCOUNT_A.token);
    expect((await who(app, cookie!)).status).toBe(200);
    const out = await app.call("DELETE", "/dashboard/session", { headers: withCookie(cookie!, DASH) });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await who(app, cookie!)).status).toBe(401);
    const res = await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: withCookie(cookie!) });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ status: 401, error: "Unauthorized: the dashboard session ended; sign in again" });
  });

  test("it expires after dashboard.session_lifetime, and after dashboard.session_idle unused", async () => {
    const clock = new ManualClock(Date.parse("2026-11-24T10:00:00Z"));
    const app = await start({ clock, extra: '[dashboard]\nsession_lifetime = "3h"\nsession_idle = "1h"' });
    const { cookie } = await signIn(app, ACCOUNT_A.token);
    for (let i = 0; i < 5; i++) {
      clock.advance(50 * 60_000);
      const res = await who(app, cookie!);
      expect(res.status).toBe(i < 3 ? 200 : 401);
    }
    const idle = (await signIn(app, ACCOUNT_A.token)).cookie!;
    clock.advance(61 * 60_000);
    expect((await who(app, idle)).status).toBe(401);
  });

  test("removing the token from the config (SIGHUP) ends its sessions", async () => {
    const app = await start();
    const { cookie } = await signIn(app, ACCOUNT_A.token);
    const next = parseConfigText(
      testConfigToml({ dataDir: app.dataDir, accounts: [{ ...ACCOUNT_A, token: "pr_new_token_a" }, ACCOUNT_B] }),
    );
    if (!next.ok) throw new Error(next.problems.join("\n"));
    app.app.reload({ ...next.config, dns: app.app.config.dns } as typeof next.config);
    expect((await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: withCookie(cookie!) })).status).toBe(401);
  });

  test("a session survives a restart (stored server-side)", async () => {
    const dir = tempDir();
    try {
      const first = await startTestApp({ accounts: [ACCOUNT_A], dataDir: dir.path });
      const { cookie } = await signIn(first, ACCOUNT_A.token);
      await first.stop();
      const second = await startTestApp({ accounts: [ACCOUNT_A], dataDir: dir.path });
      try {
        expect((await who(second, cookie!)).status).toBe(200);
      } finally {
        await second.stop();
      }
    } finally {
      dir.remove();
    }
  });
});

describe("admin sessions (dashboard.admin_tokens)", () => {
  const ADMIN = "pr_operator_token_for_tests";
  const adminConfig = { extra: `[dashboard]\nadmin_tokens = ["${hashSecret(ADMIN)}"]` };

  test("an operator token opens an admin session: every account's management paths, the system; never a send", async () => {
    const app = await start(adminConfig);
    const { res, cookie } = await signIn(app, ADMIN);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ admin: true, accounts: [{ id: ACCOUNT_A.id }, { id: ACCOUNT_B.id }] });
    for (const account of [ACCOUNT_A, ACCOUNT_B])
      expect((await app.call("GET", `/api/v0.1/${account.id}/addresses`, { headers: withCookie(cookie!) })).status).toBe(200);
    expect((await app.call("GET", "/api/v0.1/ffffffffffffffff/addresses", { headers: withCookie(cookie!) })).status).toBe(403);
    expect(
      (await app.call("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, { body: {}, headers: withCookie(cookie!, DASH) })).status,
    ).toBe(403);
    const system = await app.call("GET", "/dashboard/system", { headers: withCookie(cookie!) });
    expect(system.status).toBe(200);
    expect(await system.json()).toMatchObject({
      version: expect.any(String),
      health: { ok: true },
      tls: { mode: "off" },
      queue: { due: 0, scheduled: 0 },
      webhook_events_pending: 0,
    });
  });

  test("an account's session cannot see the system (404), and an operator token is no API token", async () => {
    const app = await start(adminConfig);
    const { cookie } = await signIn(app, ACCOUNT_A.token);
    expect((await app.call("GET", "/dashboard/system", { headers: withCookie(cookie!) })).status).toBe(404);
    expect((await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { auth: `Bearer ${ADMIN}` })).status).toBe(401);
  });

  test("removing the operator token from the config ends its sessions", async () => {
    const app = await start(adminConfig);
    const { cookie } = await signIn(app, ADMIN);
    const next = parseConfigText(testConfigToml({ dataDir: app.dataDir, accounts: [ACCOUNT_A, ACCOUNT_B] }));
    if (!next.ok) throw new Error(next.problems.join("\n"));
    app.app.reload({ ...next.config, dns: app.app.config.dns } as typeof next.config);
    expect((await app.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: withCookie(cookie!) })).status).toBe(401);
  });
});
