// E14-E18: sending domains of an account, and checking their DNS records.
import { type Static, t } from "elysia";
import { namesOf } from "../domains/checker.ts";
import { ed25519Record, rsaRecord } from "../domains/keys.ts";
import { SendingDomainTakenError, type SendingDomain } from "../domains/sending-domain.ts";
import { isoTime } from "../lib/clock.ts";
import { normalizeDomain } from "../lib/domain-name.ts";
import type { AccountConfig } from "../config/config.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { type DomainClaimDeps, settleDomainClaim } from "./domain-claims.ts";
import { DomainConflictSchema, errorResponses, invalid, notFound } from "../http/errors.ts";
import { noRecord } from "../http/refusals.ts";
import { nextLink, pageRequest, pagingQueryFields } from "./paging.ts";
import { oneLine } from "../http/text-checks.ts";

const security = [{ bearerAPIToken: [] }];

const DnsRecordSchema = t.Object(
  {
    type: t.String({ description: "TXT or CNAME" }),
    host: t.String(),
    value: t.String({ description: "exactly what to publish" }),
    purpose: t.String({ description: "dkim, return_path, spf (on the bounce host, by the operator) or dkim_ed25519 (optional)" }),
    required: t.Boolean({ description: "whether sending waits for it" }),
    verified: t.Boolean(),
    reason: t.Union([t.String(), t.Null()], { description: "why it does not check out, at the last look" }),
  },
  { additionalProperties: false, title: "DnsRecord" },
);

const fixText = (what: string) => t.Union([t.String(), t.Null()], { description: `what to publish or change so ${what}; null when it is` });

const DomainHealthSchema = t.Object(
  {
    dmarc: t.Union([t.Literal("missing"), t.Literal("none"), t.Literal("quarantine"), t.Literal("reject")], {
      description: "the DMARC policy receivers apply to mail from the domain (its _dmarc record, or a parent's)",
    }),
    dmarc_record: t.Union([t.String(), t.Null()], { description: "the DMARC record found; null when none" }),
    dkim_aligned: t.Boolean({ description: "our DKIM signature (d= the domain) verifies, so DMARC passes on DKIM" }),
    return_path_aligned: t.Boolean({
      description: "the return path (mta_domain) passes SPF and aligns with the domain under its DMARC record",
    }),
    fix: t.Object(
      {
        dmarc: fixText("the domain has an enforced DMARC policy"),
        dkim_aligned: fixText("DKIM aligns"),
        return_path_aligned: fixText("the return path aligns"),
      },
      { additionalProperties: false },
    ),
    unknown: t.Union([t.String(), t.Null()], {
      description: "why the DMARC lookup failed at the last check (the policy shown is the one seen before); null when it did not",
    }),
  },
  { additionalProperties: false, title: "DomainHealth" },
);

const SendingDomainSchema = t.Object(
  {
    id: t.String({ pattern: "^[0-9a-f]{16}$" }),
    domain: t.String(),
    mta_domain: t.String(),
    dkim_selector: t.String(),
    dkim_domain: t.String(),
    dkim_public_record: t.String(),
    required_cname: t.String(),
    dkim_verified: t.Boolean(),
    return_path_verified: t.Boolean(),
    spf_verified: t.Boolean(),
    created_at: t.String({ format: "date-time" }),
    verified_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    dns_records: t.Array(DnsRecordSchema),
    sending_status: t.Union([t.Literal("verified"), t.Literal("grace"), t.Literal("unverified")], {
      description: "(beyond) whether mail may go out from it now",
    }),
    grace_until: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description: "(beyond) when a verified domain whose records fail stops sending",
    }),
    checked_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    dkim_ed25519_selector: t.String({ description: "(beyond) RFC 8463 signature, added once its record is published" }),
    dkim_ed25519_domain: t.String(),
    dkim_ed25519_public_record: t.String(),
    dkim_ed25519_verified: t.Boolean(),
    health: t.Union([DomainHealthSchema, t.Null()], {
      description:
        "(beyond) deliverability: DMARC and alignment with what to fix, at the last check (E18 or the hourly verifier); null until checked",
    }),
  },
  { additionalProperties: false, title: "SendingDomain" },
);

type Record = Static<typeof SendingDomainSchema>;

/**
 * The SPF record the bounce host must carry, or null while outbound.sending_ips is empty:
 * then the only record there is to offer is `v=spf1 -all`, which authorises nobody and
 * would make every message fail SPF, so none is offered until the addresses are known
 * (`postroom check-config` warns about it).
 */
function spfValue(ips: readonly string[]): string | null {
  if (ips.length === 0) return null;
  return `v=spf1 ${ips.map((ip) => (ip.includes(":") ? `ip6:${ip}` : `ip4:${ip}`)).join(" ")} -all`;
}

/** What the routes take of the API's dependencies. */
export type SendingDomainDeps = DomainClaimDeps & Pick<ApiDeps, "domains">;

export function sendingDomainRoutes(deps: SendingDomainDeps) {
  const record = (d: SendingDomain): Record => {
    const config = deps.config();
    const names = namesOf(d, config.outbound.bounceHost);
    const status = deps.domains.status(d);
    const spf = spfValue(config.outbound.sendingIps);
    const row = (type: string, host: string, value: string, purpose: string, required: boolean, check: keyof SendingDomain["checks"]) => ({
      type,
      host,
      value,
      purpose,
      required,
      verified: d.checks[check],
      reason: d.checks[check] ? null : (d.reasons[check] ?? (d.checkedAtMs === null ? "not checked yet" : null)),
    });
    return {
      id: d.id,
      domain: d.domain,
      mta_domain: names.mtaDomain,
      dkim_selector: d.dkimSelector,
      dkim_domain: names.dkimDomain,
      dkim_public_record: rsaRecord(d.dkimPublicKey),
      required_cname: names.requiredCname,
      dkim_verified: d.checks.dkim,
      return_path_verified: d.checks.return_path,
      spf_verified: d.checks.spf,
      created_at: isoTime(d.createdAtMs),
      verified_at: d.verifiedAtMs === null ? null : isoTime(d.verifiedAtMs),
      dns_records: [
        row("TXT", names.dkimDomain, rsaRecord(d.dkimPublicKey), "dkim", true, "dkim"),
        row("CNAME", names.mtaDomain, names.requiredCname, "return_path", true, "return_path"),
        ...(spf === null ? [] : [row("TXT", names.requiredCname, spf, "spf", true, "spf")]),
        row("TXT", names.ed25519Domain, ed25519Record(d.ed25519PublicKey), "dkim_ed25519", false, "ed25519"),
      ],
      sending_status: status,
      grace_until: status === "grace" && d.failingSinceMs !== null ? isoTime(d.failingSinceMs + config.domains.graceMs) : null,
      checked_at: d.checkedAtMs === null ? null : isoTime(d.checkedAtMs),
      dkim_ed25519_selector: d.ed25519Selector,
      dkim_ed25519_domain: names.ed25519Domain,
      dkim_ed25519_public_record: ed25519Record(d.ed25519PublicKey),
      dkim_ed25519_verified: d.checks.ed25519,
      health: d.health,
    };
  };
  const owned = async (account: AccountConfig, id: string) => {
    const d = await deps.sendingDomains.get(account.id, id);
    if (!d) throw notFound(noRecord("sending domain", id, `GET /api/v0.1/${account.id}/sending_domains`));
    return d;
  };
  const params = t.Object({ accountId: t.String(), sendingDomainId: t.String() });

  return accountRoutes("sending-domains")
    .get(
      "/sending_domains",
      async ({ account, request, query, set }) => {
        const page = await deps.sendingDomains.list(account.id, query.query?.trim() || null, pageRequest(query));
        const link = nextLink(request.url, query, page);
        if (link) set.headers["link"] = link;
        return page.items.map(record);
      },
      {
        query: t.Object(pagingQueryFields),
        response: { 200: t.Array(SendingDomainSchema), ...errorResponses(401, 403, 422, 429) },
        detail: {
          operationId: "listSendingDomains",
          summary: "E14: sending domains, newest first; query matches part of the domain",
          tags: ["Sending domains"],
          security,
        },
      },
    )
    .post(
      "/sending_domains",
      async ({ account, body, set }) => {
        const domain = normalizeDomain(body.domain);
        if (!domain) throw invalid("domain", "must be a domain name such as example.com");
        const accountId = account.id;
        await settleDomainClaim(deps, accountId, domain, "sending_domain");
        try {
          const d = await deps.domains.create(accountId, domain);
          set.status = 201;
          return record(d);
        } catch (err) {
          if (err instanceof SendingDomainTakenError) throw invalid("domain", `${domain} is already a sending domain of this account`);
          throw err;
        }
      },
      {
        body: t.Object(
          { domain: oneLine(253, { description: "the domain mail will come from" }) },
          { additionalProperties: false, title: "SendingDomainInput" },
        ),
        response: { 201: SendingDomainSchema, ...errorResponses(401, 403, 413, 422, 429), 409: DomainConflictSchema },
        detail: {
          operationId: "createSendingDomain",
          summary: "E15: add a sending domain; publish its dns_records, then verify",
          tags: ["Sending domains"],
          security,
        },
      },
    )
    .get("/sending_domains/:sendingDomainId", async ({ account, params: p }) => record(await owned(account, p.sendingDomainId)), {
      params,
      response: { 200: SendingDomainSchema, ...errorResponses(401, 403, 404, 429) },
      detail: { operationId: "getSendingDomain", summary: "E16: a sending domain", tags: ["Sending domains"], security },
    })
    .delete(
      "/sending_domains/:sendingDomainId",
      async ({ account, params: p, set }) => {
        const d = await owned(account, p.sendingDomainId);
        if (!(await deps.sendingDomains.softDelete(d.accountId, d.id, deps.clock.nowMs())))
          throw notFound(noRecord("sending domain", d.id, `GET /api/v0.1/${account.id}/sending_domains`));
        set.status = 202;
        return record(d);
      },
      {
        params,
        response: { 202: SendingDomainSchema, ...errorResponses(401, 403, 404, 429) },
        detail: {
          operationId: "deleteSendingDomain",
          summary: "E17: delete a sending domain; mail from it is refused from then on",
          tags: ["Sending domains"],
          security,
        },
      },
    )
    .post(
      "/sending_domains/:sendingDomainId/verify",
      async ({ account, params: p, set }) => {
        const d = await deps.domains.verify(await owned(account, p.sendingDomainId));
        const allPass = d.checks.dkim && d.checks.return_path && d.checks.spf;
        set.status = allPass ? 200 : 422;
        return record(d);
      },
      {
        params,
        response: { 200: SendingDomainSchema, 422: SendingDomainSchema, ...errorResponses(401, 403, 404, 429) },
        detail: {
          operationId: "verifySendingDomain",
          summary: "E18: check the DNS records now; 200 when all three pass, else 422 with the record (see dns_records[].reason)",
          tags: ["Sending domains"],
          security,
        },
      },
    );
}
