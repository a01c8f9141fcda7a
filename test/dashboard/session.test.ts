// The pure decisions of dashboard sessions (src/dashboard/session.ts), as tables.
import { describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import type { AccountConfig } from "../../src/config/config.ts";
import {
  clearedSessionCookie,
  cookieValue,
  cookieWriteAllowed,
  judgeSession,
  sessionCookie,
  TOUCH_INTERVAL_MS,
  type DashboardSession,
} from "../../src/dashboard/session.ts";

const HOUR = 3_600_000;
const account = { id: "a1", apiTokenHashes: [hashSecret("t1"), hashSecret("t2")] } as AccountConfig;
const session: DashboardSession = {
  idHash: "h",
  accountId: "a1",
  admin: false,
  tokenHash: hashSecret("t1"),
  createdAtMs: 0,
  expiresAtMs: 12 * HOUR,
  lastSeenAtMs: 0,
};

describe("judgeSession", () => {
  test.each([
    ["fresh", session, account, 1000, { ok: true, touch: false }],
    ["seen over a minute ago: touched", session, account, TOUCH_INTERVAL_MS, { ok: true, touch: true }],
    ["past its lifetime", { ...session, lastSeenAtMs: 12 * HOUR - 1 }, account, 12 * HOUR, { ok: false, reason: "expired" }],
    ["idle for the idle time", session, account, 2 * HOUR, { ok: false, reason: "idle" }],
    ["account gone from the config", session, undefined, 1000, { ok: false, reason: "account removed" }],
    ["its token gone from the config", { ...session, tokenHash: hashSecret("t3") }, account, 1000, { ok: false, reason: "token removed" }],
  ] as const)("%s", (_, s, a, now, expected) => {
    expect(judgeSession(s, a, now, 2 * HOUR)).toMatchObject(expected);
  });
});

describe("cookieWriteAllowed", () => {
  const origin = "https://mail.example.com";
  test.each([
    ["GET without anything", "GET", {}, true],
    ["HEAD without anything", "HEAD", {}, true],
    ["POST without the dashboard header", "POST", {}, false],
    ["POST with the header", "POST", { "x-postroom-dashboard": "1" }, true],
    ["DELETE with the header, same origin", "DELETE", { "x-postroom-dashboard": "1", origin, "sec-fetch-site": "same-origin" }, true],
    ["POST with the header from another origin", "POST", { "x-postroom-dashboard": "1", origin: "https://evil.example" }, false],
    ["POST with the header, cross-site fetch", "POST", { "x-postroom-dashboard": "1", "sec-fetch-site": "cross-site" }, false],
    ["POST with the header, same-site (another subdomain)", "POST", { "x-postroom-dashboard": "1", "sec-fetch-site": "same-site" }, false],
    ["PATCH with a header of another value", "PATCH", { "x-postroom-dashboard": "yes" }, false],
  ] as const)("%s", (_, method, headers, allowed) => {
    expect(cookieWriteAllowed(method, new Headers(headers), origin)).toBe(allowed);
  });
});

describe("cookies", () => {
  test.each([
    [null, null],
    ["", null],
    ["postroom_session=abc", "abc"],
    ["a=1; postroom_session=abc; b=2", "abc"],
    ["xpostroom_session=abc", null],
    ["postroom_session_old=zzz; postroom_session=abc", "abc"],
  ] as const)("cookieValue(%p)", (header, expected) => {
    expect(cookieValue(header, "postroom_session")).toBe(expected);
  });

  test("the session cookie is HttpOnly and SameSite=Strict, Secure only under HTTPS", () => {
    expect(sessionCookie("s3", 43200, false)).toBe("postroom_session=s3; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict");
    expect(sessionCookie("s3", 43200, true)).toEndWith("; Secure");
    expect(clearedSessionCookie(true)).toBe("postroom_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure");
  });
});
