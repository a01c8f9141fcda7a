// Looks a sending domain's DMARC record up (its own _dmarc name, then its parents') and
// judges its health with the verifier's checks (dmarc.ts decides). A DNS failure is
// reported as such and keeps the policy seen last, never turning it into "missing".
import { type DnsResolver, isNoDataError } from "../lib/dns.ts";
import { type DmarcRecord, type DomainHealth, dmarcHosts, dmarcRecordAt, domainHealth, type HealthHosts, NO_DMARC } from "./dmarc.ts";
import type { CheckName } from "./sending-domain.ts";

/** The record that applies to `domain`, or the failure that stopped the walk. */
export async function lookupDmarc(resolver: DnsResolver, domain: string): Promise<DmarcRecord | { failed: string }> {
  const hosts = dmarcHosts(domain);
  for (const [i, host] of hosts.entries()) {
    let records: string[][];
    try {
      records = await resolver.resolveTxt(host);
    } catch (err) {
      if (isNoDataError(err)) continue;
      return {
        failed: `could not look up the DMARC record at ${host} (${(err as { code?: string }).code ?? (err as Error).message}); will try again`,
      };
    }
    const found = dmarcRecordAt(host, records, i === 0);
    if (found) return found;
  }
  return NO_DMARC;
}

export async function checkDomainHealth(
  resolver: DnsResolver,
  domain: string,
  hosts: HealthHosts,
  checks: Record<CheckName, boolean>,
  reasons: Partial<Record<CheckName, string>>,
  previous: DomainHealth | null,
): Promise<DomainHealth> {
  const dmarc = await lookupDmarc(resolver.uncached(), domain);
  if ("failed" in dmarc) {
    const kept: DmarcRecord = previous
      ? { ...NO_DMARC, policy: previous.dmarc, text: previous.dmarc_record, host: `_dmarc.${domain}` }
      : NO_DMARC;
    return domainHealth(domain, hosts, kept, checks, reasons, dmarc.failed);
  }
  return domainHealth(domain, hosts, dmarc, checks, reasons);
}
