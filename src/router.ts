// The one HTTP router: every group of routes with the middleware http/groups.ts gives it,
// built on the root of http/router.ts from the features' route modules, each given only
// what it uses. The server's own duties (client address, request id, log line) are
// http/serve.ts's; docs/architecture.md (HTTP) draws the whole.
import { type AnyElysia, Elysia } from "elysia";
import { addressTestRoutes } from "./api/address-test.ts";
import { addressRoutes } from "./api/addresses.ts";
import { attachmentRoutes } from "./api/attachments.ts";
import { customDomainRoutes } from "./api/custom-domains.ts";
import { destinationRoutes } from "./api/destinations.ts";
import type { ApiDeps } from "./api/deps.ts";
import { healthRoutes } from "./api/health.ts";
import { incomingStatusRoutes } from "./api/incoming-statuses.ts";
import { keptMessageRoutes } from "./api/kept-messages.ts";
import { messageRoutes } from "./api/messages.ts";
import { messageBatchRoutes } from "./api/messages-batch.ts";
import { METRICS_PATH, metricsRoutes } from "./api/metrics.ts";
import { buildOpenApiDocument } from "./api/openapi.ts";
import { outboundMessageActionRoutes } from "./api/outbound-message-actions.ts";
import { outboundMessageRoutes } from "./api/outbound-messages.ts";
import { operatorAccountRoutes } from "./api/operator-accounts.ts";
import { operatorAuditRoutes } from "./api/operator-audit.ts";
import { operatorCredentialRoutes } from "./api/operator-credentials.ts";
import { outboundMessageScheduleRoutes } from "./api/outbound-message-schedule.ts";
import { OPENAPI_PATH } from "./api/paths.ts";
import { sendBody } from "./api/send-body.ts";
import { sendingDomainRoutes } from "./api/sending-domains.ts";
import { sendingHealthRoutes } from "./api/sending-health.ts";
import { statsRoutes } from "./api/stats.ts";
import { suppressionRoutes } from "./api/suppressions.ts";
import { queueRoutes } from "./api/queue.ts";
import { inboundQueueRoutes } from "./api/inbound-queue.ts";
import { trackingRoutes } from "./api/tracking.ts";
import { unsubscribeRoutes } from "./api/unsubscribe.ts";
import { webhookRoutes } from "./api/webhook.ts";
import { webhookEndpointRoutes } from "./api/webhook-endpoints.ts";
import { DASHBOARD_ROUTES, type DashboardDeps, dashboardRoutes } from "./dashboard/routes.ts";
import { authenticateCaller, authenticateOperator } from "./http/authenticate.ts";
import { ApiError } from "./http/errors.ts";
import { GROUPS, type GroupName, type GroupPlan, type MiddlewareName } from "./http/groups.ts";
import { jsonBody } from "./http/json-body.ts";
import { limitRate } from "./http/rate-limit.ts";
import { checkParameterText, createRouter, HIDDEN, notFound } from "./http/router.ts";
import type { RateLimits } from "./auth/rate-limit.ts";
import { routeMatcher } from "./metrics/labels.ts";

export interface RouterDeps extends ApiDeps {
  /** The dashboard's page, assets and sessions (the account group takes its session cookie). */
  dashboard: DashboardDeps;
  /** Where account calls and sends are counted; shared with SMTP submission (one send budget per outbound account). */
  calls: RateLimits;
  /** Postroom's version: the API's document, the unsubscribe relay's User-Agent. */
  version: string;
}

type Middleware = (group: AnyElysia) => AnyElysia;

// The groups are built from a table, so Elysia cannot infer their context: each middleware
// states what it reads, and what it derives is typed for the routes by api/context.ts.
// Handed to Elysia as they are (no wrapper): Elysia reads each hook's parameters to learn
// what of the request to prepare (query, headers), and a wrapper taking the whole context
// would make it prepare everything for every request.
type Hook<R> = (context: Record<string, unknown>) => Promise<R>;
const derive =
  <C, R extends Record<string, unknown>>(fn: (ctx: C) => R | Promise<R>): Middleware =>
  (g) =>
    g.derive(fn as unknown as Hook<R>);
const transform =
  <C>(fn: (ctx: C) => unknown): Middleware =>
  (g) =>
    g.onTransform(fn as unknown as Hook<void>);

/** Each middleware of http/groups.ts, made from the app's parts. */
function middlewareOf(deps: RouterDeps): Record<MiddlewareName, Middleware> {
  const callers = {
    registry: deps.registry,
    limiter: deps.calls,
    // The dashboard calls the API with its session cookie instead of a token, while it is on.
    sessions: () => (deps.config().dashboard.enabled ? deps.dashboard.callers : null),
  };
  const idempotency = {
    repo: deps.send.idempotency,
    nowMs: () => deps.clock.nowMs(),
    keepMs: () => deps.config().retention.keepMs.idempotency_keys,
  };
  return {
    "account-token": derive(authenticateCaller(callers, "bearerAPIToken")),
    "sending-key": derive(authenticateCaller(callers, "smtpAuth")),
    "operator-token": derive(
      authenticateOperator({
        registry: deps.registry,
        operatorHashes: () => deps.config().dashboard.adminTokenHashes,
        sessions: () => (deps.config().dashboard.enabled ? deps.dashboard.operators : null),
      }),
    ),
    "dashboard-enabled": transform(() => {
      if (!deps.config().dashboard.enabled) throw new ApiError(404, "Not Found: the dashboard is off (dashboard.enabled)");
    }),
    "rate-limit": transform(limitRate(() => deps.clock.nowMs())),
    "json-body": transform(jsonBody(deps.config)),
    "send-body": derive(sendBody({ config: deps.config, logger: deps.logger, budget: deps.budget, idempotency })),
    "parameter-text": transform(checkParameterText),
  };
}

export function buildRouter(deps: RouterDeps) {
  const middleware = middlewareOf(deps);
  /** A group's routes behind its middleware; `part` names one of several mounts of a group. */
  const group = (name: GroupName, routes: Middleware, part = "routes"): AnyElysia =>
    new Elysia({ name: `group:${name}:${part}` }).group(GROUPS[name].prefix, (g) =>
      routes(GROUPS[name].middleware.reduce((inner: AnyElysia, m) => middleware[m](inner), g)),
    );
  const publicGroup = group("public", (g) =>
    g
      .use(healthRoutes(deps))
      .use(attachmentRoutes(deps.localAttachments, deps.clock))
      .use(
        trackingRoutes({
          outbound: deps.outbound,
          clock: deps.clock,
          key: deps.trackingKey,
          linkTtlMs: () => deps.config().outbound.trackingLinkTtlMs,
        }),
      )
      .use(
        unsubscribeRoutes({
          config: deps.config,
          registry: deps.registry,
          resolver: deps.resolver,
          clock: deps.clock,
          logger: deps.logger,
          key: deps.trackingKey,
          userAgent: `Postroom/${deps.version}`,
        }),
      ),
  );
  // The account's routes in two mounts around E11's, in the order the API's document lists them.
  const apiGroups = [
    publicGroup,
    group(
      "account",
      (g) =>
        g
          .use(addressRoutes(deps))
          .use(addressTestRoutes(deps))
          .use(incomingStatusRoutes(deps))
          .use(keptMessageRoutes(deps))
          .use(inboundQueueRoutes(deps))
          .use(customDomainRoutes(deps)),
      "inbound",
    ),
    group("send", (g) => g.use(messageRoutes(deps.send, deps.logger)).use(messageBatchRoutes(deps.send, deps.logger))),
    // The operator's routes (API.md section 10), each module one .use here.
    group("operator", (g) =>
      g
        .use(operatorAccountRoutes(deps))
        .use(operatorCredentialRoutes(deps))
        .use(operatorAuditRoutes(deps))
        .use(sendingHealthRoutes(deps))
        .use(queueRoutes(deps))
        .use(destinationRoutes(deps)),
    ),
    group(
      "account",
      (g) =>
        g
          .use(outboundMessageRoutes(deps))
          .use(outboundMessageActionRoutes(deps))
          .use(outboundMessageScheduleRoutes(deps))
          .use(sendingDomainRoutes(deps))
          .use(suppressionRoutes(deps))
          .use(statsRoutes(deps))
          .use(webhookRoutes(deps))
          .use(webhookEndpointRoutes(deps)),
      "outbound",
    ),
  ];
  let root: AnyElysia = createRouter(deps)
    .use(group("metrics", (g) => g.use(metricsRoutes(deps))))
    .use(group("dashboard", (g) => g.use(dashboardRoutes(deps.dashboard))));
  for (const g of apiGroups) root = root.use(g);
  // Last: any other path under a group's prefix is 404 once its middleware has run (401 first).
  for (const [name, plan] of Object.entries(GROUPS) as [GroupName, GroupPlan][])
    if (plan.catchAll) root = root.use(group(name, (g) => g.all("/*", notFound, HIDDEN), "not-found"));
  // Built on first request, once every route is registered.
  let document: Record<string, unknown> | null = null;
  const router: AnyElysia = root.get(
    OPENAPI_PATH,
    (): Record<string, unknown> => (document ??= buildOpenApiDocument(router, deps.version)),
    HIDDEN,
  );
  /** The API's routes (not the dashboard's, not the groups' catch-alls). */
  const apiRoutes = [...apiGroups.flatMap((g) => g.routes), { method: "GET", path: OPENAPI_PATH }].map((r) => ({
    method: r.method,
    path: r.path,
  }));
  // Requests are counted by the route they match, never by their path (/metrics).
  const routeOf = routeMatcher([...apiRoutes, { method: "GET", path: METRICS_PATH }, ...DASHBOARD_ROUTES]);
  return { router, apiRoutes, routeOf };
}
