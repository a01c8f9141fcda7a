// Webhook endpoints through the account API (API.md section 10, docs/webhooks.md
// "Endpoints"): an outbound account's extra receivers of its events, each with its URL,
// event filter, optional Bearer token and a signing secret Postroom makes and shows once.
// Under the account's bearer token, for its own outbound accounts only (another
// account's outbound account or endpoint is 404).
import { isIP } from "node:net";
import { type Static, t } from "elysia";
import type { AccountConfig } from "../config/config.ts";
import { FILTER_KINDS, newEndpointSecret, unknownKind, type WebhookEndpoint } from "../events/webhook-endpoint.ts";
import { errorResponses, invalid, notFound } from "../http/errors.ts";
import { noOutboundAccount, noRecord, privateAddress } from "../http/refusals.ts";
import { oneLine } from "../http/text-checks.ts";
import { targetProblem } from "../inbound/addresses/target-url.ts";
import { isoTime } from "../lib/clock.ts";
import { classifyIp, egressProblem } from "../lib/egress.ts";
import { newId16 } from "../lib/ids.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";

const security = [{ bearerAPIToken: [] }];
export const ENDPOINT_TOKEN_MAX_LENGTH = 512;

const EndpointSchema = t.Object(
  {
    id: t.String(),
    outbound_account_id: t.String(),
    url: t.String({ description: "where the events are posted (JSON, as E10)" }),
    events: t.Array(t.String(), { description: "the event kinds posted there; empty: every kind" }),
    has_token: t.Boolean({ description: "whether POSTs carry `Authorization: Bearer <token>` (the token is never shown)" }),
    created_at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false, title: "WebhookEndpoint" },
);

const CreatedEndpointSchema = t.Composite(
  [
    EndpointSchema,
    t.Object({
      signing_secret: t.String({
        description: "the Standard Webhooks secret (whsec_...) that signs every POST to this endpoint; shown in this answer only",
      }),
    }),
  ],
  { additionalProperties: false, title: "CreatedWebhookEndpoint" },
);

const record = (e: WebhookEndpoint): Static<typeof EndpointSchema> => ({
  id: e.id,
  outbound_account_id: e.outboundAccountId,
  url: e.url,
  events: e.events,
  has_token: e.token !== null,
  created_at: isoTime(e.createdAtMs),
});

/** Why `url` cannot receive webhooks, or null: the config's rule (an http(s) URL), without credentials; an IP literal judged by the egress guard now. */
export function endpointUrlProblem(url: string, allowPrivate: boolean): string | null {
  const problem = targetProblem(url);
  if (problem) return problem;
  const parsed = new URL(url);
  if (parsed.username !== "" || parsed.password !== "")
    return "must not carry credentials; give them as token (sent as Authorization: Bearer)";
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0) return null;
  const egress = egressProblem(host, { allowPrivate });
  if (!egress) return null;
  return privateAddress(egress, host, classifyIp(host) === "private" ? "webhooks.allow_private" : null);
}

/** What the routes take of the API's dependencies. */
export type WebhookEndpointDeps = Pick<ApiDeps, "config" | "clock" | "registry" | "webhookEndpoints">;

export function webhookEndpointRoutes(deps: WebhookEndpointDeps) {
  /** The caller's own outbound account (from the account registry), or 404. */
  const own = (account: AccountConfig, id: string): string => {
    if (deps.registry.outbound(id)?.account.id !== account.id) throw notFound(noOutboundAccount(id));
    return id;
  };
  const listedBy = (accountId: string) => `GET /api/v0.1/${accountId}/webhooks`;
  return accountRoutes("webhook-endpoints")
    .get(
      "/webhooks",
      async ({ account, query }) => {
        const outboundId = query.outbound_account_id === undefined ? null : own(account, query.outbound_account_id);
        return (await deps.webhookEndpoints.list(account.id, outboundId)).map(record);
      },
      {
        query: t.Object({ outbound_account_id: t.Optional(t.String({ description: "only this outbound account's endpoints" })) }),
        response: { 200: t.Array(EndpointSchema), ...errorResponses(401, 403, 404, 422, 429) },
        detail: {
          operationId: "listWebhookEndpoints",
          summary: "(beyond) the account's webhook endpoints, oldest first (the config's webhook is not listed)",
          tags: ["Webhook"],
          security,
        },
      },
    )
    .post(
      "/webhooks",
      async ({ account, body, set }) => {
        const outboundId = own(account, body.outbound_account_id);
        const urlProblem = endpointUrlProblem(body.url, deps.config().webhooks.allowPrivate);
        if (urlProblem) throw invalid("url", urlProblem);
        const events = body.events ?? [];
        const unknown = unknownKind(events);
        if (unknown !== null) throw invalid("events", `"${unknown}" is not an event kind; the kinds are ${FILTER_KINDS.join(", ")}`);
        const endpoint: WebhookEndpoint = {
          id: newId16(),
          accountId: account.id,
          outboundAccountId: outboundId,
          url: body.url,
          events: [...new Set(events)].sort(),
          token: body.token ?? null,
          signingSecret: newEndpointSecret(),
          createdAtMs: deps.clock.nowMs(),
        };
        const max = deps.config().outbound.webhookEndpointsMax;
        if (!(await deps.webhookEndpoints.create(endpoint, max)))
          throw invalid(
            "outbound_account_id",
            `has ${max} webhook endpoints already, the most allowed (outbound.webhook_endpoints_max); delete one first (DELETE /api/v0.1/${account.id}/webhooks/{id})`,
          );
        set.status = 201;
        return { ...record(endpoint), signing_secret: endpoint.signingSecret };
      },
      {
        body: t.Object(
          {
            outbound_account_id: t.String(),
            url: t.String({
              maxLength: 4096,
              description: "an http(s) URL; the egress guard applies when posting (webhooks.allow_private)",
            }),
            events: t.Optional(
              t.Array(t.String({ maxLength: 64 }), {
                maxItems: 32,
                description: `the event kinds to post there (${FILTER_KINDS.join(", ")}); omitted or empty: every kind`,
              }),
            ),
            token: t.Optional(
              oneLine(ENDPOINT_TOKEN_MAX_LENGTH, { minLength: 1, description: "sent as `Authorization: Bearer <token>` with every POST" }),
            ),
          },
          { additionalProperties: false, title: "WebhookEndpointInput" },
        ),
        response: { 201: CreatedEndpointSchema, ...errorResponses(401, 403, 404, 413, 422, 429) },
        detail: {
          operationId: "createWebhookEndpoint",
          summary: "(beyond) add a webhook endpoint to an outbound account; its signing secret is in this answer only",
          tags: ["Webhook"],
          security,
        },
      },
    )
    .delete(
      "/webhooks/:endpointId",
      async ({ account, params, set }) => {
        const found = await deps.webhookEndpoints.get(params.endpointId);
        if (!found || found.accountId !== account.id || !(await deps.webhookEndpoints.remove(account.id, found.id)))
          throw notFound(noRecord("webhook endpoint", params.endpointId, listedBy(account.id)));
        set.status = 202;
        return record(found);
      },
      {
        params: t.Object({ accountId: t.String(), endpointId: t.String() }),
        response: { 202: EndpointSchema, ...errorResponses(401, 403, 404, 429) },
        detail: {
          operationId: "deleteWebhookEndpoint",
          summary: "(beyond) delete a webhook endpoint: its events not yet posted are dropped, no more are posted there",
          tags: ["Webhook"],
          security,
        },
      },
    );
}
