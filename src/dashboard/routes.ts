// The dashboard's own URLs, a group of the one router (src/router.ts) with its own
// middleware: its page and assets, and its session (sign in, who am I, sign out).
// Everything else it shows comes from the public API, whose account group accepts the
// session cookie in place of the account's token (session-auth.ts, SessionCallers).
import type { AccountConfig, Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import { RateLimiter, type RateLimits } from "../auth/rate-limit.ts";
import { clientKey } from "../smtp/limits.ts";
import { readBodyCapped } from "../http/body.ts";
import { ApiError, errorResponse } from "../http/errors.ts";
import { FOREIGN_PAGE, NOT_SIGNED_IN, payloadTooLarge, tooManySignIns, UNKNOWN_SIGN_IN_TOKEN } from "../http/refusals.ts";
import { requestRoutes } from "../http/routes.ts";
import { HIDDEN } from "../http/router.ts";
import type { QueueActionDeps } from "../outbound/queue/queue-actions.ts";
import { dashboardAssets } from "./assets.ts";
import { DASHBOARD_QUEUE_PATH, dashboardQueue } from "./queue-routes.ts";
import { cookieWriteAllowed } from "./session.ts";
import type { OperatorSessions, SessionCallers } from "../http/authenticate.ts";
import { SessionAuth, type SessionAuthDeps, sessionCallers, sessionOperators } from "./session-auth.ts";
import { SECURITY_HEADERS, shellHtml } from "./shell.ts";

export const DASHBOARD_PREFIX = "/dashboard";
const SESSION_PATH = "/dashboard/session";
const SYSTEM_PATH = "/dashboard/system";
const ASSET_PATH = /^\/dashboard\/assets\/([A-Za-z0-9._-]+)$/;
/** Keys (client IPs signing in, sessions calling the API) counted at once; the oldest is forgotten past it. */
export const DASHBOARD_RATE_KEYS = 10_000;
/** A sign-in body holds one token: nothing bigger is read. */
const SIGN_IN_MAX_BYTES = 4096;

export interface DashboardDeps {
  config(): Config;
  clock: Clock;
  logger: Logger;
  auth: SessionAuth;
  /** Counts sign-in attempts per client IP (dashboard.sign_in_rate) and API calls per session (dashboard.rate_limit). */
  limiter: RateLimits;
  /** What the admin view's System page shows (health, certificate, listeners, queue, version). */
  system(): Promise<Record<string, unknown>>;
  /** Its sessions as callers of the account API (the router's account group takes them). */
  callers: SessionCallers;
  /** Its admin sessions as operators (the router's operator group takes them). */
  operators: OperatorSessions;
  /** The Queue page's actions (admin sessions only); none in tests that build no queue. */
  queue?: QueueActionDeps;
}

/** The dashboard's routes, as /metrics labels them. */
export const DASHBOARD_ROUTES = [
  { method: "GET", path: "/" },
  { method: "GET", path: "/dashboard/*" },
  { method: "GET", path: "/dashboard/assets/:name" },
  { method: "ALL", path: "/dashboard/session" },
  { method: "GET", path: "/dashboard/system" },
  { method: "GET", path: DASHBOARD_QUEUE_PATH },
  { method: "POST", path: `${DASHBOARD_QUEUE_PATH}/:action` },
];

const withHeaders = (res: Response, headers: Record<string, string>): Response => {
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  return res;
};

/**
 * The dashboard's routes (its group's middleware: http/groups.ts). Each answers its exact
 * path only: the router also hands it the path with a trailing slash, which is the page's
 * (the app routes in the browser).
 */
export function dashboardRoutes(deps: DashboardDeps) {
  const exactly = (req: Request, path: string): boolean => new URL(req.url).pathname === path;
  return requestRoutes("dashboard")
    .all("/", () => redirect("/dashboard/"), HIDDEN)
    .all("/dashboard", ({ request }) => (exactly(request, DASHBOARD_PREFIX) ? redirect("/dashboard/") : page(request)), HIDDEN)
    .all(
      SESSION_PATH,
      async ({ request, remoteIp }) =>
        exactly(request, SESSION_PATH)
          ? withHeaders(await session(deps, request, remoteIp), { "Cache-Control": "no-store" })
          : page(request),
      HIDDEN,
    )
    .all(
      SYSTEM_PATH,
      ({ request }) => (exactly(request, SYSTEM_PATH) && request.method === "GET" ? system(deps, request) : page(request)),
      HIDDEN,
    )
    .all(DASHBOARD_QUEUE_PATH, ({ request }) => queue(deps, request), HIDDEN)
    .all(`${DASHBOARD_QUEUE_PATH}/:action`, ({ request }) => queue(deps, request), HIDDEN)
    .all("/dashboard/assets/:name", ({ request }) => asset(request), HIDDEN)
    .all("/dashboard/*", ({ request }) => page(request), HIDDEN);
}

/** The system is the operator's: admin sessions only (an account's session gets 404, as for another account's resource). */
async function system(deps: DashboardDeps, req: Request): Promise<Response> {
  const who = await deps.auth.authenticate(req);
  if (who.kind !== "session") return errorResponse(401, NOT_SIGNED_IN);
  if (who.account !== null) return errorResponse(404);
  return withHeaders(Response.json(await deps.system()), { "Cache-Control": "no-store" });
}

async function queue(deps: DashboardDeps, req: Request): Promise<Response> {
  if (!deps.queue) return errorResponse(404);
  const res = await dashboardQueue({ auth: deps.auth, logger: deps.logger, queue: deps.queue }, req, new URL(req.url).pathname);
  return withHeaders(res, { "Cache-Control": "no-store" });
}

async function asset(req: Request): Promise<Response> {
  const name = ASSET_PATH.exec(new URL(req.url).pathname)?.[1];
  if (name === undefined || (req.method !== "GET" && req.method !== "HEAD")) return page(req);
  const file = (await dashboardAssets()).files.get(name);
  if (!file) return errorResponse(404);
  // The names carry a hash of the content: a new build has new names.
  return withHeaders(
    new Response(file.body, { headers: { "Content-Type": file.contentType, "Cache-Control": "public, max-age=31536000, immutable" } }),
    SECURITY_HEADERS,
  );
}

/** The page, the same for every other dashboard URL (GET and HEAD only). */
async function page(req: Request): Promise<Response> {
  if (req.method !== "GET" && req.method !== "HEAD") return errorResponse(405, undefined, { Allow: "GET, HEAD" });
  const assets = await dashboardAssets();
  const html = new Response(shellHtml(assets.scripts, assets.styles), {
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" },
  });
  return withHeaders(html, SECURITY_HEADERS);
}

function redirect(location: string): Response {
  return new Response(null, { status: 302, headers: { Location: location } });
}

async function session(deps: DashboardDeps, req: Request, remoteIp: string | null): Promise<Response> {
  const origin = new URL(req.url).origin;
  if (req.method === "GET") {
    const who = await deps.auth.authenticate(req);
    if (who.kind !== "session")
      return errorResponse(401, NOT_SIGNED_IN, who.kind === "ended" ? { "Set-Cookie": deps.auth.clearCookie() } : {});
    return Response.json(
      sessionBody(deps.config(), who.account ? [who.account] : deps.auth.accounts(), who.account === null, who.session.expiresAtMs),
    );
  }
  if (!cookieWriteAllowed(req.method, req.headers, origin)) {
    return errorResponse(403, FOREIGN_PAGE);
  }
  if (req.method === "DELETE") {
    deps.logger.info("dashboard sign-out", { remote_ip: remoteIp ?? undefined });
    return new Response(null, { status: 204, headers: { "Set-Cookie": await deps.auth.signOut(req) } });
  }
  if (req.method !== "POST") return errorResponse(405, undefined, { Allow: "GET, POST, DELETE" });
  return signIn(deps, req, remoteIp);
}

async function signIn(deps: DashboardDeps, req: Request, remoteIp: string | null): Promise<Response> {
  const rate = deps.config().dashboard.signInRate;
  if (rate) {
    // Per client: its address as http/serve.ts derived it (behind a trusted proxy, the one
    // the proxy reported), an IPv6 client by its /64 as SMTP counts it. Only in-process
    // calls have none.
    const decision = await deps.limiter.take(`sign-in:${remoteIp === null ? "unknown" : clientKey(remoteIp)}`, rate, deps.clock.nowMs());
    if (!decision.allowed) {
      deps.logger.info("dashboard sign-in refused: too many attempts", { remote_ip: remoteIp ?? undefined });
      return errorResponse(429, tooManySignIns(rate, decision.resetSeconds), { "Retry-After": String(decision.resetSeconds) });
    }
  }
  let token: unknown;
  try {
    const declared = Number(req.headers.get("content-length") ?? "0");
    if (declared > SIGN_IN_MAX_BYTES) return errorResponse(413, payloadTooLarge(SIGN_IN_MAX_BYTES, null));
    const text = new TextDecoder().decode(await readBodyCapped(req, SIGN_IN_MAX_BYTES, declared));
    token = (JSON.parse(text) as { token?: unknown }).token;
  } catch (err) {
    if (err instanceof ApiError) return errorResponse(err.status, err.message);
    return errorResponse(400, 'the body must be JSON: {"token": "<API token>"}');
  }
  if (typeof token !== "string" || token.trim() === "") return errorResponse(422, "token: enter an API token");
  const opened = await deps.auth.signIn(token.trim());
  if (!opened) {
    deps.logger.info("dashboard sign-in refused: unknown token", { remote_ip: remoteIp ?? undefined });
    return errorResponse(401, UNKNOWN_SIGN_IN_TOKEN);
  }
  deps.logger.info(opened.account ? "dashboard sign-in" : "dashboard admin sign-in", {
    account_id: opened.account?.id,
    remote_ip: remoteIp ?? undefined,
  });
  const accounts = opened.account ? [opened.account] : deps.auth.accounts();
  return Response.json(sessionBody(deps.config(), accounts, opened.account === null, opened.expiresAtMs), {
    status: 201,
    headers: { "Set-Cookie": opened.setCookie },
  });
}

/**
 * What the dashboard learns of its session: the accounts it may open (its own; every
 * account for an admin session) with their outbound account IDs (the SMTP usernames),
 * where SMTP submission listens, when it ends. Never a secret: keys are hashes.
 */
const sessionBody = (config: Config, accounts: readonly AccountConfig[], admin: boolean, expiresAtMs: number) => ({
  admin,
  accounts: accounts.map((a) => ({
    id: a.id,
    name: a.name,
    outbound_account_ids: a.outbound.map((o) => o.id),
  })),
  smtp: {
    host: config.hostname,
    submission_port: config.smtp.submissionListen?.port ?? null,
    submission_tls_port: config.smtp.submissionTlsListen?.port ?? null,
    /** STARTTLS is offered on the submission port once there is a certificate. */
    starttls: config.tls.mode !== "off",
    /** Whether AUTH is taken without TLS (smtp.allow_insecure_auth), so the SMTP page says what is true. */
    allow_insecure_auth: config.smtp.allowInsecureAuth,
    /** Where mail comes in (the getting-started checklist's swaks line); null when inbound SMTP is off. */
    inbound_port: config.smtp.inboundListen?.port ?? null,
    /** The host to send to on that port: the listen address, or the hostname when it listens on every address. */
    inbound_host: inboundHost(config),
  },
  /** outbound.sending_ips = []: no SPF record is offered, so no sending domain can verify (shown on the overview and domain pages). */
  sending_ips_empty: config.outbound.sendingIps.length === 0,
  expires_at: new Date(expiresAtMs).toISOString(),
});

/**
 * The dashboard's parts, built from what the app has. `limiter`: where its limits count; by
 * default this node's memory, on PostgreSQL the database's (createPgRateLimits) so that an
 * attacker trying tokens on every node is held to one sign_in_rate.
 */
export function dashboardDeps(
  deps: Omit<SessionAuthDeps, "logger"> & {
    logger: Logger;
    system: DashboardDeps["system"];
    limiter?: RateLimits;
    queue?: QueueActionDeps;
  },
): DashboardDeps {
  const logger = deps.logger.child({ component: "dashboard" });
  const auth = new SessionAuth({ config: deps.config, registry: deps.registry, clock: deps.clock, logger, sessions: deps.sessions });
  const limiter = deps.limiter ?? new RateLimiter(DASHBOARD_RATE_KEYS);
  return {
    config: deps.config,
    clock: deps.clock,
    logger,
    auth,
    limiter,
    system: deps.system,
    callers: sessionCallers(auth, limiter, deps.config),
    operators: sessionOperators(auth),
    queue: deps.queue,
  };
}

/** Where a first message is sent in from this machine: the inbound listener's own address, or the hostname behind a wildcard. */
function inboundHost(config: Config): string {
  const host = config.smtp.inboundListen?.host ?? "";
  if (host === "" || host === "0.0.0.0" || host === "::" || host === "[::]") return config.hostname;
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
