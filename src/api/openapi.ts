// The OpenAPI 3.1 document, generated from the same TypeBox schemas that validate
// requests, so the document cannot drift from what the server accepts.
import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { OPENAPI_PATH } from "./paths.ts";

export function buildOpenApiDocument(app: AnyElysia, version: string): Record<string, unknown> {
  // staticFile: false, or every path would be dropped for the "." in "v0.1".
  const { paths, components } = toOpenAPISchema(app, { paths: [OPENAPI_PATH], staticFile: false }, undefined, undefined, "3.1.0");
  return {
    openapi: "3.1.0",
    info: {
      title: "Postroom API",
      version,
      description:
        "Receive email as HTTP POSTs to your targets, send email over HTTP or SMTP, and read delivery events. " +
        "Wire-compatible with the hosted service's API v0.1. Errors are {status, error}.",
    },
    servers: [{ url: "/" }],
    paths: withoutErrorMessages(paths),
    components: {
      ...withoutErrorMessages(components),
      securitySchemes: {
        bearerAPIToken: { type: "http", scheme: "bearer", description: "an account's API token; HTTP Basic with the account ID as user also works" },
        smtpAuth: { type: "http", scheme: "basic", description: "outbound account ID as user, its API key as password; Bearer <key> also works" },
      },
    },
  };
}

/** `errorMessage` is our validation wording, not part of JSON Schema: keep it out of the document. */
function withoutErrorMessages<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === "errorMessage" ? undefined : v)));
}
