// The one error type of the HTTP boundary: ApiError(status, message) becomes
// {"status": <int>, "error": "<message>"} (docs/api.md, Errors).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";

export const STATUS_MESSAGE: Record<number, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  413: "Payload Too Large",
  429: "Too Many Requests",
  500: "Internal Server Error",
  507: "Insufficient Storage",
};

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    message: string = STATUS_MESSAGE[status] ?? "Error",
    /** Fields beyond status and error (beyond the hosted service's format, so additive only). */
    readonly extra: Record<string, unknown> = {},
    /** Headers of the answer: WWW-Authenticate, Retry-After, Set-Cookie. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * A whole answer given by middleware instead of the route (an Idempotency-Key's replay, or a
 * refusal built elsewhere): thrown, it ends the request's lifecycle, and the router's error
 * mapping gives it as it is.
 */
export class Answered extends Error {
  override name = "Answered";
  constructor(readonly response: Response) {
    super(`answered ${response.status}`);
  }
}

/** 422 naming the field and the rule: `to: at most 20 recipients`. */
export const invalid = (path: string, rule: string): ApiError => new ApiError(422, path ? `${path}: ${rule}` : rule);

/** 404 with `text` (refusals.ts: what was not found, and where to look). */
export const notFound = (text = "Not Found"): ApiError => new ApiError(404, text);

/** 409: the resource is another's or the server's; `why` says whose and what to do. */
export const conflict = (why: string, extra: Record<string, unknown> = {}): ApiError => new ApiError(409, `Conflict: ${why}`, extra);

export function errorResponse(
  status: number,
  message: string = STATUS_MESSAGE[status] ?? "Error",
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Response {
  return new Response(JSON.stringify(Object.assign({ status, error: message }, extra, { status, error: message })), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

export const ErrorSchema = t.Object(
  // TypeBox's Integer, not Elysia's: t.Integer also takes numeric strings (for query
  // parameters), which made the documented status a string-or-integer.
  {
    status: Type.Integer({ minimum: 400, maximum: 599, description: "the HTTP status again" }),
    error: t.String({ description: "what went wrong, in words" }),
  },
  {
    additionalProperties: false,
    title: "Error",
    description: "Every error answer of the API",
    examples: [{ status: 422, error: "to: at most 20 recipients" }],
  },
);

/** Error responses of an operation, for the OpenAPI document. */
export function errorResponses(...codes: number[]): Record<number, typeof ErrorSchema> {
  return Object.fromEntries(codes.map((c) => [c, ErrorSchema]));
}

/**
 * (beyond) 409 of E8 and E15 when a domain is another account's or this server's: the Error,
 * plus the TXT record that takes it back from another account (docs/security.md, Domains
 * belong to their owner); absent for the server's own names, which nobody can take.
 */
export const DomainConflictSchema = t.Object(
  {
    status: Type.Integer({ minimum: 400, maximum: 599, description: "409" }),
    error: t.String({ description: "Conflict: whose the domain is, and what to do" }),
    verification: t.Optional(
      t.Object(
        {
          type: t.Literal("TXT", { description: "the DNS record type to publish" }),
          host: t.String({ description: "where to publish it: _postroom-verify.{domain}" }),
          value: t.String({ description: "what to publish: postroom-verify={token}, the same for this account and domain every time" }),
        },
        { additionalProperties: false, title: "DomainProof" },
      ),
    ),
  },
  { additionalProperties: false, title: "DomainConflict", description: "Another account or this server holds the domain" },
);
