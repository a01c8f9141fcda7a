// (beyond) The suppression list: addresses an outbound account no longer sends to after
// a hard bounce or a complaint, or because someone put them there. Under the account's
// bearer token; listed newest first with `query` matching part of the address.
import { type Static, t } from "elysia";
import { isoTime } from "../lib/clock.ts";
import { newId16 } from "../lib/ids.ts";
import { isAddress } from "../outbound/compose/addresses.ts";
import type { Suppression } from "../outbound/suppressions/suppression.ts";
import type { AccountConfig } from "../config/config.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { errorResponses, invalid, notFound } from "../http/errors.ts";
import { noOutboundAccount, noRecord } from "../http/refusals.ts";
import { nextLink, pageRequest, pagingQueryFields } from "./paging.ts";
import { oneLine } from "../http/text-checks.ts";

const security = [{ bearerAPIToken: [] }];

const SuppressionSchema = t.Object(
  {
    id: t.String(),
    outbound_account_id: t.String(),
    email: t.String(),
    reason: t.Union([t.Literal("bounce"), t.Literal("complaint"), t.Literal("manual")]),
    details: t.Record(t.String(), t.Unknown(), { description: "the bounce or complaint that caused it" }),
    created_at: t.String({ format: "date-time" }),
    expires_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description:
        "when the entry stops applying (a hard bounce's, outbound.suppression_ttl after it); null: never (complaints, manual entries)",
    }),
  },
  { additionalProperties: false, title: "Suppression" },
);

const record = (s: Suppression): Static<typeof SuppressionSchema> => ({
  id: s.id,
  outbound_account_id: s.outboundAccountId,
  email: s.email,
  reason: s.reason,
  details: s.details,
  created_at: isoTime(s.createdAtMs),
  expires_at: s.expiresAtMs === null ? null : isoTime(s.expiresAtMs),
});

/** What the routes take of the API's dependencies. */
export type SuppressionDeps = Pick<ApiDeps, "clock" | "suppressions">;

export function suppressionRoutes(deps: SuppressionDeps) {
  const ownOutbound = (account: AccountConfig, id: string | undefined) => {
    if (id === undefined) return null;
    if (!account.outbound.some((o) => o.id === id)) throw notFound(noOutboundAccount(id));
    return id;
  };
  return accountRoutes("suppressions")
    .get(
      "/suppressions",
      async ({ account, request, query, set }) => {
        const page = await deps.suppressions.list(
          account.id,
          ownOutbound(account, query.outbound_account_id),
          query.query?.trim() || null,
          pageRequest(query),
        );
        const link = nextLink(request.url, query, page);
        if (link) set.headers["link"] = link;
        return page.items.map(record);
      },
      {
        query: t.Object({
          outbound_account_id: t.Optional(t.String({ description: "only this outbound account's list" })),
          ...pagingQueryFields,
        }),
        response: { 200: t.Array(SuppressionSchema), ...errorResponses(401, 403, 404, 422, 429) },
        detail: {
          operationId: "listSuppressions",
          summary: "(beyond) suppressed recipients, newest first",
          tags: ["Suppressions"],
          security,
        },
      },
    )
    .post(
      "/suppressions",
      async ({ account, body, set }) => {
        const outboundId = ownOutbound(account, body.outbound_account_id)!;
        if (!isAddress(body.email)) throw invalid("email", "is not an email address");
        const s = await deps.suppressions.add({
          id: newId16(),
          accountId: account.id,
          outboundAccountId: outboundId,
          email: body.email,
          reason: "manual",
          details: {},
          createdAtMs: deps.clock.nowMs(),
          expiresAtMs: null,
        });
        set.status = 201;
        return record(s);
      },
      {
        body: t.Object(
          { outbound_account_id: t.String(), email: oneLine(320) },
          { additionalProperties: false, title: "SuppressionInput" },
        ),
        response: { 201: SuppressionSchema, ...errorResponses(401, 403, 404, 413, 422, 429) },
        detail: {
          operationId: "createSuppression",
          summary: "(beyond) stop sending to an address (idempotent: an existing entry is returned)",
          tags: ["Suppressions"],
          security,
        },
      },
    )
    .delete(
      "/suppressions/:suppressionId",
      async ({ account, params, set }) => {
        const s = await deps.suppressions.get(account.id, params.suppressionId);
        if (!s || !(await deps.suppressions.remove(s.accountId, s.id)))
          throw notFound(noRecord("suppression", params.suppressionId, `GET /api/v0.1/${account.id}/suppressions`));
        set.status = 202;
        return record(s);
      },
      {
        params: t.Object({ accountId: t.String(), suppressionId: t.String() }),
        response: { 202: SuppressionSchema, ...errorResponses(401, 403, 404, 429) },
        detail: { operationId: "deleteSuppression", summary: "(beyond) send to an address again", tags: ["Suppressions"], security },
      },
    );
}
