// The OpenAPI 3.1 document, generated from the same TypeBox schemas that validate
// requests, so the document cannot drift from what the server accepts. @elysiajs/openapi
// turns the routes into paths; what it cannot know is added here from the same sources:
// request bodies (our own parser reads them, so the library leaves their content empty),
// the headers the router adds (http/serve.ts, http/rate-limit.ts), the credentials authenticate.ts accepts, and the webhooks.
import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { asOpenApi, withNamedSchemas, withPlainNumbers } from "./openapi-schemas.ts";
import { openApiWebhooks, WEBHOOK_SECURITY_SCHEMES } from "./openapi-webhooks.ts";
import { OPENAPI_PATH } from "./paths.ts";

/**
 * A route whose body is validated by one schema but is better described by another (E11:
 * one flat object for the checks, its two variants as `oneOf` for clients) names the
 * latter in its detail under this key.
 */
export const DOCUMENTED_BODY = "x-documented-body";

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is untyped JSON walked by shape
type Operation = Record<string, any>;

export function buildOpenApiDocument(app: AnyElysia, version: string): Record<string, unknown> {
  // staticFile: false, or every path would be dropped for the "." in "v0.1".
  const { paths } = toOpenAPISchema(app, { paths: [OPENAPI_PATH], staticFile: false }, undefined, undefined, "3.1.0");
  const bodies = routeBodies(app);
  for (const [path, item] of Object.entries(paths as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(item)) {
      const validated = bodies.get(`${method} ${path}`);
      const body = op[DOCUMENTED_BODY] ?? (validated && asOpenApi(validated));
      delete op[DOCUMENTED_BODY];
      if (body) op.requestBody = { required: true, content: { "application/json": { schema: body } } };
      op.security = (op.security as Record<string, string[]>[] | undefined)?.flatMap(withAlternative);
      addResponseHeaders(op);
      op.description ??= op.summary;
    }
  }
  const document = withoutErrorMessages({
    openapi: "3.1.0",
    info: {
      title: "Postroom API",
      version,
      description:
        "Receive email as HTTP POSTs to your targets, send email over HTTP or SMTP, and read delivery events. " +
        "Wire-compatible with the hosted service's API v0.1. Errors are {status, error}.",
      license: { name: "UNLICENSED" },
      contact: { name: "the operator of this Postroom server" },
    },
    servers: [{ url: "/", description: "this server" }],
    tags: TAGS,
    paths,
    webhooks: openApiWebhooks(),
    components: {
      schemas: {},
      headers: HEADERS,
      securitySchemes: { ...SECURITY_SCHEMES, ...WEBHOOK_SECURITY_SCHEMES },
    },
  });
  return withNamedSchemas({ ...document, paths: withPlainNumbers(document.paths as never) });
}

const TAGS = [
  { name: "Addresses", description: "E1-E5: addresses that receive mail" },
  { name: "Incoming statuses", description: "E6: what became of received mail" },
  { name: "Custom domains", description: "E7-E9: domains whose mail goes to an address" },
  { name: "Sending", description: "E11: send a message" },
  { name: "Sent messages", description: "E12-E13: sent messages and their events" },
  { name: "Sending domains", description: "E14-E18: domains mail is sent from, with DKIM" },
  { name: "Suppressions", description: "addresses that are not sent to" },
  { name: "Stats", description: "counts over the last day or week" },
  {
    name: "Webhook",
    description:
      "an outbound account's events webhook: its POSTs and the answers, a test event, retry now; its webhook endpoints, each with its event filter and signing secret",
  },
  { name: "Operations", description: "whether the server is up" },
  {
    name: "Operator",
    description:
      "(beyond) the operator's API: accounts, their tokens and outbound accounts, the audit log, the sending IPs' health, the queue, paused destinations",
  },
  { name: "Webhooks", description: "POSTs Postroom makes to your URLs" },
];

const SECURITY_SCHEMES = {
  bearerAPIToken: { type: "http", scheme: "bearer", description: "an account's API token: Authorization: Bearer <token>" },
  basicAPIToken: { type: "http", scheme: "basic", description: "the account ID as user, an API token of it as password" },
  smtpAuth: {
    type: "http",
    scheme: "basic",
    description: "the outbound account ID as user, its API key as password (the SMTP credentials)",
  },
  bearerSMTPKey: { type: "http", scheme: "bearer", description: "an outbound account's API key: Authorization: Bearer <key>" },
  operatorToken: {
    type: "http",
    scheme: "bearer",
    description: "an operator token (dashboard.admin_tokens): Authorization: Bearer <token>",
  },
};

/** Each credential is accepted as Bearer and as Basic (src/auth/authenticate.ts). */
const ALTERNATIVE: Record<string, keyof typeof SECURITY_SCHEMES> = { bearerAPIToken: "basicAPIToken", smtpAuth: "bearerSMTPKey" };

function withAlternative(requirement: Record<string, string[]>): Record<string, string[]>[] {
  const [name] = Object.keys(requirement);
  const other = name ? ALTERNATIVE[name] : undefined;
  return other ? [requirement, { [other]: [] }] : [requirement];
}

const integerHeader = (description: string) => ({ description, schema: { type: "integer", minimum: 0 } });
const HEADERS = {
  "RateLimit-Limit": integerHeader("calls allowed in the window (absent when the account's limit is off)"),
  "RateLimit-Remaining": integerHeader("calls left in the window"),
  "RateLimit-Reset": integerHeader("seconds until the window has room again"),
  "Retry-After": integerHeader("seconds to wait before trying again"),
  Link: { description: 'the next page, as <...>; rel="next", when there are more records', schema: { type: "string" } },
  "X-Request-Id": { description: "the request's ID, as logged", schema: { type: "string", pattern: "^[0-9a-f]{16}$" } },
  "WWW-Authenticate": { description: "the schemes accepted: Bearer and Basic", schema: { type: "string" } },
};

const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** The headers the router puts on answers: which ones depends on the status and the operation. */
function addResponseHeaders(op: Operation): void {
  const authenticated = (op.security?.length ?? 0) > 0;
  const paged =
    (op.parameters as { in: string; name: string }[] | undefined)?.some((p) => p.in === "query" && p.name === "before") ?? false;
  // biome-ignore lint/suspicious/noExplicitAny: as Operation
  for (const [status, response] of Object.entries<Record<string, any>>(op.responses ?? {})) {
    const names: (keyof typeof HEADERS)[] = ["X-Request-Id"];
    // 401 and 403 are answered before the rate limit is counted.
    if (authenticated && status !== "401" && status !== "403") names.push("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");
    if (status === "401") names.push("WWW-Authenticate");
    if (status === "429" || status === "503") names.push("Retry-After");
    if (paged && status === "200") names.push("Link");
    response.headers = Object.fromEntries(names.map((n) => [n, headerRef(n)]));
  }
}

/** Each route's body schema by "method /openapi/{path}". */
function routeBodies(app: AnyElysia): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const route of app.routes) {
    const body = (route.hooks as { body?: unknown } | undefined)?.body;
    if (body) out.set(`${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, "{$1}")}`, body);
  }
  return out;
}

/** `errorMessage` is our validation wording, not part of JSON Schema: keep it out of the document. */
function withoutErrorMessages<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === "errorMessage" ? undefined : v)));
}
