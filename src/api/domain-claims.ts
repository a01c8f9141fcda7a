// Before a custom domain (E8) or a sending domain (E15) is stored: who else holds the
// domain, the decision (domains/ownership.ts), and, when another account holds it, the
// DNS TXT proof by which the real owner takes it back. With the proof published the other
// account's records in the way are deleted (and logged) before the caller's is stored;
// without it the answer is 409 naming the record to publish. Routing reads custom domains
// from the store on every RCPT, and a deleted sending domain is announced to every node's
// caches by its repository, so a moved domain routes to its new owner at once everywhere.
import {
  decideDomainClaim,
  proofPublished,
  proofRecord,
  returnPathOwners,
  type DomainHolding,
  type DomainUse,
} from "../domains/ownership.ts";
import type { ApiDeps } from "./deps.ts";
import { conflict } from "../http/errors.ts";

/** A holding and how to delete it. */
interface Held extends DomainHolding {
  remove(nowMs: number): Promise<boolean>;
  id: string;
}

/** What a claim by DNS proof takes: both kinds of domains, the resolver, the proof's key. */
export type DomainClaimDeps = Pick<
  ApiDeps,
  "config" | "clock" | "logger" | "resolver" | "customDomains" | "sendingDomains" | "trackingKey"
>;

async function holdingsOf(deps: DomainClaimDeps, domain: string, use: DomainUse): Promise<Held[]> {
  const held: Held[] = [];
  const custom = await deps.customDomains.findLiveByDomain(domain);
  if (custom) {
    held.push({
      kind: "custom_domain",
      accountId: custom.accountId,
      domain,
      id: custom.id,
      remove: (nowMs) => deps.customDomains.softDelete(custom.accountId, custom.addressId, custom.id, nowMs),
    });
  }
  if (use === "custom_domain") {
    const names = [domain, ...returnPathOwners(domain)];
    for (const d of await deps.sendingDomains.findLiveByDomains(names)) {
      held.push({
        kind: "sending_domain",
        accountId: d.accountId,
        domain: d.domain,
        id: d.id,
        remove: (nowMs) => deps.sendingDomains.softDelete(d.accountId, d.id, nowMs),
      });
    }
  }
  return held;
}

/**
 * Throws 409 when `claimantId` may not take `domain` (normalised) for `use`; returns once it
 * may, having deleted other accounts' records that a published proof takes the domain from.
 */
export async function settleDomainClaim(deps: DomainClaimDeps, claimantId: string, domain: string, use: DomainUse): Promise<void> {
  const config = deps.config();
  const holdings = await holdingsOf(deps, domain, use);
  const decision = decideDomainClaim({
    domain,
    use,
    claimantId,
    holdings,
    server: { inboundDomain: config.inbound.domain, bounceHost: config.outbound.bounceHost, hostname: config.hostname },
  });
  if (decision.kind === "allowed") return;
  if (decision.kind === "server_domain") throw conflict(decision.reason);
  // Uncached: the record was just published, and the 409 before it looked the name up.
  const dns = deps.resolver.uncached();
  for (const c of decision.conflicts) {
    const proof = proofRecord(deps.trackingKey, claimantId, c.heldDomain);
    const txt = await dns.resolveTxt(proof.host).catch(() => []);
    if (!proofPublished(txt, proof)) {
      throw conflict(
        `${c.reason}. If ${c.heldDomain} is yours, publish a TXT record at ${proof.host} with the value ${proof.value} and send this request again: ` +
          `the domain then moves to this account and the other account loses it`,
        { verification: proof },
      );
    }
  }
  const nowMs = deps.clock.nowMs();
  for (const c of decision.conflicts) {
    for (const h of c.holders as Held[]) {
      if (!(await h.remove(nowMs))) continue;
      deps.logger.warn("domain taken back by DNS proof", {
        domain,
        held_domain: c.heldDomain,
        as: h.kind,
        record_id: h.id,
        from_account: h.accountId,
        to_account: claimantId,
      });
    }
  }
}
