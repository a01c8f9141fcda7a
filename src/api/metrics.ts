// GET /metrics (beyond): Prometheus text for the operator, behind its own token so a
// scraper's credential grants nothing else. Answered by the front, outside the account API.
import { parseAuthorization } from "../auth/authenticate.ts";
import { secretMatchesAny } from "../auth/secrets.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { errorResponse } from "./errors.ts";

export const METRICS_PATH = "/metrics";

/** GET /metrics: 404 when no token is configured, 401 without the right one. */
export async function metricsResponse(metrics: Metrics, tokenHash: string | null, authorization: string | null): Promise<Response> {
  if (tokenHash === null) return errorResponse(404);
  const credential = parseAuthorization(authorization);
  if (credential?.type !== "bearer" || !secretMatchesAny(credential.secret, [tokenHash])) {
    return errorResponse(401, undefined, { "WWW-Authenticate": 'Bearer realm="postroom metrics"' });
  }
  return new Response(await metrics.scrape(), { headers: { "content-type": metrics.contentType } });
}
