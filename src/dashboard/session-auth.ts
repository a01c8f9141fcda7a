// Sign-in, sign-out and "who is this cookie": the glue between the session cookie, the
// stored rows and the accounts in the config. The router's account group asks
// `sessionCallers` when a request to an account path comes without an Authorization header.
import { hashSecret, mintSecret, secretMatchesAny } from "../auth/secrets.ts";
import type { AccountRegistry } from "../auth/accounts.ts";
import { type ForbiddenReason, isWrite, standingReason } from "../auth/authenticate.ts";
import { type OperatorSessions, operatorTokenLabel, type SessionCallers, type SessionVerdict } from "../http/authenticate.ts";
import { ApiError } from "../http/errors.ts";
import { FOREIGN_PAGE, forbidden } from "../http/refusals.ts";
import type { RateLimits } from "../auth/rate-limit.ts";
import type { AccountConfig, Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import {
  clearedSessionCookie,
  cookieValue,
  cookieWriteAllowed,
  judgeSession,
  SESSION_COOKIE,
  sessionCookie,
  type DashboardSession,
} from "./session.ts";
import { sessionIdHash, type SessionRepo } from "./sessions.port.ts";

export interface SessionAuthDeps {
  config(): Config;
  registry: AccountRegistry;
  clock: Clock;
  logger: Logger;
  sessions: SessionRepo;
}

export type CookieAuth =
  | { kind: "none" }
  /** `account` is null for an admin session (it picks an account per request). */
  | { kind: "session"; session: DashboardSession; account: AccountConfig | null }
  /** The cookie named a session that is gone or no longer good: 401, and the cookie is cleared. */
  | { kind: "ended" };

/** Cookies are Secure when the dashboard is reached over HTTPS. */
export const cookiesSecure = (config: Config): boolean => config.http.tls || config.http.publicUrl.startsWith("https:");

export class SessionAuth {
  constructor(private readonly deps: SessionAuthDeps) {}

  /** The session behind a request's cookie, if any. */
  async authenticate(req: Request): Promise<CookieAuth> {
    const secret = cookieValue(req.headers.get("cookie"), SESSION_COOKIE);
    if (!secret) return { kind: "none" };
    const { sessions, clock, registry, logger } = this.deps;
    const session = await sessions.find(sessionIdHash(secret));
    if (!session) return { kind: "ended" };
    const nowMs = clock.nowMs();
    const config = this.deps.config();
    const account = session.admin ? null : registry.account(session.accountId);
    const owner = session.admin ? { apiTokenHashes: config.dashboard.adminTokenHashes } : (account ?? undefined);
    const verdict = judgeSession(session, owner, nowMs, config.dashboard.sessionIdleMs);
    if (!verdict.ok) {
      await sessions.remove(session.idHash);
      logger.info("dashboard session ended", { account_id: session.accountId, reason: verdict.reason });
      return { kind: "ended" };
    }
    if (verdict.touch) await sessions.touch(session.idHash, nowMs);
    return { kind: "session", session, account: account ?? null };
  }

  /**
   * Opens a session for the account that owns `token` (an account API token; sending keys
   * do not sign in), or an admin session for an operator token (dashboard.admin_tokens).
   * Returns the Set-Cookie value, or null when the token is neither.
   */
  async signIn(token: string): Promise<{ account: AccountConfig | null; setCookie: string; expiresAtMs: number } | null> {
    const { registry, sessions, clock, config } = this.deps;
    const admin = secretMatchesAny(token, config().dashboard.adminTokenHashes);
    const principal = admin ? null : registry.principalForSecret(token);
    if (!admin && principal?.kind !== "account") return null;
    const account = principal?.account ?? null;
    const nowMs = clock.nowMs();
    await sessions.removeExpired(nowMs);
    const secret = mintSecret();
    const lifetimeMs = config().dashboard.sessionLifetimeMs;
    const expiresAtMs = nowMs + lifetimeMs;
    await sessions.create({
      idHash: sessionIdHash(secret),
      accountId: account?.id ?? "",
      admin,
      tokenHash: hashSecret(token),
      createdAtMs: nowMs,
      expiresAtMs,
      lastSeenAtMs: nowMs,
    });
    return { account, setCookie: sessionCookie(secret, Math.floor(lifetimeMs / 1000), cookiesSecure(config())), expiresAtMs };
  }

  /** Ends the request's session (if any); returns the Set-Cookie that clears the cookie. */
  async signOut(req: Request): Promise<string> {
    const secret = cookieValue(req.headers.get("cookie"), SESSION_COOKIE);
    if (secret) await this.deps.sessions.remove(sessionIdHash(secret));
    return clearedSessionCookie(cookiesSecure(this.deps.config()));
  }

  /**
   * Why the account's standing refuses this session's call (suspended, or a read-scoped
   * token's session on a write), or null. An admin session is never read-only.
   */
  standing(session: DashboardSession, account: AccountConfig, method: string): ForbiddenReason | null {
    const { registry } = this.deps;
    const readOnly = !session.admin && registry.readOnlyHash(session.tokenHash);
    return standingReason(registry, { kind: "account", account, readOnly }, isWrite(method));
  }

  /** An account by ID (an admin session's choice). */
  account(id: string): AccountConfig | undefined {
    return this.deps.registry.account(id);
  }

  /** Every account, the config's and the API's (an admin session may open each). */
  accounts(): AccountConfig[] {
    return this.deps.registry.all();
  }

  clearCookie(): string {
    return clearedSessionCookie(cookiesSecure(this.deps.config()));
  }
}

/**
 * Calls to the operator API carried by an admin session's cookie (the dashboard's Accounts
 * and Audit pages), with the dashboard's write rule (CSRF). The operator is named by the
 * token the session was opened with, as a bearer call of that token would be. An account's
 * session is refused (403), an ended one 401.
 */
export function sessionOperators(auth: SessionAuth): OperatorSessions {
  return {
    async operator(req) {
      const who = await auth.authenticate(req);
      if (who.kind === "none") return null;
      if (who.kind === "ended")
        throw new ApiError(401, "Unauthorized: the dashboard session ended; sign in again", {}, { "Set-Cookie": auth.clearCookie() });
      if (!cookieWriteAllowed(req.method, req.headers, new URL(req.url).origin)) throw new ApiError(403, FOREIGN_PAGE);
      if (!who.session.admin) throw new ApiError(403, forbidden("not_operator"));
      return { tokenLabel: operatorTokenLabel(who.session.tokenHash) };
    },
  };
}

/**
 * Calls to the account API carried by the session cookie instead of a token: the session's
 * account, on its own paths only, with the dashboard's write rule (CSRF). Management routes
 * only: a session cannot send (E11 takes a sending key). Its calls count against
 * dashboard.rate_limit in `limiter`, apart from the account's integrations.
 */
export function sessionCallers(auth: SessionAuth, limiter: RateLimits, config: () => Config): SessionCallers {
  return {
    async verdict(req, pathAccountId, scheme): Promise<SessionVerdict> {
      const who = await auth.authenticate(req);
      if (who.kind === "none") return { kind: "none" };
      if (who.kind === "ended")
        return {
          kind: "refused",
          error: new ApiError(401, "Unauthorized: the dashboard session ended; sign in again", {}, { "Set-Cookie": auth.clearCookie() }),
        };
      if (!cookieWriteAllowed(req.method, req.headers, new URL(req.url).origin)) {
        return {
          kind: "refused",
          error: new ApiError(403, FOREIGN_PAGE),
        };
      }
      // An admin session opens every account's management paths; an account's session its own.
      const account = who.account ?? auth.account(pathAccountId);
      if (scheme !== "bearerAPIToken" || !account || account.id !== pathAccountId)
        return { kind: "refused", error: new ApiError(403, forbidden("other_account")) };
      const standing = auth.standing(who.session, account, req.method);
      if (standing) return { kind: "refused", error: new ApiError(403, forbidden(standing)) };
      const rate = config().dashboard.rateLimit;
      const budget = rate ? { limiter, key: `session:${who.session.idHash}`, rate, owner: { kind: "session" as const } } : null;
      return { kind: "ok", principal: { kind: "account", account }, budget };
    },
  };
}
