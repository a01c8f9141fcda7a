// The Elysia application: every route, the JSON body parser with its cap, and the
// mapping of every error to {status, error}. Authentication and rate limits happen in
// front of it (front.ts), before any body is read.
import { Elysia } from "elysia";
import { describeValueErrors, formatProblem } from "../lib/validation.ts";
import { addressRoutes } from "./addresses.ts";
import { parseJsonBody, readBodyCapped } from "./body.ts";
import { customDomainRoutes } from "./custom-domains.ts";
import type { ApiDeps } from "./deps.ts";
import { ApiError, errorResponse } from "./errors.ts";
import { healthRoutes } from "./health.ts";
import { buildOpenApiDocument } from "./openapi.ts";
import { API_PREFIX, OPENAPI_PATH } from "./paths.ts";
import { requestState } from "./request-state.ts";

export function buildElysiaApp(deps: ApiDeps, version: string) {
  const app = new Elysia({ normalize: false })
    .onParse(async ({ request }) => {
      const limit = requestState(request)?.bodyLimitBytes ?? deps.config().http.maxBodyBytes;
      return parseJsonBody(await readBodyCapped(request, limit));
    })
    .onError(({ code, error, request }) => {
      if (error instanceof ApiError) return errorResponse(error.status, error.message);
      switch (code) {
        case "VALIDATION": {
          const problems = describeValueErrors(error.all as never);
          const where = error.type === "query" ? "query " : error.type === "params" ? "path " : "";
          const message = problems.map((p) => (p.path ? where + formatProblem(p) : `${error.type === "body" ? "body" : error.type} ${p.message}`)).join("; ");
          return errorResponse(422, message || "the request is not valid");
        }
        case "PARSE":
          return errorResponse(422, "body is not valid JSON");
        case "NOT_FOUND":
          return errorResponse(404);
        default:
          deps.logger.error("unhandled error in API route", { err: error, method: request.method, path: new URL(request.url).pathname });
          return errorResponse(500);
      }
    })
    .use(healthRoutes(deps))
    .group(`${API_PREFIX}/:accountId`, (g) => g.use(addressRoutes(deps)).use(customDomainRoutes(deps)));
  // Built on first request, once every route above is registered.
  let document: Record<string, unknown> | null = null;
  return app.get(OPENAPI_PATH, () => (document ??= buildOpenApiDocument(app, version)), { detail: { hide: true } });
}

export type ElysiaApp = ReturnType<typeof buildElysiaApp>;
