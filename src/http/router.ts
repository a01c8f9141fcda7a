// The root of the one HTTP router (Elysia): what holds for every route of every group. No
// body is read by Elysia itself (each group's middleware reads it under its cap, after
// authentication: groups.ts), each route's context holds its request's facts (exchange.ts),
// and every error becomes {status, error} (docs/api.md, Errors). The groups are composed
// onto it by src/router.ts.
import { Elysia } from "elysia";
import { isDiskFull } from "../lib/disk-full.ts";
import { FailureStreak } from "../lib/failure-streak.ts";
import { isStoreUnreachable, STORE_RETRY_AFTER_S } from "../lib/store-unreachable.ts";
import type { DiskFullLog } from "../lib/disk-full.ts";
import type { Logger } from "../lib/logger.ts";
import { describeValueErrors, formatProblem, type Problem } from "../lib/validation.ts";
import { Answered, ApiError, errorResponse } from "./errors.ts";
import { NO_SUCH_PATH } from "./refusals.ts";
import { requestContextOf } from "./exchange.ts";
import { parameterTextProblem } from "./parameter-checks.ts";

export interface RouterDeps {
  logger: Logger;
  /** Where a full disk is reported (rate-limited). */
  diskFull: DiskFullLog;
}

/** The 503's text: what happened, that nothing was done, what to do. */
export const STORE_UNAVAILABLE = `Service Unavailable: the store (PostgreSQL) cannot be reached just now, so nothing was done; try again in ${STORE_RETRY_AFTER_S} seconds`;

export function createRouter(deps: RouterDeps) {
  const storeAway = new FailureStreak(deps.logger, "error", "the store cannot be reached: API calls answered 503");
  return (
    // Elysia reads the path from the first "/" at or after the URL's 11th character
    // (standardHostname), right for http:// and https:// alike; serve.ts gives a Host
    // shorter than that (http://x/) a longer one first (routableUrl).
    new Elysia({ normalize: false })
      // Bodies are read by the groups' middleware (json-body.ts), never here: a request is
      // authenticated before a byte of its body is read.
      .onParse(() => null)
      .derive(({ request }) => requestContextOf(request))
      .onError(({ code, error, request }) => {
        if (error instanceof Answered) return error.response;
        if (error instanceof ApiError) return errorResponse(error.status, error.message, error.headers, error.extra);
        switch (code) {
          case "VALIDATION":
            return errorResponse(422, validationMessage(error.type, describeValueErrors(error.all as never)));
          case "PARSE":
            return errorResponse(422, "body is not valid JSON");
          case "NOT_FOUND":
            return errorResponse(404, NO_SUCH_PATH);
          default:
            // A full disk is not a bug: 507, and one log line a minute however many writes fail.
            if (isDiskFull(error)) {
              deps.diskFull.report("api", error);
              return errorResponse(507);
            }
            // PostgreSQL away: nothing was done and the call will work again; one line a minute.
            if (isStoreUnreachable(error)) {
              storeAway.failed(error, { method: request.method, path: new URL(request.url).pathname });
              return errorResponse(503, STORE_UNAVAILABLE, { "retry-after": String(STORE_RETRY_AFTER_S) });
            }
            deps.logger.error("unhandled error in API route", { err: error, method: request.method, path: new URL(request.url).pathname });
            return errorResponse(500);
        }
      })
  );
}

/** Middleware of every API group: no control character (NUL above all) in a parameter reaches the store. */
export function checkParameterText({ params, query }: { params: Record<string, unknown>; query: Record<string, unknown> }): void {
  const problem = parameterTextProblem(params, query);
  if (problem) throw new ApiError(422, problem);
}

/** A group's last route (`/*`): any other path under its prefix is 404 once its middleware has run (401 first). */
export const notFound = (): never => {
  throw new ApiError(404, NO_SUCH_PATH);
};

/** Routes that are no part of the API's document (OpenAPI): the dashboard's, /metrics, the groups' catch-alls. */
export const HIDDEN = { detail: { hide: true } };

/** "nickname: must be ..." for body fields, "query page: ..." for parameters. */
function validationMessage(where: string, problems: Problem[]): string {
  if (problems.length === 0) return "the request is not valid";
  const prefix = where === "body" ? "" : `${where} `;
  return problems
    .map((p) => (p.path ? prefix + formatProblem(p) : where === "body" ? "body must be a JSON object" : `${where} ${p.message}`))
    .join("; ");
}
