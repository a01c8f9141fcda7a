// Authentication middleware of the router's groups: who is calling, and may they call this
// path? Account routes take the account's bearer token (or the dashboard's session cookie),
// E11 the outbound account's key (smtpAuth), operator routes an operator token. Each runs
// first in its group (groups.ts), before any body is read, so no unauthenticated request
// gets its body read. The decisions themselves are auth/authenticate.ts's.
import type { AccountRegistry, Principal } from "../auth/accounts.ts";
import type { AccountConfig } from "../config/config.ts";
import { type AuthScheme, authorize, isWrite, parseAuthorization } from "../auth/authenticate.ts";
import { matchingHash } from "../auth/secrets.ts";
import type { RateLimit } from "../config/units.ts";
import { principalKey, type RateLimits, rateOf } from "../auth/rate-limit.ts";
import { ApiError } from "./errors.ts";
import { forbidden, NO_SUCH_PATH, type RateOwner, unauthorized } from "./refusals.ts";
import { exchangeOf } from "./exchange.ts";

/** Where a caller's calls count: the limiter, the key, the limit (rate-limit.ts). */
export interface CallBudget {
  limiter: RateLimits;
  key: string;
  rate: RateLimit;
  /** Whose budget it is, for the 429's text (refusals.ts). */
  owner: RateOwner;
}

/** A session's verdict on an account route it calls with its cookie instead of a token. */
export type SessionVerdict =
  | { kind: "none" }
  | { kind: "refused"; error: ApiError }
  /** A session has its own budget (the dashboard's), apart from the account's integrations. */
  | { kind: "ok"; principal: Principal; budget: CallBudget | null };

/** Callers by session cookie (the dashboard's): asked when a request has no Authorization header. */
export interface SessionCallers {
  verdict(req: Request, pathAccountId: string, scheme: AuthScheme): Promise<SessionVerdict>;
}

export interface AccountAuthDeps {
  registry: AccountRegistry;
  /** The calls budget shared with SMTP submission: one send budget per outbound account. */
  limiter: RateLimits;
  /** null when the dashboard is off: a cookie then opens nothing. */
  sessions(): SessionCallers | null;
}

/** What authentication adds to an account route's context. */
export type CallerContext = {
  principal: Principal;
  /** The account the path names: the caller's own (an outbound account's, for E11). */
  account: AccountConfig;
  budget: CallBudget | null;
};

const CHALLENGE = { "WWW-Authenticate": 'Bearer realm="postroom", Basic realm="postroom"' };
/** `/api/v0.1/{accountID}/{rest}`: the account ID as the path carries it. */
const ACCOUNT_PATH = /^\/api\/v0\.1\/([^/]+)\/(.+?)\/?$/;

/** The account ID of an account route's path; null for a path that is not one (`/api/v0.1/x/`). */
export function pathAccountId(pathname: string): string | null {
  return ACCOUNT_PATH.exec(pathname)?.[1] ?? null;
}

export const idOf = (p: Principal): string => (p.kind === "account" ? p.account.id : p.outbound.id);

/** The transform of an account group whose routes take `scheme`. */
export function authenticateCaller(deps: AccountAuthDeps, scheme: AuthScheme) {
  return async ({ request }: { request: Request }): Promise<CallerContext> => {
    const accountId = pathAccountId(new URL(request.url).pathname);
    if (accountId === null) throw new ApiError(404, NO_SUCH_PATH);
    const authorization = request.headers.get("authorization");
    const sessions = authorization === null ? deps.sessions() : null;
    const session = sessions ? await sessions.verdict(request, accountId, scheme) : { kind: "none" as const };
    if (session.kind === "refused") throw session.error;
    let caller: CallerContext;
    if (session.kind === "ok") caller = { principal: session.principal, account: session.principal.account, budget: session.budget };
    else {
      const verdict = authorize(deps.registry, parseAuthorization(authorization), accountId, scheme, isWrite(request.method));
      if (!verdict.ok) {
        if (verdict.status === 401) throw new ApiError(401, unauthorized(scheme), {}, CHALLENGE);
        throw new ApiError(403, forbidden(verdict.reason));
      }
      const rate = rateOf(verdict.principal);
      const owner: RateOwner = { kind: verdict.principal.kind, id: idOf(verdict.principal) };
      const budget = rate ? { limiter: deps.limiter, key: principalKey(verdict.principal), rate, owner } : null;
      caller = { principal: verdict.principal, account: verdict.principal.account, budget };
      if (verdict.principal.kind === "account" && verdict.principal.tokenId) deps.registry.tokenUsed(verdict.principal.tokenId, Date.now());
    }
    exchangeOf(request).accountId = idOf(caller.principal);
    return caller;
  };
}

export type OperatorVerdict = "ok" | 401 | 403;

/** Who called an operator route: the matched token named without revealing it, for logs and the audit. */
export type OperatorContext = { operator: { tokenLabel: string } };

/** An operator token's name in logs: its hash's first 12 hex digits (the hash is not secret, the token is). */
export const operatorTokenLabel = (hash: string): string => `admin_tokens:${hash.replace(/^sha256:/, "").slice(0, 12)}`;

/**
 * An operator route (API.md section 10): a bearer token whose hash is in
 * dashboard.admin_tokens. An account's token or a sending key is known but not an
 * operator's: 403; anything else 401.
 */
export function operatorVerdict(
  authorization: string | null,
  operatorHashes: readonly string[],
  registry: AccountRegistry,
): OperatorVerdict {
  return operatorMatch(authorization, operatorHashes, registry).verdict;
}

function operatorMatch(
  authorization: string | null,
  operatorHashes: readonly string[],
  registry: AccountRegistry,
): { verdict: OperatorVerdict; hash: string | null } {
  const credential = parseAuthorization(authorization);
  if (credential?.type !== "bearer" || credential.secret === "") return { verdict: 401, hash: null };
  const hash = matchingHash(credential.secret, operatorHashes);
  if (hash !== null) return { verdict: "ok", hash };
  return { verdict: registry.principalForSecret(credential.secret) ? 403 : 401, hash: null };
}

/** The dashboard's admin sessions as operators: asked when an operator call has no Authorization header. */
export interface OperatorSessions {
  /** The operator behind the request's cookie; null when it has none; an ApiError when it is refused. */
  operator(req: Request): Promise<OperatorContext["operator"] | null>;
}

/** The transform of the operator group. */
export function authenticateOperator(deps: {
  registry: AccountRegistry;
  operatorHashes(): readonly string[];
  /** null when the dashboard is off: a cookie then opens nothing. */
  sessions(): OperatorSessions | null;
}) {
  return async ({ request }: { request: Request }): Promise<OperatorContext> => {
    const authorization = request.headers.get("authorization");
    const sessions = authorization === null ? deps.sessions() : null;
    const bySession = sessions ? await sessions.operator(request) : null;
    if (bySession) return { operator: bySession };
    const { verdict, hash } = operatorMatch(authorization, deps.operatorHashes(), deps.registry);
    if (verdict === 403) throw new ApiError(403, forbidden("not_operator"));
    if (hash === null) throw new ApiError(401, unauthorized("operator"), {}, { "WWW-Authenticate": 'Bearer realm="postroom"' });
    return { operator: { tokenLabel: operatorTokenLabel(hash) } };
  };
}
