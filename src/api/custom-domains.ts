// E7-E9: custom domains of an address.
import { type Static, t } from "elysia";
import { authRegexProblem, checkMx, DomainTakenError, type CustomDomain } from "../inbound/addresses/custom-domain.ts";
import { maskTarget, resolveTarget, targetAddressProblem, targetProblem, type StoredTarget } from "../inbound/addresses/target-url.ts";
import { isoTime } from "../lib/clock.ts";
import { normalizeDomain } from "../lib/domain-name.ts";
import { newId16 } from "../lib/ids.ts";
import type { AccountConfig } from "../config/config.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { type DomainClaimDeps, settleDomainClaim } from "./domain-claims.ts";
import { conflict, DomainConflictSchema, errorResponses, invalid, notFound } from "../http/errors.ts";
import { noRecord } from "../http/refusals.ts";
import { nextLink, pageRequest, pagingQueryFields } from "./paging.ts";
import { oneLine } from "../http/text-checks.ts";

const security = [{ bearerAPIToken: [] }];
const addressIdQuery = t.String({ description: "the address the domains belong to" });

const CustomDomainBody = t.Object(
  {
    domain: oneLine(253, { description: "domain whose mail goes to the address; point its MX at this server" }),
    auth_regex: t.Optional(
      t.Union([oneLine(1000), t.Null()], {
        errorMessage: "must be one line of at most 1000 characters without control characters, or null",
        description: "regular expression the whole recipient must match",
      }),
    ),
    domain_target: t.Optional(
      t.Union([oneLine(2048), t.Null()], {
        errorMessage: "must be a URL string (one line, at most 2048 characters) or null",
        description: "replaces the address target for this domain",
      }),
    ),
  },
  { additionalProperties: false, title: "CustomDomainInput" },
);

const CustomDomainRecordSchema = t.Object(
  {
    id: t.String({ pattern: "^[0-9a-f]{16}$" }),
    address_id: t.String(),
    domain: t.String(),
    auth_regex: t.Union([t.String(), t.Null()]),
    domain_target: t.Union([t.String(), t.Null()]),
    mx_host: t.String({ description: "the host the domain's MX must point at" }),
    mx_verified: t.Boolean({ description: "the MX pointed at mx_host when last checked" }),
    created_at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false, title: "CustomDomain" },
);

/** What the routes take of the API's dependencies. */
export type CustomDomainDeps = DomainClaimDeps & Pick<ApiDeps, "addresses">;

export function customDomainRoutes(deps: CustomDomainDeps) {
  const record = (d: CustomDomain): Static<typeof CustomDomainRecordSchema> => ({
    id: d.id,
    address_id: d.addressId,
    domain: d.domain,
    auth_regex: d.authRegex,
    domain_target: d.domainTarget === null ? null : maskTarget(d.domainTarget),
    mx_host: deps.config().hostname,
    mx_verified: d.mxVerified,
    created_at: isoTime(d.createdAtMs),
  });

  /** The caller's live address named by ?address_id=, or 404. */
  const ownedAddress = async (account: AccountConfig, addressId: string) => {
    const address = await deps.addresses.get(account.id, addressId);
    if (!address) throw notFound(noRecord("address", addressId, `GET /api/v0.1/${account.id}/addresses`));
    return address;
  };

  return accountRoutes("custom-domains")
    .get(
      "/custom_domains",
      async ({ account, request, query, set }) => {
        const address = await ownedAddress(account, query.address_id);
        const page = await deps.customDomains.list(address.accountId, address.id, query.query?.trim() || null, pageRequest(query));
        const link = nextLink(request.url, query, page);
        if (link) set.headers["link"] = link;
        return page.items.map(record);
      },
      {
        query: t.Object({ address_id: addressIdQuery, ...pagingQueryFields }),
        response: { 200: t.Array(CustomDomainRecordSchema), ...errorResponses(401, 403, 404, 422, 429) },
        detail: {
          operationId: "listCustomDomains",
          summary: "E7: list the custom domains of an address",
          tags: ["Custom domains"],
          security,
        },
      },
    )
    .post(
      "/custom_domains",
      async ({ account, query, body, set }) => {
        const address = await ownedAddress(account, query.address_id);
        const config = deps.config();
        const domain = normalizeDomain(body.domain);
        if (!domain) throw invalid("domain", "must be a domain name such as example.com");
        const authRegex = body.auth_regex ?? null;
        if (authRegex !== null) {
          const problem = authRegexProblem(authRegex);
          if (problem) throw invalid("auth_regex", problem);
        }
        let domainTarget: StoredTarget | null = null;
        if (body.domain_target != null) {
          if (!account.domainTargets)
            throw invalid("domain_target", "is not enabled for this account (an operator turns on accounts.domain_targets)");
          const problem = targetProblem(body.domain_target) ?? targetAddressProblem(body.domain_target, config.inbound.allowPrivateTargets);
          if (problem) throw invalid("domain_target", problem);
          domainTarget = resolveTarget(body.domain_target, null);
          if (!domainTarget) throw invalid("domain_target", "the password *** is the mask shown on read; send the real password");
        }
        // Last of the checks: a claim by DNS proof deletes another account's records.
        await settleDomainClaim(deps, address.accountId, domain, "custom_domain");
        const now = deps.clock.nowMs();
        const mxVerified = await checkMx(deps.resolver, domain, config.hostname);
        const created: CustomDomain = {
          id: newId16(),
          accountId: address.accountId,
          addressId: address.id,
          domain,
          authRegex,
          domainTarget,
          mxVerified,
          mxCheckedAtMs: now,
          createdAtMs: now,
        };
        try {
          await deps.customDomains.insert(created);
        } catch (err) {
          if (!(err instanceof DomainTakenError)) throw err;
          const holder = await deps.customDomains.findLiveByDomain(domain);
          if (holder?.accountId === address.accountId)
            throw invalid(
              "domain",
              `${domain} is already a custom domain of address ${holder.addressId} of this account; delete it there first`,
            );
          // Another account took it since the check: its 409, or (proof published) ask for a retry.
          await settleDomainClaim(deps, address.accountId, domain, "custom_domain");
          throw conflict(`${domain} was added by another request at the same moment; send this request again`);
        }
        set.status = 201;
        return record(created);
      },
      {
        query: t.Object({ address_id: addressIdQuery }),
        body: CustomDomainBody,
        response: { 201: CustomDomainRecordSchema, ...errorResponses(401, 403, 404, 413, 422, 429), 409: DomainConflictSchema },
        detail: { operationId: "createCustomDomain", summary: "E8: add a custom domain to an address", tags: ["Custom domains"], security },
      },
    )
    .delete(
      "/custom_domains/:customDomainId",
      async ({ account, params, query, set }) => {
        const address = await ownedAddress(account, query.address_id);
        const stored = await deps.customDomains.get(address.accountId, address.id, params.customDomainId);
        if (!stored || !(await deps.customDomains.softDelete(address.accountId, address.id, stored.id, deps.clock.nowMs())))
          throw notFound(
            noRecord("custom domain", params.customDomainId, `GET /api/v0.1/${account.id}/custom_domains?address_id=${address.id}`),
          );
        set.status = 202;
        return record(stored);
      },
      {
        params: t.Object({ accountId: t.String(), customDomainId: t.String() }),
        query: t.Object({ address_id: addressIdQuery }),
        response: { 202: CustomDomainRecordSchema, ...errorResponses(401, 403, 404, 422, 429) },
        detail: { operationId: "deleteCustomDomain", summary: "E9: delete a custom domain", tags: ["Custom domains"], security },
      },
    );
}
