// The router's groups of routes and the middleware each runs, in order, before its routes'
// handlers: the one place that says which routes need which credential, which budget,
// which body cap (src/router.ts builds the groups from it; docs/architecture.md, HTTP).

/** A middleware, by what it does; src/router.ts holds each one's implementation. */
export type MiddlewareName =
  /** The account's management token (Bearer or Basic), or the dashboard's session cookie (http/authenticate.ts). */
  | "account-token"
  /** The outbound account's sending key (smtpAuth), E11. */
  | "sending-key"
  /** An operator token (dashboard.admin_tokens), API.md section 10. */
  | "operator-token"
  /** 404 while dashboard.enabled is false. */
  | "dashboard-enabled"
  /** The caller's budget: RateLimit-* headers, 429 past it (http/rate-limit.ts). */
  | "rate-limit"
  /** A JSON body under http.max_body and http.max_json_depth (http/json-body.ts). */
  | "json-body"
  /** E11's body: Idempotency-Key claim, memory reservation, E11's own cap (api/send-body.ts). */
  | "send-body"
  /** No NUL in a path or query parameter (http/parameter-checks.ts). */
  | "parameter-text";

export type GroupName = "public" | "metrics" | "dashboard" | "operator" | "send" | "account";

export interface GroupPlan {
  /** Where its routes are; `:accountId` is the account (or outbound account) the path names. */
  prefix: string;
  middleware: readonly MiddlewareName[];
  /** Whether any other path under the prefix is 404 once the middleware has run (so 401 before 404). */
  catchAll: boolean;
}

export const API_PREFIX = "/api/v0.1";

export const GROUPS: Readonly<Record<GroupName, GroupPlan>> = {
  // Health, the API's description, tracking links, unsubscribe, attachments: their signed
  // token (or nothing) is the credential, and they take no JSON body.
  public: { prefix: "", middleware: ["parameter-text"], catchAll: false },
  // Its own token, checked by its one route: a scraper's credential opens nothing else.
  metrics: { prefix: "", middleware: [], catchAll: false },
  // Its session is checked by each route that needs one; its sign-in reads its own small body.
  dashboard: { prefix: "", middleware: ["dashboard-enabled"], catchAll: false },
  operator: { prefix: `${API_PREFIX}/operator`, middleware: ["operator-token", "json-body", "parameter-text"], catchAll: true },
  send: { prefix: `${API_PREFIX}/:accountId`, middleware: ["sending-key", "rate-limit", "send-body", "parameter-text"], catchAll: false },
  account: {
    prefix: `${API_PREFIX}/:accountId`,
    middleware: ["account-token", "rate-limit", "json-body", "parameter-text"],
    catchAll: true,
  },
};

export const AUTHENTICATION: ReadonlySet<MiddlewareName> = new Set(["account-token", "sending-key", "operator-token"]);
const READS_BODY: ReadonlySet<MiddlewareName> = new Set(["json-body", "send-body"]);
const NEEDS_CALLER: ReadonlySet<MiddlewareName> = new Set(["rate-limit", "send-body"]);

/**
 * What must hold of a group's middleware, or a sentence saying what does not: a body is read
 * only after authentication, a budget needs a caller, one body reader at most.
 */
export function planProblem(plan: GroupPlan): string | null {
  const firstAuth = plan.middleware.findIndex((m) => AUTHENTICATION.has(m));
  const readers = plan.middleware.filter((m) => READS_BODY.has(m));
  if (readers.length > 1) return `reads its body twice (${readers.join(", ")})`;
  for (const [i, m] of plan.middleware.entries()) {
    if (READS_BODY.has(m) && (firstAuth < 0 || firstAuth > i)) return `${m} reads the body before authentication`;
    if (NEEDS_CALLER.has(m) && (firstAuth < 0 || firstAuth > i)) return `${m} runs without a caller`;
  }
  if (plan.middleware.filter((m) => AUTHENTICATION.has(m)).length > 1) return "authenticates twice";
  return null;
}
