// (beyond) GET /api/v0.1/operator/audit: what operators did to accounts, newest first
// (who: the operator token's label; what; when; which account), 50 a page with a Link to
// the next. `account_id` narrows it to one account.
import { t } from "elysia";
import { AUDIT_ACTIONS } from "../auth/audit.port.ts";
import { errorResponses } from "../http/errors.ts";
import { isoTime } from "../lib/clock.ts";
import { operatorRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { operatorSecurity } from "./operator-accounts.ts";
import { nextLink, pageRequest, pagingQueryFields } from "./paging.ts";

const AuditRecordSchema = t.Object(
  {
    id: t.String(),
    created_at: t.String({ format: "date-time" }),
    operator: t.String({ description: "the operator token's label: admin_tokens:<first 12 hex of its hash>" }),
    action: t.String({ description: `one of ${AUDIT_ACTIONS.join(", ")}` }),
    account_id: t.String(),
    details: t.Record(t.String(), t.Unknown(), { description: "what changed; never a secret" }),
  },
  { additionalProperties: false, title: "AuditEntry" },
);

export function operatorAuditRoutes(deps: Pick<ApiDeps, "audit">) {
  return operatorRoutes("operator-audit").get(
    "/audit",
    async ({ query, request, set }) => {
      const page = await deps.audit.list(query.account_id ?? null, pageRequest(query));
      const link = nextLink(request.url, query, page);
      if (link) set.headers["link"] = link;
      return page.items.map((e) => ({
        id: e.id,
        created_at: isoTime(e.createdAtMs),
        operator: e.operator,
        action: e.action,
        account_id: e.target,
        details: e.details,
      }));
    },
    {
      query: t.Object({
        account_id: t.Optional(t.String({ maxLength: 16, description: "only this account's entries" })),
        page: pagingQueryFields.page,
        before: pagingQueryFields.before,
      }),
      response: { 200: t.Array(AuditRecordSchema), ...errorResponses(401, 403, 422) },
      detail: {
        operationId: "listAudit",
        summary: "(beyond) operator actions on accounts, newest first",
        tags: ["Operator"],
        security: operatorSecurity,
      },
    },
  );
}
