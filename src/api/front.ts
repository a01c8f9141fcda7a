// The front of the HTTP API, run for every request before Elysia routes it: collapses
// duplicate slashes, authenticates and authorises account paths, applies rate limits,
// reads the JSON body under its size cap, adds the RateLimit-* headers and writes one
// log line. Doing this first means no unauthenticated request gets its body read.
import { authorize, parseAuthorization, type AuthScheme } from "../auth/authenticate.ts";
import type { Principal } from "../auth/accounts.ts";
import type { Config } from "../config/config.ts";
import { isDiskFull } from "../lib/disk-full.ts";
import { randomHex } from "../lib/ids.ts";
import type { LogFields } from "../lib/logger.ts";
import { garbageMade, LARGE_MESSAGE_BYTES } from "../lib/gc-pacer.ts";
import { costOf, MEMORY_RETRY_AFTER_S, type MessageCost, type Reservation } from "../lib/memory-budget.ts";
import type { ApiDeps } from "./deps.ts";
import type { ElysiaApp } from "./elysia-app.ts";
import { OPENAPI_PATH } from "./paths.ts";
import { parseJsonBody, readBodyCapped } from "./body.ts";
import { ApiError, errorResponse } from "./errors.ts";
import { principalKey, rateOf, type RateDecision, type RateLimits } from "../lib/rate-limit.ts";
import { IdempotentRequest } from "./idempotent-request.ts";
import { setRequestState } from "./request-state.ts";
import { METRICS_PATH, metricsResponse } from "./metrics.ts";
import { DASHBOARD_ROUTES, handleDashboard, isDashboardPath } from "../dashboard/routes.ts";
import { cookieApiVerdict } from "../dashboard/session-auth.ts";
import { routeMatcher } from "../metrics/labels.ts";
import { perConfig } from "../config/per-config.ts";
import { clientAddress, trustedProxyRanges } from "./client-address.ts";

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);
const ACCOUNT_PATH = /^\/api\/v0\.1\/([^/]+)\/(.+?)\/?$/;
const PUBLIC_API_PATHS = new Set([OPENAPI_PATH]);

/** Every operation uses the management token except E11, which takes the sending key. */
export function schemeFor(method: string, subPath: string): AuthScheme {
  return method === "POST" && subPath === "messages" ? "smtpAuth" : "bearerAPIToken";
}

/** E11 carries whole messages (Base64 attachments inflate them by 4/3): its cap follows outbound.max_size. */
export function bodyLimitFor(scheme: AuthScheme, config: Config): number {
  return scheme === "smtpAuth" ? Math.ceil((config.outbound.maxSizeBytes * 4) / 3) + 256 * 1024 : config.http.maxBodyBytes;
}

/**
 * What an E11 request holds at its peak until its message is queued, as a multiple of its
 * body's size (measured with bench:memory, bench/RESULTS.md: 3.2 with six 10 MB sends in
 * flight, more with fewer): the body, its text and the parsed JSON while it is parsed; then
 * the decoded attachments and the composed message (built from the composer's chunks, and
 * copied by SQLite as it is stored), and what the collector has not taken yet.
 */
export const API_MESSAGE_COST: MessageCost = { copies: 4, fixedBytes: 64 * 1024 };

export function collapseSlashes(pathname: string): string {
  return pathname.replace(/\/{2,}/g, "/");
}

const idOf = (p: Principal): string => (p.kind === "account" ? p.account.id : p.outbound.id);

function rateHeaders(d: RateDecision): Record<string, string> {
  return { "RateLimit-Limit": String(d.limit), "RateLimit-Remaining": String(d.remaining), "RateLimit-Reset": String(d.resetSeconds) };
}

/** `peerIp`: the connecting address (none in-process); the client's is derived from it (client-address.ts). */
export type ApiHandler = (req: Request, peerIp?: string) => Promise<Response>;

/**
 * The sentence of an error answer ({status, error}), for the request's log line. Error
 * sentences name the field and the rule, never a credential or a body; only error answers
 * (small, and rarer than the rest) are read again.
 */
async function errorSentence(res: Response): Promise<string | undefined> {
  if (res.status < 400 || !res.headers.get("content-type")?.includes("json")) return undefined;
  try {
    const body = (await res.clone().json()) as { error?: unknown };
    return typeof body.error === "string" ? body.error : undefined;
  } catch {
    return undefined;
  }
}

/** `limiter` is shared with SMTP submission: one send budget per outbound account. */
export function createApiHandler(deps: ApiDeps, app: ElysiaApp, limiter: RateLimits): ApiHandler {
  // Requests are counted by the route they match, never by their path (/metrics).
  const routeOf = routeMatcher([...app.routes, { method: "GET", path: METRICS_PATH }, ...DASHBOARD_ROUTES]);
  const trustedProxies = perConfig(deps.config, (c) => trustedProxyRanges(c.http.trustedProxies));
  const idempotencyDeps = {
    repo: deps.send.idempotency,
    nowMs: () => deps.clock.nowMs(),
    keepMs: () => deps.config().retention.keepMs.idempotency_keys,
  };

  async function route(
    req: Request,
    remoteIp: string | null,
    requestId: string,
    logFields: LogFields,
  ): Promise<{ res: Response; principal: Principal | null; extraHeaders: Record<string, string> }> {
    const url = new URL(req.url);
    if (url.pathname === METRICS_PATH && req.method === "GET") {
      return {
        res: await metricsResponse(deps.metrics, deps.config().http.metricsTokenHash, req.headers.get("authorization")),
        principal: null,
        extraHeaders: {},
      };
    }
    if (deps.config().dashboard.enabled && isDashboardPath(url.pathname)) {
      return { res: await handleDashboard(deps.dashboard, req, remoteIp), principal: null, extraHeaders: {} };
    }
    const m = ACCOUNT_PATH.exec(url.pathname);
    if (!m || PUBLIC_API_PATHS.has(url.pathname)) {
      setRequestState(req, { principal: null, body: null, remoteIp, requestId, logFields });
      return { res: await app.handle(req), principal: null, extraHeaders: {} };
    }

    const scheme = schemeFor(req.method, m[2]!);
    const authorization = req.headers.get("authorization");
    // The dashboard calls the API with its session cookie instead of a token.
    const cookie =
      authorization === null && deps.config().dashboard.enabled
        ? await cookieApiVerdict(deps.dashboard.auth, req, m[1]!, scheme)
        : { kind: "none" as const };
    if (cookie.kind === "refused") return { res: cookie.res, principal: null, extraHeaders: {} };
    let principal: Principal;
    if (cookie.kind === "ok") principal = cookie.principal;
    else {
      const verdict = authorize(deps.registry, parseAuthorization(authorization), m[1]!, scheme);
      if (!verdict.ok) {
        const challenge: Record<string, string> =
          verdict.status === 401 ? { "WWW-Authenticate": 'Bearer realm="postroom", Basic realm="postroom"' } : {};
        return { res: errorResponse(verdict.status, undefined, challenge), principal: null, extraHeaders: {} };
      }
      principal = verdict.principal;
    }
    let extraHeaders: Record<string, string> = {};
    // A dashboard session has its own budget (dashboard.rate_limit), apart from the account's integrations.
    const rate = cookie.kind === "ok" ? deps.config().dashboard.rateLimit : rateOf(principal);
    if (rate) {
      const decision = await (cookie.kind === "ok"
        ? deps.dashboard.limiter.take(cookie.rateKey, rate, deps.clock.nowMs())
        : limiter.take(principalKey(principal), rate, deps.clock.nowMs()));
      extraHeaders = rateHeaders(decision);
      if (!decision.allowed) {
        return { res: errorResponse(429, undefined, { "Retry-After": String(decision.resetSeconds) }), principal, extraHeaders };
      }
    }
    // E11 with an Idempotency-Key: the key is claimed (or found answered) before the body is read.
    const keyed = scheme === "smtpAuth" ? await IdempotentRequest.begin(req, idOf(principal), idempotencyDeps) : null;
    if (keyed && "refused" in keyed) return { res: keyed.refused, principal, extraHeaders };
    const idempotent = keyed?.request ?? null;
    let answered: number | null = null;
    let body: unknown = null;
    // E11 carries a whole message: it reserves its memory before its body is read, and
    // holds it until the message is queued (or refused).
    let reservation: Reservation | null = null;
    try {
      if (METHODS_WITH_BODY.has(req.method)) {
        const limitBytes = bodyLimitFor(scheme, deps.config());
        const declared = Number(req.headers.get("content-length") ?? "0");
        if (declared > limitBytes) return { res: errorResponse(413), principal, extraHeaders };
        if (scheme === "smtpAuth") {
          const expected = req.headers.has("content-length") && Number.isSafeInteger(declared) && declared >= 0 ? declared : limitBytes;
          reservation = deps.budget.reserve(costOf(API_MESSAGE_COST, expected), "api");
          if (!reservation) {
            deps.logger.info("send deferred: memory budget full", { outbound_account_id: idOf(principal), bytes: expected });
            return {
              res: errorResponse(503, "insufficient system resources, try again later", { "Retry-After": String(MEMORY_RETRY_AFTER_S) }),
              principal,
              extraHeaders,
            };
          }
        }
        try {
          const bytes = await readBodyCapped(req, limitBytes, declared);
          const replay = idempotent?.answerFor(bytes);
          if (replay) return { res: replay, principal, extraHeaders };
          body = parseJsonBody(bytes, deps.config().http.maxJsonDepth);
          // The body's bytes and text are garbage once parsed: a large one's count.
          if (reservation && declared > LARGE_MESSAGE_BYTES) garbageMade(2 * declared);
        } catch (err) {
          if (err instanceof ApiError) return { res: errorResponse(err.status, err.message), principal, extraHeaders };
          throw err;
        }
      }
      setRequestState(req, { principal, body, remoteIp, requestId, logFields, idempotent });
      const res = await app.handle(req);
      answered = res.status;
      return { res, principal, extraHeaders };
    } finally {
      if (reservation) {
        // The body, its text, the parsed JSON and the composer's work are garbage now.
        const bytes = Number(req.headers.get("content-length") ?? "0");
        if (bytes > LARGE_MESSAGE_BYTES) garbageMade(API_MESSAGE_COST.copies * bytes);
        reservation.release();
      }
      // Last: the memory is given back even if the store fails to give up the claim.
      await idempotent?.finish(answered);
    }
  }

  return async (incoming, peerIp) => {
    const startedMs = performance.now();
    const remoteIp = clientAddress(peerIp, incoming.headers, trustedProxies());
    const requestId = randomHex(8);
    let req = incoming;
    const url = new URL(incoming.url);
    const path = collapseSlashes(url.pathname);
    if (path !== url.pathname) {
      url.pathname = path;
      req = new Request(url.toString(), incoming);
    }
    const logFields: LogFields = {};
    let result: Awaited<ReturnType<typeof route>>;
    try {
      result = await route(req, remoteIp, requestId, logFields);
    } catch (err) {
      if (isDiskFull(err)) {
        deps.diskFull.report("api", err);
        result = { res: errorResponse(507), principal: null, extraHeaders: {} };
      } else {
        deps.logger.error("unhandled error in API front", { err, request_id: requestId });
        result = { res: errorResponse(500), principal: null, extraHeaders: {} };
      }
    }
    const { res, principal, extraHeaders } = result;
    for (const [k, v] of Object.entries(extraHeaders)) res.headers.set(k, v);
    res.headers.set("X-Request-Id", requestId);
    deps.logger.info("http request", {
      request_id: requestId,
      method: req.method,
      path,
      status: res.status,
      duration_ms: Math.round((performance.now() - startedMs) * 10) / 10,
      account_id: principal ? idOf(principal) : undefined,
      remote_ip: remoteIp ?? undefined,
      error: await errorSentence(res),
      ...logFields,
    });
    deps.metrics.httpRequest(req.method, routeOf(req.method, path), res.status, (performance.now() - startedMs) / 1000);
    return res;
  };
}
