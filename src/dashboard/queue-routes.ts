// The admin view's Queue page talks to these: GET /dashboard/api/queue (the summary by
// destination) and POST /dashboard/api/queue/{hold|release|retry|cancel} with a filter.
// The same actions as the operator API (src/api/queue.ts, outbound/queue/queue-actions.ts),
// for an admin session instead of an operator token: an account's session gets 404 (as
// for the System page), a write from another page 403 (cookieWriteAllowed).
import { readBodyCapped } from "../http/body.ts";
import { ApiError, errorResponse } from "../http/errors.ts";
import { FOREIGN_PAGE, NOT_SIGNED_IN } from "../http/refusals.ts";
import type { Logger } from "../lib/logger.ts";
import { isoTime } from "../lib/clock.ts";
import {
  actionLogFields,
  parseFilter,
  QUEUE_ACTIONS,
  type QueueAction,
  type QueueActionDeps,
  runQueueAction,
  type WireFilter,
} from "../outbound/queue/queue-actions.ts";
import { cookieWriteAllowed } from "./session.ts";
import type { SessionAuth } from "./session-auth.ts";

export const DASHBOARD_QUEUE_PATH = "/dashboard/api/queue";
/** A filter is a few short fields: nothing bigger is read. */
const FILTER_MAX_BYTES = 4096;
/** Destinations the page shows at most. */
const SUMMARY_ROWS = 500;
/** Who the log names for an action taken from the dashboard. */
const DASHBOARD_ACTOR = "dashboard admin session";

export interface DashboardQueueDeps {
  auth: SessionAuth;
  logger: Logger;
  queue: QueueActionDeps;
}

const FILTER_FIELDS = ["destination", "outbound_account_id", "message_id", "older_than"] as const;

/** The filter's known fields, each a string (anything else is refused). */
function filterOf(value: unknown): WireFilter | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "the body must be a JSON object";
  const out: WireFilter = {};
  for (const [k, v] of Object.entries(value)) {
    if (!(FILTER_FIELDS as readonly string[]).includes(k)) return `${k}: is not a filter field (${FILTER_FIELDS.join(", ")})`;
    if (typeof v !== "string" || v.length > 255 || /[\x00-\x1f\x7f]/.test(v)) return `${k}: must be one line of at most 255 characters`;
    out[k as keyof WireFilter] = v;
  }
  return out;
}

export async function dashboardQueue(deps: DashboardQueueDeps, req: Request, path: string): Promise<Response> {
  const who = await deps.auth.authenticate(req);
  if (who.kind !== "session") return errorResponse(401, NOT_SIGNED_IN);
  if (who.account !== null) return errorResponse(404);
  const headers = { "Cache-Control": "no-store" };
  if (path === DASHBOARD_QUEUE_PATH) {
    if (req.method !== "GET") return errorResponse(405, undefined, { Allow: "GET" });
    const summary = await deps.queue.repo.summary(SUMMARY_ROWS, deps.queue.nowMs());
    const rows = summary.map((s) => ({
      destination: s.destination,
      queued: s.queued,
      held: s.held,
      paused: s.paused,
      oldest_at: isoTime(s.oldestAtMs),
      last_response: s.lastResponse,
    }));
    return Response.json(rows, { headers });
  }
  const action = path.slice(DASHBOARD_QUEUE_PATH.length + 1) as QueueAction;
  if (!QUEUE_ACTIONS.includes(action)) return errorResponse(404);
  if (req.method !== "POST") return errorResponse(405, undefined, { Allow: "POST" });
  if (!cookieWriteAllowed(req.method, req.headers, new URL(req.url).origin)) return errorResponse(403, FOREIGN_PAGE);
  let body: unknown;
  try {
    body = JSON.parse(
      new TextDecoder().decode(await readBodyCapped(req, FILTER_MAX_BYTES, Number(req.headers.get("content-length") ?? "0"))),
    );
  } catch (err) {
    if (err instanceof ApiError) return errorResponse(err.status, err.message);
    return errorResponse(400, 'the body must be JSON: a filter such as {"destination": "example.com"}');
  }
  const wire = filterOf(body);
  if (typeof wire === "string") return errorResponse(422, wire);
  const filter = parseFilter(wire);
  if (!filter.ok) return errorResponse(422, `${filter.problem.field}: ${filter.problem.rule}`);
  const affected = await runQueueAction(deps.queue, action, filter.value);
  deps.logger.info(`queue ${action}`, actionLogFields(DASHBOARD_ACTOR, wire, affected));
  return Response.json({ affected }, { headers });
}
