// Dashboard sessions: what a session is, and the pure decisions about it (is it still
// good, may this request write with it, what cookie to set). The HTTP glue is
// session-routes.ts; the rows are behind sessions.port.ts (SQLite and PostgreSQL).
import type { AccountConfig } from "../config/config.ts";

/** A signed-in browser: an account, through one of its API tokens, until `expiresAtMs`. */
export interface DashboardSession {
  /** SHA-256 (hex) of the cookie's secret; the secret itself is never stored. */
  idHash: string;
  /** The account signed in to; "" for an admin session. */
  accountId: string;
  /** Opened with an operator token (dashboard.admin_tokens): every account's pages, and the system. */
  admin: boolean;
  /** The stored form ("sha256:...") of the API token it was opened with. */
  tokenHash: string;
  createdAtMs: number;
  expiresAtMs: number;
  lastSeenAtMs: number;
}

export const SESSION_COOKIE = "postroom_session";

/**
 * The header every dashboard request carries. A page on another site cannot send it: a
 * form cannot set headers, and a cross-site fetch with it needs a CORS preflight that
 * Postroom never grants. With SameSite=Strict, it is what makes cookie writes CSRF-safe.
 */
export const DASHBOARD_HEADER = "x-postroom-dashboard";

export type SessionVerdict = { ok: true; touch: boolean } | { ok: false; reason: "expired" | "idle" | "account removed" | "token removed" };

/** Who a session belongs to now: the account's API tokens, or the config's operator tokens for an admin session; undefined when the account is gone. */
export type SessionOwner = Pick<AccountConfig, "apiTokenHashes"> | undefined;

/** How often last_seen_at is written: not on every request, a write each would cost more than it tells. */
export const TOUCH_INTERVAL_MS = 60_000;

/**
 * Whether a stored session still signs its browser in: not past its lifetime, not idle
 * longer than `idleMs`, and its account still in the config with the token it was
 * opened with (removing a token from the config ends its sessions at the next request).
 */
export function judgeSession(session: DashboardSession, owner: SessionOwner, nowMs: number, idleMs: number): SessionVerdict {
  if (nowMs >= session.expiresAtMs) return { ok: false, reason: "expired" };
  if (nowMs - session.lastSeenAtMs >= idleMs) return { ok: false, reason: "idle" };
  if (!owner) return { ok: false, reason: "account removed" };
  if (!owner.apiTokenHashes.includes(session.tokenHash)) return { ok: false, reason: "token removed" };
  return { ok: true, touch: nowMs - session.lastSeenAtMs >= TOUCH_INTERVAL_MS };
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether a request authenticated by the session cookie may do what it asks. Reads always
 * may. A write must carry the dashboard header, and when the browser says where it comes
 * from (Origin, Sec-Fetch-Site), that must be this origin.
 */
export function cookieWriteAllowed(method: string, headers: Headers, requestOrigin: string): boolean {
  if (SAFE_METHODS.has(method.toUpperCase())) return true;
  if (headers.get(DASHBOARD_HEADER) !== "1") return false;
  const site = headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin") return false;
  const origin = headers.get("origin");
  return origin === null || origin === requestOrigin;
}

/** The value of cookie `name` in a Cookie header, or null. */
export function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Set-Cookie for a new session; Secure when the dashboard is served over HTTPS. */
export function sessionCookie(secret: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${secret}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** Set-Cookie that removes the session cookie (sign out, or a session that ended). */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}
