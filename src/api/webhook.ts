// (beyond) The webhook page's API: an outbound account's webhook as the dashboard shows it
// (URL without secrets, the backlog, the recent POSTs with the receiver's answers), a test
// POST, and "retry now". Under the account's bearer token, for its own outbound accounts.
import { t } from "elysia";
import { isoTime } from "../lib/clock.ts";
import type { WebhookPost } from "../events/webhook-post.ts";
import type { AccountConfig } from "../config/config.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { errorResponses, invalid, notFound } from "../http/errors.ts";
import { noOutboundAccount } from "../http/refusals.ts";
import { nextLink, pageRequest, pagingQueryFields } from "./paging.ts";

const security = [{ bearerAPIToken: [] }];
const outboundQuery = t.Object({ outbound_account_id: t.String({ description: "the outbound account whose webhook this is" }) });

const WebhookPostSchema = t.Object(
  {
    id: t.String(),
    webhook_id: t.String({ description: "the webhook-id header: a retry posts the same batch again under it" }),
    events: t.Integer(),
    test: t.Boolean({ description: "a test POST from the dashboard" }),
    status: t.Union([t.Integer(), t.Null()], { description: "the receiver's HTTP status; null when it gave none" }),
    problem: t.String({ description: "what went wrong (the first bytes of a non-2xx answer, a timeout...); empty for a 2xx" }),
    duration_ms: t.Integer(),
    created_at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false, title: "WebhookPost" },
);

const WebhookStatusSchema = t.Object(
  {
    outbound_account_id: t.String(),
    webhook: t.Union([t.Object({ url: t.String({ description: "without credentials or query" }), signed: t.Boolean() }), t.Null()], {
      description: "null: no webhook configured",
    }),
    pending: t.Object({
      events: t.Integer(),
      oldest_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
      next_attempt_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    }),
    posts: t.Array(WebhookPostSchema, { description: "the latest POSTs, newest first (all of them: GET .../webhook/posts)" }),
  },
  { additionalProperties: false, title: "WebhookStatus" },
);

const record = (p: WebhookPost) => ({
  id: p.id,
  webhook_id: p.batchId,
  events: p.events,
  test: p.test,
  status: p.status,
  problem: p.problem,
  duration_ms: p.durationMs,
  created_at: isoTime(p.createdAtMs),
});

const iso = (ms: number | null) => (ms === null ? null : isoTime(ms));

/** What the routes take of the API's dependencies. */
export type WebhookRouteDeps = Pick<ApiDeps, "webhooks">;

export function webhookRoutes(deps: WebhookRouteDeps) {
  /** The caller's own outbound account, or 404. */
  const own = (account: AccountConfig, id: string) => {
    if (!account.outbound.some((o) => o.id === id)) throw notFound(noOutboundAccount(id));
    return id;
  };
  return accountRoutes("webhook")
    .get(
      "/webhook",
      async ({ account, query }) => {
        const id = own(account, query.outbound_account_id);
        const o = await deps.webhooks.overview(id, { limit: 20 });
        return {
          outbound_account_id: id,
          webhook: o.webhook,
          pending: { events: o.pending.events, oldest_at: iso(o.pending.oldestMs), next_attempt_at: iso(o.pending.dueMs) },
          posts: o.posts.items.map(record),
        };
      },
      {
        query: outboundQuery,
        response: { 200: WebhookStatusSchema, ...errorResponses(401, 403, 404, 422, 429) },
        detail: {
          operationId: "getWebhook",
          summary: "(beyond) an outbound account's webhook, its backlog and latest POSTs",
          tags: ["Webhook"],
          security,
        },
      },
    )
    .get(
      "/webhook/posts",
      async ({ account, request, query, set }) => {
        const id = own(account, query.outbound_account_id);
        const page = (await deps.webhooks.overview(id, pageRequest(query))).posts;
        const link = nextLink(request.url, query, page);
        if (link) set.headers["link"] = link;
        return page.items.map(record);
      },
      {
        query: t.Object({ outbound_account_id: t.String(), page: pagingQueryFields.page, before: pagingQueryFields.before }),
        response: { 200: t.Array(WebhookPostSchema), ...errorResponses(401, 403, 404, 422, 429) },
        detail: {
          operationId: "listWebhookPosts",
          summary: "(beyond) POSTs made to an outbound account's webhook, newest first",
          tags: ["Webhook"],
          security,
        },
      },
    )
    .post(
      "/webhook/test",
      async ({ account, query }) => {
        const post = await deps.webhooks.testPost(own(account, query.outbound_account_id));
        if (!post)
          throw invalid(
            "outbound_account_id",
            "has no webhook configured: set accounts.outbound.webhook.url (or the account's accounts.webhook.url) in the config",
          );
        return record(post);
      },
      {
        query: outboundQuery,
        response: { 200: WebhookPostSchema, ...errorResponses(401, 403, 404, 422, 429) },
        detail: {
          operationId: "testWebhook",
          summary: "(beyond) post one sample event to the webhook now and return the receiver's answer",
          tags: ["Webhook"],
          security,
        },
      },
    )
    .post(
      "/webhook/retry",
      async ({ account, query }) => ({ pending: await deps.webhooks.retryNow(own(account, query.outbound_account_id)) }),
      {
        query: outboundQuery,
        response: {
          200: t.Object({ pending: t.Integer({ description: "events waiting, all due now" }) }, { title: "WebhookRetry" }),
          ...errorResponses(401, 403, 404, 422, 429),
        },
        detail: {
          operationId: "retryWebhook",
          summary: "(beyond) post the pending events now instead of at their next retry",
          tags: ["Webhook"],
          security,
        },
      },
    );
}
