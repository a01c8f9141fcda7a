// E6: incoming statuses of an address, newest first, with search and paging.
import { Type } from "@sinclair/typebox";
import { type Static, t } from "elysia";
import { type IncomingStatus, stateOf } from "../inbound/statuses/incoming-status.ts";
import { STATUS_SEARCH_FIELDS } from "../inbound/statuses/statuses.port.ts";
import { isoTime } from "../lib/clock.ts";
import { parseSearchQuery, SearchQueryError, termTimeMs, type SearchTerm } from "../lib/search-query.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { errorResponses, invalid, notFound } from "../http/errors.ts";
import { noRecord } from "../http/refusals.ts";
import { nextLink, pageRequest, pagingQueryFields, timedSearch } from "./paging.ts";

const IncomingStatusSchema = t.Object(
  {
    id: t.String(),
    address_id: t.String(),
    message_id: t.Union([t.String(), t.Null()], { description: "Message-ID header, without angle brackets" }),
    from: t.String({ description: "envelope sender (MAIL FROM); empty for bounces" }),
    to: t.String({ description: "envelope recipient (RCPT TO)" }),
    subject: t.Union([t.String(), t.Null()]),
    status: t.String({ description: 'the target\'s HTTP status ("200", "404"), client_timeout, unreachable, or rejected' }),
    status_category: t.Union([t.Literal("successful"), t.Literal("rejected"), t.Literal("delayed")]),
    tls: t.Union([t.String(), t.Null()], { description: "TLS protocol of the SMTP session, or null" }),
    size: t.Union([Type.Integer({ minimum: 0 }), t.Null()], { description: "message size in bytes" }),
    remote_ip: t.Union([t.String(), t.Null()]),
    response: t.Union([t.String(), t.Null()], { description: "the target's answer (first bytes) or our refusal, for every non-2xx" }),
    store_url: t.Union([t.String(), t.Null()], {
      description:
        "(beyond) the signed URL of the message, when its address keeps messages (store_messages); it works for inbound.attachment_url_ttl",
    }),
    x_postroom_message_id: t.Union([t.String(), t.Null()], {
      description:
        "the X-Postroom-Message-Id header of the POST to the target (also in the log); null when Postroom refused the mail itself",
    }),
    created_at: t.String({ format: "date-time" }),
    state: t.Union([t.Literal("delivered"), t.Literal("rejected"), t.Literal("deferred"), t.Literal("queued"), t.Literal("expired")], {
      description:
        "(beyond) delivered (the target took it), rejected (refused: by the target's 4xx, or by Postroom), deferred (the sender was told 451), queued (accepted; Postroom posts it again), expired (queued past inbound.max_queue_time)",
    }),
    attempts: Type.Integer({ minimum: 0, description: "(beyond) POSTs made to the target so far" }),
    next_attempt_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description: "(beyond) when a queued message is posted again; null unless state is queued",
    }),
  },
  { additionalProperties: false, title: "IncomingStatus" },
);

export function statusRecord(s: IncomingStatus): Static<typeof IncomingStatusSchema> {
  return {
    id: s.id,
    address_id: s.addressId,
    message_id: s.messageId,
    from: s.mailFrom,
    to: s.rcptTo,
    subject: s.subject,
    status: s.status,
    status_category: s.statusCategory,
    tls: s.tls,
    size: s.sizeBytes,
    remote_ip: s.remoteIp,
    response: s.response,
    x_postroom_message_id: s.postroomMessageId,
    store_url: s.storeUrl ?? null,
    created_at: isoTime(s.createdAtMs),
    state: stateOf(s),
    // Statuses from before counted no attempts: one POST when one was made.
    attempts: s.attempts ?? (s.postroomMessageId ? 1 : 0),
    next_attempt_at: s.nextAttemptAtMs ? isoTime(s.nextAttemptAtMs) : null,
  };
}

function searchTerms(query: string | undefined, maxTerms: number): SearchTerm[] {
  try {
    const terms = parseSearchQuery(query, STATUS_SEARCH_FIELDS, maxTerms);
    for (const term of terms)
      if (term.field === "created_at" && termTimeMs(term.value) === null)
        throw new SearchQueryError(`created_at needs a date such as 2026-11-01, not "${term.value}"`);
    return terms;
  } catch (err) {
    if (err instanceof SearchQueryError) throw invalid("query", err.message);
    throw err;
  }
}

/** What the routes take of the API's dependencies. */
export type IncomingStatusDeps = Pick<ApiDeps, "config" | "logger" | "addresses" | "statuses">;

export function incomingStatusRoutes(deps: IncomingStatusDeps) {
  return accountRoutes("incoming-statuses").get(
    "/incoming_statuses",
    async ({ account, request, query, set }) => {
      const address = await deps.addresses.get(account.id, query.address_id);
      if (!address) throw notFound(noRecord("address", query.address_id, `GET /api/v0.1/${account.id}/addresses`));
      const { searchMaxTerms, searchWindowRows, searchTimeoutMs } = deps.config().http;
      const terms = searchTerms(query.query, searchMaxTerms);
      const ctx = { set, logger: deps.logger, list: "incoming_statuses", accountId: address.accountId, terms: terms.length };
      const page = await timedSearch(ctx, searchTimeoutMs, (timeoutMs) =>
        deps.statuses.list(address.accountId, address.id, terms, pageRequest(query), searchWindowRows, timeoutMs),
      );
      const link = nextLink(request.url, query, page);
      if (link) set.headers["link"] = link;
      return page.items.map(statusRecord);
    },
    {
      query: t.Object({ address_id: t.String({ description: "the address whose mail to list" }), ...pagingQueryFields }),
      response: { 200: t.Array(IncomingStatusSchema), ...errorResponses(401, 403, 404, 422, 429, 503) },
      detail: {
        operationId: "listIncomingStatuses",
        summary: "E6: received messages of an address, newest first (50 a page)",
        description:
          'query: terms that must all match; field:value for status, status_category, to, from, subject, x_postroom_message_id, created_at:>=2026-11-01; a bare word matches subject, from or to; "quoted phrases"; * or empty for all.',
        tags: ["Incoming statuses"],
        security: [{ bearerAPIToken: [] }],
      },
    },
  );
}
