// E12 and E13: sent messages of an outbound account with each recipient's delivery.
import { type Static, t } from "elysia";
import type { MessageEvent } from "../events/message-event.ts";
import { isInternalKind } from "../events/kinds.ts";
import { isoTime } from "../lib/clock.ts";
import { parseSearchQuery, SearchQueryError, termTimeMs } from "../lib/search-query.ts";
import { FAILURE_CLASSES, isFailureClass } from "../outbound/bounces/failure-class.ts";
import { MESSAGE_SEARCH_FIELDS } from "../outbound/queue/queue.repo.ts";
import type { OutboundMessage, OutboundRecipient } from "../outbound/queue/message.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { errorResponses, invalid, notFound } from "../http/errors.ts";
import { noMessage, noOutboundAccount } from "../http/refusals.ts";
import { nextLink, pageRequest, pagingQueryFields, timedSearch } from "./paging.ts";

const security = [{ bearerAPIToken: [] }];

const EventSchema = t.Object(
  { id: t.String(), kind: t.String(), created_at: t.String({ format: "date-time" }), details: t.Record(t.String(), t.Unknown()) },
  { additionalProperties: false, title: "MessageEventEntry" },
);

const messageFields = {
  id: t.String({ format: "uuid" }),
  outbound_account_id: t.String(),
  from: t.String(),
  subject: t.Union([t.String(), t.Null()]),
  message_id: t.String({ description: "the Message-ID header, in angle brackets" }),
  to: t.Array(t.String()),
  cc: t.Array(t.String()),
  tags: t.Array(t.String()),
  test_mode: t.Boolean(),
  priority: t.String(),
  created_at: t.String({ format: "date-time" }),
  send_at: t.Optional(
    t.String({ format: "date-time", description: "(beyond) when it was scheduled for (E11's send_at); only when it was" }),
  ),
  metadata: t.Optional(t.Record(t.String(), t.String(), { description: "(beyond) E11's metadata; only when it had some" })),
};
const recipientFields = {
  email: t.String(),
  type: t.String({ description: "to, cc or bcc" }),
  status: t.String({ description: "kind of the latest lifecycle event" }),
};

const ListedMessageSchema = t.Object(
  {
    ...messageFields,
    recipients: t.Array(t.Object({ ...recipientFields, last_event: t.Union([EventSchema, t.Null()]) }, { additionalProperties: false })),
  },
  { additionalProperties: false, title: "SentMessage" },
);
const FullMessageSchema = t.Object(
  {
    ...messageFields,
    recipients: t.Array(t.Object({ ...recipientFields, events: t.Array(EventSchema) }, { additionalProperties: false })),
  },
  { additionalProperties: false, title: "SentMessageWithEvents" },
);

const eventRecord = (e: MessageEvent): Static<typeof EventSchema> => ({
  id: e.id,
  kind: e.kind,
  created_at: isoTime(e.createdAtMs),
  details: e.details,
});

const messageRecord = (m: OutboundMessage) => ({
  id: m.id,
  outbound_account_id: m.outboundAccountId,
  from: m.from,
  subject: m.subject,
  message_id: m.messageId,
  to: m.to,
  cc: m.cc,
  tags: m.tags,
  test_mode: m.testMode,
  priority: m.priority,
  created_at: isoTime(m.createdAtMs),
  // Beyond the hosted service: only when the message has them, so its clients see what they did.
  ...(m.sendAtMs ? { send_at: isoTime(m.sendAtMs) } : {}),
  ...(m.metadata && Object.keys(m.metadata).length > 0 ? { metadata: m.metadata } : {}),
});

/** What the routes take of the API's dependencies. */
export type OutboundMessageDeps = Pick<ApiDeps, "config" | "logger" | "outbound">;

/** Events of the recipients that clients may see (internal kinds left out), by recipient. */
async function visibleEvents(deps: OutboundMessageDeps, recipients: readonly OutboundRecipient[]): Promise<Map<string, MessageEvent[]>> {
  const byRecipient = new Map<string, MessageEvent[]>();
  for (const e of await deps.outbound.eventsOf(recipients.map((r) => r.id))) {
    if (isInternalKind(e.kind)) continue;
    byRecipient.set(e.recipientId, [...(byRecipient.get(e.recipientId) ?? []), e]);
  }
  return byRecipient;
}

export function outboundMessageRoutes(deps: OutboundMessageDeps) {
  return accountRoutes("outbound-messages")
    .get(
      "/outbound_messages",
      async ({ account, request, query, set }) => {
        if (!account.outbound.some((o) => o.id === query.outbound_account_id)) throw notFound(noOutboundAccount(query.outbound_account_id));
        let terms: ReturnType<typeof parseSearchQuery>;
        try {
          terms = parseSearchQuery(query.query, MESSAGE_SEARCH_FIELDS, deps.config().http.searchMaxTerms);
          for (const term of terms)
            if (term.field === "created_at" && termTimeMs(term.value) === null)
              throw new SearchQueryError(`created_at needs a date such as 2026-11-01, not "${term.value}"`);
            else if (term.field === "bounce_class" && !isFailureClass(term.value.toLowerCase()))
              throw new SearchQueryError(`bounce_class must be one of ${FAILURE_CLASSES.join(", ")}, not "${term.value}"`);
        } catch (err) {
          if (err instanceof SearchQueryError) throw invalid("query", err.message);
          throw err;
        }
        const { searchWindowRows, searchTimeoutMs } = deps.config().http;
        const ctx = { set, logger: deps.logger, list: "outbound_messages", accountId: account.id, terms: terms.length };
        const page = await timedSearch(ctx, searchTimeoutMs, (timeoutMs) =>
          deps.outbound.listMessages(query.outbound_account_id, terms, pageRequest(query), searchWindowRows, timeoutMs),
        );
        const recipients = await deps.outbound.recipientsOf(page.items.map((m) => m.id));
        const events = await visibleEvents(deps, recipients);
        const link = nextLink(request.url, query, page);
        if (link) set.headers["link"] = link;
        return page.items.map((m) => ({
          ...messageRecord(m),
          recipients: recipients
            .filter((r) => r.messageId === m.id)
            .map((r) => ({
              email: r.email,
              type: r.type,
              status: r.status,
              last_event: events.get(r.id)?.at(-1) ? eventRecord(events.get(r.id)!.at(-1)!) : null,
            })),
        }));
      },
      {
        query: t.Object({
          outbound_account_id: t.String({ description: "the outbound account (SMTP username) whose messages to list" }),
          ...pagingQueryFields,
        }),
        response: { 200: t.Array(ListedMessageSchema), ...errorResponses(401, 403, 404, 422, 429, 503) },
        detail: {
          operationId: "listOutboundMessages",
          summary: "E12: sent messages, newest first (50 a page), each recipient with its last event",
          description:
            "query: field:value for status, to, from, subject, tag, created_at:>=2026-11-01; a bare word matches subject, from or to.",
          tags: ["Sent messages"],
          security,
        },
      },
    )
    .get(
      "/outbound_messages/:outboundMessageId",
      async ({ account, params }) => {
        const m = await deps.outbound.getMessage(account.id, params.outboundMessageId);
        if (!m) throw notFound(noMessage(account.id, params.outboundMessageId));
        const recipients = await deps.outbound.recipientsOf([m.id]);
        const events = await visibleEvents(deps, recipients);
        return {
          ...messageRecord(m),
          recipients: recipients.map((r) => ({
            email: r.email,
            type: r.type,
            status: r.status,
            events: (events.get(r.id) ?? []).map(eventRecord),
          })),
        };
      },
      {
        params: t.Object({ accountId: t.String(), outboundMessageId: t.String() }),
        response: { 200: FullMessageSchema, ...errorResponses(401, 403, 404, 429) },
        detail: {
          operationId: "getOutboundMessage",
          summary: "E13: a sent message with every event of every recipient, in order",
          tags: ["Sent messages"],
          security,
        },
      },
    );
}
