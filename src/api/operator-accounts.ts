// (beyond) The operator API's accounts (API.md section 10): list, create, read, change,
// suspend and delete. Accounts from the config file are listed (`source: "config"`) and
// answer 409 to any change: the file is theirs. Every change is audited under the
// operator token's label and holds on this node before the answer (auth/tenant-admin.ts).
import { type Static, t } from "elysia";
import type { StoredAccount, StoredAccountFields } from "../auth/tenants.port.ts";
import { DEFAULT_RATE_LIMIT } from "../auth/tenant-accounts.ts";
import { parseRate } from "../config/units.ts";
import { conflict, errorResponses, invalid, notFound } from "../http/errors.ts";
import { oneLine } from "../http/text-checks.ts";
import { runQueueAction } from "../outbound/queue/queue-actions.ts";
import { operatorRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { queueActionDeps, type QueueRouteDeps } from "./queue.ts";
import { AccountRecordSchema, configRecord, NAME_MAX_CHARS, RATE_RULE, rateField, storedRecord } from "./operator-records.ts";

export const operatorSecurity = [{ operatorToken: [] }];
const tags = ["Operator"];
const AccountParams = t.Object({ id: t.String({ description: "the account's ID" }) });

const name = oneLine(NAME_MAX_CHARS, { minLength: 1, description: "a label for the operator and the logs" });
const flags = {
  rate_limit: t.Optional(rateField(`management API calls allowed per window (default "${DEFAULT_RATE_LIMIT}")`)),
  test_mode: t.Optional(t.Boolean({ description: "force test mode on every message of the account" })),
  markdown: t.Optional(t.Boolean({ description: "allow the markdown body on E11" })),
  domain_targets: t.Optional(t.Boolean({ description: "allow domain_target on custom domains" })),
};
const AccountCreateBody = t.Object({ name, ...flags }, { additionalProperties: false, title: "OperatorAccountInput" });
const AccountPatchBody = t.Object(
  {
    name: t.Optional(name),
    ...flags,
    suspended: t.Optional(
      t.Boolean({
        description:
          "refuse the account's tokens and keys (403) and its mail (550 5.7.1), and hold what it has queued; false releases its held mail",
      }),
    ),
  },
  { additionalProperties: false, title: "OperatorAccountPatch" },
);

/** A rate as given, once its number is checked too (the pattern takes "0/min"). */
export function checkedRate(field: string, text: string | undefined, fallback: string): string {
  if (text === undefined) return fallback;
  if (parseRate(text) === undefined) throw invalid(field, RATE_RULE);
  return text.trim().replace(/\s+/g, "");
}

/** What the routes take of the API's dependencies. */
export type OperatorDeps = Pick<ApiDeps, "registry" | "tenants" | "logger">;
export type OperatorAccountDeps = OperatorDeps & QueueRouteDeps;

/** 404 for an unknown (or deleted) account, 409 for a config account: what a change may be made to. */
export async function storedAccount(deps: OperatorDeps, id: string): Promise<StoredAccount> {
  const found = await deps.tenants.changeable(id);
  if (found.kind === "config")
    throw conflict(`account ${id} is declared in the config file (accounts); change it there and reload, not through the API`);
  if (found.kind === "unknown") throw notFound(`Not Found: no account ${id}; GET /api/v0.1/operator/accounts lists them`);
  return found.account;
}

/** Most accounts GET /accounts answers at once (and its default): an answer stays a few MB. */
export const ACCOUNTS_PAGE_MAX = 1000;

/** The records after the ID `after`, in ID order, at most `limit` (a limit past the maximum is a 422). */
export function pageById<R extends { id: string }>(records: readonly R[], after: string | undefined, limit: number): R[] {
  if (!(limit >= 1 && limit <= ACCOUNTS_PAGE_MAX)) throw invalid("query limit", `must be a whole number from 1 to ${ACCOUNTS_PAGE_MAX}`);
  const sorted = records.toSorted((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return (after === undefined ? sorted : sorted.filter((r) => r.id > after)).slice(0, limit);
}

export function operatorAccountRoutes(deps: OperatorAccountDeps) {
  const log = deps.logger.child({ component: "operator" });
  const queue = queueActionDeps(deps);
  return operatorRoutes("operator-accounts")
    .get(
      "/accounts",
      async ({ query }) => {
        const fromConfig = deps.registry.all().filter((a) => deps.registry.source(a.id) === "config");
        const records = [
          ...fromConfig.map(configRecord),
          ...(await deps.tenants.all()).filter((a) => deps.registry.source(a.id) !== "config").map(storedRecord),
        ];
        return pageById(records, query.after, Number(query.limit ?? ACCOUNTS_PAGE_MAX));
      },
      {
        query: t.Object({
          after: t.Optional(t.String({ description: "the last account ID of the page before: the accounts after it, by ID" })),
          limit: t.Optional(
            t.String({
              pattern: "^[1-9][0-9]{0,3}$",
              description: `most accounts, 1 to ${ACCOUNTS_PAGE_MAX} (default ${ACCOUNTS_PAGE_MAX})`,
              errorMessage: `must be a whole number from 1 to ${ACCOUNTS_PAGE_MAX}`,
            }),
          ),
        }),
        response: { 200: t.Array(AccountRecordSchema), ...errorResponses(401, 403, 422) },
        detail: {
          operationId: "listAccounts",
          summary: "(beyond) the accounts, the config's and the API's, by ID, a page at a time (?after=, ?limit=)",
          tags,
          security: operatorSecurity,
        },
      },
    )
    .post(
      "/accounts",
      async ({ body, operator, set }) => {
        const fields: StoredAccountFields = {
          name: body.name,
          rateLimit: checkedRate("rate_limit", body.rate_limit, DEFAULT_RATE_LIMIT),
          testMode: body.test_mode ?? false,
          markdown: body.markdown ?? false,
          domainTargets: body.domain_targets ?? false,
          suspended: false,
        };
        const account = await deps.tenants.createAccount({ operator: operator.tokenLabel }, fields);
        log.info("operator created an account", { operator: operator.tokenLabel, account_id: account.id });
        set.status = 201;
        return storedRecord(account);
      },
      {
        body: AccountCreateBody,
        response: { 201: AccountRecordSchema, ...errorResponses(401, 403, 413, 422) },
        detail: { operationId: "createAccount", summary: "(beyond) create an account", tags, security: operatorSecurity },
      },
    )
    .get(
      "/accounts/:id",
      async ({ params }) => {
        const config = deps.registry.source(params.id) === "config" ? deps.registry.account(params.id) : undefined;
        if (config) return configRecord(config);
        return storedRecord(await storedAccount(deps, params.id));
      },
      {
        params: AccountParams,
        response: { 200: AccountRecordSchema, ...errorResponses(401, 403, 404) },
        detail: {
          operationId: "getAccount",
          summary: "(beyond) one account, its tokens and outbound accounts",
          tags,
          security: operatorSecurity,
        },
      },
    )
    .patch(
      "/accounts/:id",
      async ({ params, body, operator }) => {
        const before = await storedAccount(deps, params.id);
        const fields = patched(before, body);
        const after = await deps.tenants.updateAccount({ operator: operator.tokenLabel }, before, fields);
        if (!after) throw notFound(`Not Found: no account ${params.id}; GET /api/v0.1/operator/accounts lists them`);
        log.info("operator changed an account", { operator: operator.tokenLabel, account_id: after.id, suspended: after.suspended });
        // A tenant is suspended to stop its mail (abuse, an unpaid bill): what it has queued is
        // held too, on every node, and released when it is resumed. Given in the body, not only
        // when it changed, so a PATCH retried after a failure here still does it.
        if (body.suspended !== undefined) {
          const action = body.suspended ? "hold" : "release";
          let affected = 0;
          for (const o of after.outbound) affected += await runQueueAction(queue, action, { outboundAccountId: o.id });
          log.info(`queue ${action}`, {
            operator: operator.tokenLabel,
            account_id: after.id,
            affected,
            why: "account suspended or resumed",
          });
        }
        return storedRecord(after);
      },
      {
        params: AccountParams,
        body: AccountPatchBody,
        response: { 200: AccountRecordSchema, ...errorResponses(401, 403, 404, 409, 413, 422) },
        detail: {
          operationId: "updateAccount",
          summary: "(beyond) change, suspend or resume an account (409 for a config account)",
          tags,
          security: operatorSecurity,
        },
      },
    )
    .delete(
      "/accounts/:id",
      async ({ params, operator, set }) => {
        const before = await storedAccount(deps, params.id);
        if (!(await deps.tenants.deleteAccount({ operator: operator.tokenLabel }, before.id)))
          throw notFound(`Not Found: no account ${params.id}; GET /api/v0.1/operator/accounts lists them`);
        log.info("operator deleted an account", { operator: operator.tokenLabel, account_id: before.id });
        set.status = 202;
        return storedRecord({ ...before, tokens: [], outbound: before.outbound.map((o) => ({ ...o, keys: [] })) });
      },
      {
        params: AccountParams,
        response: { 202: AccountRecordSchema, ...errorResponses(401, 403, 404, 409) },
        detail: {
          operationId: "deleteAccount",
          summary: "(beyond) delete an account: its tokens and keys stop at once, mail to its addresses is refused",
          tags,
          security: operatorSecurity,
        },
      },
    );
}

function patched(before: StoredAccount, body: Static<typeof AccountPatchBody>): StoredAccountFields {
  return {
    name: body.name ?? before.name,
    rateLimit: checkedRate("rate_limit", body.rate_limit, before.rateLimit),
    testMode: body.test_mode ?? before.testMode,
    markdown: body.markdown ?? before.markdown,
    domainTargets: body.domain_targets ?? before.domainTargets,
    suspended: body.suspended ?? before.suspended,
  };
}
