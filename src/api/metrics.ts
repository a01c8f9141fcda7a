// GET /metrics (beyond): Prometheus text for the operator, behind its own token so a
// scraper's credential grants nothing else. Its own group: no account, no body.
import { Elysia } from "elysia";
import { parseAuthorization } from "../auth/authenticate.ts";
import { secretMatchesAny } from "../auth/secrets.ts";
import type { Config } from "../config/config.ts";
import { errorResponse } from "../http/errors.ts";
import { HIDDEN } from "../http/router.ts";
import type { Metrics } from "../metrics/metrics.ts";

export const METRICS_PATH = "/metrics";

/** GET /metrics: 404 when no token is configured, 401 without the right one. */
export async function metricsResponse(metrics: Metrics, tokenHash: string | null, authorization: string | null): Promise<Response> {
  if (tokenHash === null) return errorResponse(404, "Not Found: /metrics is off; set http.metrics_token to turn it on");
  const credential = parseAuthorization(authorization);
  if (credential?.type !== "bearer" || !secretMatchesAny(credential.secret, [tokenHash])) {
    return errorResponse(401, "Unauthorized: /metrics takes the metrics token (http.metrics_token, as Authorization: Bearer <token>)", {
      "WWW-Authenticate": 'Bearer realm="postroom metrics"',
    });
  }
  return new Response(await metrics.scrape(), { headers: { "content-type": metrics.contentType } });
}

export function metricsRoutes(deps: { config(): Config; metrics: Metrics }) {
  return new Elysia({ name: "metrics" }).get(
    METRICS_PATH,
    ({ request }) => metricsResponse(deps.metrics, deps.config().http.metricsTokenHash, request.headers.get("authorization")),
    HIDDEN,
  );
}
