// The Elysia application: every route, the JSON body parser with its cap, and the
// mapping of every error to {status, error}. Authentication and rate limits happen in
// front of it (front.ts), before any body is read.
import { Elysia } from "elysia";
import { isDiskFull } from "../lib/disk-full.ts";
import { describeValueErrors, formatProblem, type Problem } from "../lib/validation.ts";
import { addressRoutes } from "./addresses.ts";
import { attachmentRoutes } from "./attachments.ts";
import { incomingStatusRoutes } from "./incoming-statuses.ts";
import { messageRoutes } from "./messages.ts";
import { outboundMessageRoutes } from "./outbound-messages.ts";
import { sendingDomainRoutes } from "./sending-domains.ts";
import { suppressionRoutes } from "./suppressions.ts";
import { statsRoutes } from "./stats.ts";
import { webhookRoutes } from "./webhook.ts";
import { addressTestRoutes } from "./address-test.ts";
import { keptMessageRoutes } from "./kept-messages.ts";
import { outboundMessageActionRoutes } from "./outbound-message-actions.ts";
import { trackingRoutes } from "./tracking.ts";
import { unsubscribeRoutes } from "./unsubscribe.ts";
import { InputProblem } from "../outbound/compose/message-input.ts";
import { customDomainRoutes } from "./custom-domains.ts";
import type { ApiDeps } from "./deps.ts";
import { ApiError, errorResponse } from "./errors.ts";
import { parameterTextProblem } from "./parameter-checks.ts";
import { healthRoutes } from "./health.ts";
import { buildOpenApiDocument } from "./openapi.ts";
import { API_PREFIX, OPENAPI_PATH } from "./paths.ts";
import { requestState } from "./request-state.ts";

export function buildElysiaApp(deps: ApiDeps, version: string) {
  const app = new Elysia({ normalize: false })
    // The front handler has already read and parsed the body under its size cap.
    .onParse(({ request }) => requestState(request)?.body)
    // Before any route reads them: no control character (NUL above all) reaches the store.
    .onTransform({ as: "global" }, ({ params, query }) => {
      const problem = parameterTextProblem(params, query);
      if (problem) throw new ApiError(422, problem);
    })
    .onError(({ code, error, request }) => {
      if (error instanceof ApiError) return errorResponse(error.status, error.message, {}, error.extra);
      if (error instanceof InputProblem) return errorResponse(422, formatProblem(error.problem));
      switch (code) {
        case "VALIDATION": {
          return errorResponse(422, validationMessage(error.type, describeValueErrors(error.all as never)));
        }
        case "PARSE":
          return errorResponse(422, "body is not valid JSON");
        case "NOT_FOUND":
          return errorResponse(404);
        default:
          // A full disk is not a bug: 507, and one log line a minute however many writes fail.
          if (isDiskFull(error)) {
            deps.diskFull.report("api", error);
            return errorResponse(507);
          }
          deps.logger.error("unhandled error in API route", { err: error, method: request.method, path: new URL(request.url).pathname });
          return errorResponse(500);
      }
    })
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
        userAgent: `Postroom/${version}`,
      }),
    )
    .group(`${API_PREFIX}/:accountId`, (g) =>
      g
        .use(addressRoutes(deps))
        .use(addressTestRoutes(deps))
        .use(incomingStatusRoutes(deps))
        .use(keptMessageRoutes(deps))
        .use(customDomainRoutes(deps))
        .use(messageRoutes(deps.send, deps.logger))
        .use(outboundMessageRoutes(deps))
        .use(outboundMessageActionRoutes(deps))
        .use(sendingDomainRoutes(deps))
        .use(suppressionRoutes(deps))
        .use(statsRoutes(deps))
        .use(webhookRoutes(deps)),
    );
  // Built on first request, once every route above is registered.
  let document: Record<string, unknown> | null = null;
  return app.get(OPENAPI_PATH, () => (document ??= buildOpenApiDocument(app, version)), { detail: { hide: true } });
}

/** "nickname: must be ..." for body fields, "query page: ..." for parameters. */
function validationMessage(where: string, problems: Problem[]): string {
  if (problems.length === 0) return "the request is not valid";
  const prefix = where === "body" ? "" : `${where} `;
  return problems
    .map((p) => (p.path ? prefix + formatProblem(p) : where === "body" ? "body must be a JSON object" : `${where} ${p.message}`))
    .join("; ");
}

export type ElysiaApp = ReturnType<typeof buildElysiaApp>;
