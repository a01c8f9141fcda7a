// What the HTTP listener calls for each request: the one router behind the server's own
// duties. It collapses duplicate slashes, derives the client's address (behind a trusted
// proxy, the one it reported), names the request (X-Request-Id), awaits what middleware
// holds until the answer is made, and writes one log line and one /metrics sample.
import type { Config } from "../config/config.ts";
import { perConfig } from "../config/per-config.ts";
import { isDiskFull, type DiskFullLog } from "../lib/disk-full.ts";
import { randomHex } from "../lib/ids.ts";
import type { Logger } from "../lib/logger.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { clientAddress, trustedProxyRanges } from "./client-address.ts";
import { errorResponse } from "./errors.ts";
import { attachExchange, Exchange } from "./exchange.ts";

/** `peerIp`: the connecting address (none in-process); the client's is derived from it (client-address.ts). */
export type HttpHandler = (req: Request, peerIp?: string) => Promise<Response>;

export interface ServeDeps {
  config(): Config;
  logger: Logger;
  metrics: Metrics;
  diskFull: DiskFullLog;
  /** The router: answers one request. */
  handle(req: Request): Promise<Response>;
  /** The route a request matched, as /metrics labels it (never its raw path). */
  routeOf(method: string, path: string): string;
}

export function collapseSlashes(pathname: string): string {
  return pathname.replace(/\/{2,}/g, "/");
}

/**
 * The URL the router is given, or null when the request's own will do: duplicate slashes
 * collapsed, and a Host shorter than 4 characters ("http://x/healthz") named "localhost",
 * since the router looks for the path from the URL's 11th character on and would cut it
 * there (router.ts). The Host header itself is left as the client sent it.
 */
export function routableUrl(url: URL): URL | null {
  const path = collapseSlashes(url.pathname);
  const shortHost = url.host.length < 4;
  if (path === url.pathname && !shortHost) return null;
  const routable = new URL(url);
  routable.pathname = path;
  if (shortHost) routable.host = "localhost";
  return routable;
}

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

export function serveHttp(deps: ServeDeps): HttpHandler {
  const trustedProxies = perConfig(deps.config, (c) => trustedProxyRanges(c.http.trustedProxies));

  async function answer(req: Request, exchange: Exchange): Promise<Response> {
    let status: number | null = null;
    try {
      const res = await deps.handle(req);
      status = res.status;
      return res;
    } finally {
      // In order, each awaited: the memory is given back before the Idempotency-Key claim is.
      for (const after of exchange.afterAnswer) await after(status);
    }
  }

  return async (incoming, peerIp) => {
    const startedMs = performance.now();
    const remoteIp = clientAddress(peerIp, incoming.headers, trustedProxies());
    const requestId = randomHex(8);
    const url = new URL(incoming.url);
    const routable = routableUrl(url);
    const req = routable ? new Request(routable.toString(), incoming) : incoming;
    const path = (routable ?? url).pathname;
    const exchange = new Exchange(remoteIp, requestId);
    attachExchange(req, exchange);
    let res: Response;
    try {
      res = await answer(req, exchange);
    } catch (err) {
      if (isDiskFull(err)) {
        deps.diskFull.report("api", err);
        res = errorResponse(507);
      } else {
        deps.logger.error("unhandled error in API front", { err, request_id: requestId });
        res = errorResponse(500);
      }
    }
    res.headers.set("X-Request-Id", requestId);
    deps.logger.info("http request", {
      request_id: requestId,
      method: req.method,
      path,
      status: res.status,
      duration_ms: Math.round((performance.now() - startedMs) * 10) / 10,
      account_id: exchange.accountId,
      remote_ip: remoteIp ?? undefined,
      error: await errorSentence(res),
      ...exchange.logFields,
    });
    deps.metrics.httpRequest(req.method, deps.routeOf(req.method, path), res.status, (performance.now() - startedMs) / 1000);
    return res;
  };
}
