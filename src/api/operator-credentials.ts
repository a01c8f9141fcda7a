// (beyond) The operator API's credentials of an account made through the API (API.md
// section 10): API tokens (scopes read, or read and write), outbound accounts (the SMTP
// username with its first key) and their keys (two live at most, for rotation). Each
// secret is in the answer that made it and nowhere else: the store keeps its SHA-256.
import { t } from "elysia";
import type { Config } from "../config/config.ts";
import { DEFAULT_SEND_RATE_LIMIT } from "../auth/tenant-accounts.ts";
import { MAX_LIVE_KEYS } from "../auth/tenants.port.ts";
import { conflict, errorResponses, invalid, notFound } from "../http/errors.ts";
import { oneLine } from "../http/text-checks.ts";
import { operatorRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { checkedRate, type OperatorDeps, operatorSecurity, storedAccount } from "./operator-accounts.ts";
import { IP_POOL_MAX_CHARS, NAME_MAX_CHARS, OutboundRecordSchema, outboundRecord, rateField, scopesOf } from "./operator-records.ts";

const tags = ["Operator"];
const secret = (what: string) => t.String({ description: `${what}: shown in this answer only, keep it now` });
const TokenBody = t.Object(
  {
    name: t.Optional(oneLine(NAME_MAX_CHARS, { description: "a label for the operator" })),
    scopes: t.Optional(t.Array(t.String({ maxLength: 20 }), { maxItems: 2, description: '["read"] or ["read", "write"] (the default)' })),
  },
  { additionalProperties: false, title: "ApiTokenInput" },
);
const OutboundBody = t.Object(
  {
    name: t.Optional(oneLine(NAME_MAX_CHARS, { description: "a label for the operator" })),
    send_rate_limit: t.Optional(rateField(`sends allowed per window through E11 and SMTP (default "${DEFAULT_SEND_RATE_LIMIT}")`)),
    ip_pool: t.Optional(
      t.Union([oneLine(IP_POOL_MAX_CHARS, { minLength: 1 }), t.Null()], { description: "the IP pool its mail leaves from" }),
    ),
    test_mode: t.Optional(t.Boolean({ description: "force test mode on every message" })),
  },
  { additionalProperties: false, title: "OutboundAccountInput" },
);
/** Their bodies are optional: none is the same as {} (the group's parser gives null for an empty body). */
const emptyBodyIsObject = { transform: (ctx: { body: unknown }) => void (ctx.body ??= {}) };
const NewTokenSchema = t.Object(
  {
    id: t.String(),
    name: t.String(),
    scopes: t.Array(t.Union([t.Literal("read"), t.Literal("write")])),
    token: secret("the API token"),
    created_at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false, title: "NewApiToken" },
);
const NewOutboundSchema = t.Composite([OutboundRecordSchema, t.Object({ key: secret("its first key (the SMTP password and E11 key)") })], {
  additionalProperties: false,
  title: "NewOutboundAccount",
});
const NewKeySchema = t.Object(
  { id: t.String(), outbound_account_id: t.String(), key: secret("the key"), created_at: t.String({ format: "date-time" }) },
  { additionalProperties: false, title: "NewOutboundKey" },
);
const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) }, { additionalProperties: false, title: "Revoked" });

/** The scopes of a new token: read-only, or read and write; anything else names the rule. */
function readOnlyOf(scopes: string[] | undefined): boolean {
  if (scopes === undefined) return false;
  const unknown = scopes.findIndex((s) => s !== "read" && s !== "write");
  if (unknown >= 0) throw invalid(`scopes[${unknown}]`, `unknown scope "${scopes[unknown]}": the scopes are "read" and "write"`);
  const set = new Set(scopes);
  if (set.size === 1 && set.has("read")) return true;
  if (set.size === 2) return false;
  throw invalid("scopes", 'must be ["read"] or ["read", "write"]');
}

/** The account was deleted while the call ran. */
const gone = (accountId: string) => notFound(`Not Found: no account ${accountId}; GET /api/v0.1/operator/accounts lists them`);

const noOutbound = (accountId: string, id: string) =>
  notFound(`Not Found: account ${accountId} has no outbound account ${id}; GET /api/v0.1/operator/accounts/${accountId} lists them`);

/** The pool named, once it is one of the config's [[outbound.ip_pools]] (a name of none would send from the default address unseen). */
function checkedPool(config: Config, name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null;
  const pools = config.outbound.ipPools.map((p) => `"${p.name}"`);
  if (pools.includes(`"${name}"`)) return name;
  throw invalid(
    "ip_pool",
    pools.length > 0
      ? `must name one of the config's [[outbound.ip_pools]]: ${pools.join(", ")}`
      : "must name one of the config's [[outbound.ip_pools]], and the config has none: add the pool there first",
  );
}

export function operatorCredentialRoutes(deps: OperatorDeps & Pick<ApiDeps, "config">) {
  const log = deps.logger.child({ component: "operator" });
  return operatorRoutes("operator-credentials")
    .post(
      "/accounts/:id/api_tokens",
      async ({ params, body, operator, set }) => {
        const readOnly = readOnlyOf(body.scopes);
        const account = await storedAccount(deps, params.id);
        const minted = await deps.tenants.mintToken({ operator: operator.tokenLabel }, account.id, body.name ?? "", readOnly);
        if (!minted) throw gone(account.id);
        const { token, secret } = minted;
        log.info("operator minted an API token", {
          operator: operator.tokenLabel,
          account_id: account.id,
          token_id: token.id,
          read_only: readOnly,
        });
        set.status = 201;
        return {
          id: token.id,
          name: token.name,
          scopes: scopesOf(readOnly),
          token: secret,
          created_at: new Date(token.createdAtMs).toISOString(),
        };
      },
      {
        params: t.Object({ id: t.String() }),
        body: TokenBody,
        ...emptyBodyIsObject,
        response: { 201: NewTokenSchema, ...errorResponses(401, 403, 404, 409, 413, 422) },
        detail: {
          operationId: "createApiToken",
          summary: "(beyond) mint an API token of an account (shown once)",
          tags,
          security: operatorSecurity,
        },
      },
    )
    .delete(
      "/accounts/:id/api_tokens/:tokenId",
      async ({ params, operator, set }) => {
        const account = await storedAccount(deps, params.id);
        if (!(await deps.tenants.revokeToken({ operator: operator.tokenLabel }, account.id, params.tokenId)))
          throw notFound(
            `Not Found: account ${account.id} has no API token ${params.tokenId}; GET /api/v0.1/operator/accounts/${account.id} lists them`,
          );
        log.info("operator revoked an API token", { operator: operator.tokenLabel, account_id: account.id, token_id: params.tokenId });
        set.status = 202;
        return { id: params.tokenId, deleted: true as const };
      },
      {
        params: t.Object({ id: t.String(), tokenId: t.String() }),
        response: { 202: Deleted, ...errorResponses(401, 403, 404, 409) },
        detail: {
          operationId: "revokeApiToken",
          summary: "(beyond) revoke an API token: refused (401) on every node at once",
          tags,
          security: operatorSecurity,
        },
      },
    )
    .post(
      "/accounts/:id/outbound_accounts",
      async ({ params, body, operator, set }) => {
        const input = {
          name: body.name ?? "",
          sendRateLimit: checkedRate("send_rate_limit", body.send_rate_limit, DEFAULT_SEND_RATE_LIMIT),
          ipPool: checkedPool(deps.config(), body.ip_pool),
          testMode: body.test_mode ?? false,
        };
        const account = await storedAccount(deps, params.id);
        const made = await deps.tenants.createOutbound({ operator: operator.tokenLabel }, account.id, input);
        if (!made) throw gone(account.id);
        const { outbound, secret } = made;
        log.info("operator created an outbound account", {
          operator: operator.tokenLabel,
          account_id: account.id,
          outbound_account_id: outbound.id,
        });
        set.status = 201;
        return { ...outboundRecord(outbound), key: secret };
      },
      {
        params: t.Object({ id: t.String() }),
        body: OutboundBody,
        ...emptyBodyIsObject,
        response: { 201: NewOutboundSchema, ...errorResponses(401, 403, 404, 409, 413, 422) },
        detail: {
          operationId: "createOutboundAccount",
          summary: "(beyond) create an outbound account: its id is the SMTP username, its key (shown once) the password and E11 key",
          tags,
          security: operatorSecurity,
        },
      },
    )
    .post(
      "/accounts/:id/outbound_accounts/:outboundId/keys",
      async ({ params, operator, set }) => {
        const account = await storedAccount(deps, params.id);
        const { result, key, secret } = await deps.tenants.addKey({ operator: operator.tokenLabel }, account.id, params.outboundId);
        if (result === "no_such_outbound") throw noOutbound(account.id, params.outboundId);
        if (result === "too_many")
          throw conflict(
            `outbound account ${params.outboundId} has ${MAX_LIVE_KEYS} live keys already; delete the old one (DELETE .../keys/{keyId}) before adding another`,
          );
        log.info("operator added an outbound key", {
          operator: operator.tokenLabel,
          outbound_account_id: params.outboundId,
          key_id: key.id,
        });
        set.status = 201;
        return { id: key.id, outbound_account_id: params.outboundId, key: secret, created_at: new Date(key.createdAtMs).toISOString() };
      },
      {
        params: t.Object({ id: t.String(), outboundId: t.String() }),
        response: { 201: NewKeySchema, ...errorResponses(401, 403, 404, 409) },
        detail: {
          operationId: "createOutboundKey",
          summary: `(beyond) a further key for rotation (at most ${MAX_LIVE_KEYS} live; shown once)`,
          tags,
          security: operatorSecurity,
        },
      },
    )
    .delete(
      "/accounts/:id/outbound_accounts/:outboundId/keys/:keyId",
      async ({ params, operator, set }) => {
        const account = await storedAccount(deps, params.id);
        if (!(await deps.tenants.revokeKey({ operator: operator.tokenLabel }, account.id, params.outboundId, params.keyId)))
          throw notFound(`Not Found: outbound account ${params.outboundId} of account ${account.id} has no key ${params.keyId}`);
        log.info("operator revoked an outbound key", {
          operator: operator.tokenLabel,
          outbound_account_id: params.outboundId,
          key_id: params.keyId,
        });
        set.status = 202;
        return { id: params.keyId, deleted: true as const };
      },
      {
        params: t.Object({ id: t.String(), outboundId: t.String(), keyId: t.String() }),
        response: { 202: Deleted, ...errorResponses(401, 403, 404, 409) },
        detail: {
          operationId: "revokeOutboundKey",
          summary: "(beyond) revoke an outbound key: refused at once",
          tags,
          security: operatorSecurity,
        },
      },
    );
}
