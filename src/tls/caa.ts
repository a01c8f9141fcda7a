// CAA (RFC 8659): before ordering, find the CAA record set that governs each name (the
// name's own, else its closest ancestor's) and refuse to order when it does not let our
// CA issue. The CA would refuse anyway; checking first turns an opaque order failure
// into a sentence that says which record to change.
import { isNoDataError, type CaaRecord, type DnsResolver } from "../lib/dns.ts";

export type CaaVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * Whether `records` (the relevant set, found at `owner`) let a CA that calls itself one
 * of `caIdentities` issue for `name`. An empty list of identities (a CA that does not
 * publish them, such as a test CA) is allowed unless the set forbids every CA.
 */
export function caaVerdict(name: string, owner: string, records: readonly CaaRecord[], caIdentities: readonly string[]): CaaVerdict {
  const wildcard = name.startsWith("*.");
  const issueTag = wildcard && records.some((r) => r.tag.toLowerCase() === "issuewild") ? "issuewild" : "issue";
  const issuers = records.filter((r) => r.tag.toLowerCase() === issueTag).map((r) => issuerDomain(r.value));
  const unknownCritical = records.find((r) => (r.flags & 128) !== 0 && !["issue", "issuewild", "iodef"].includes(r.tag.toLowerCase()));
  if (unknownCritical) {
    return { allowed: false, reason: `CAA at ${owner} has a critical "${unknownCritical.tag}" property no CA may ignore` };
  }
  if (issuers.length === 0) return { allowed: true };
  const named = issuers.filter((d) => d !== "");
  if (named.length === 0) return { allowed: false, reason: `CAA at ${owner} forbids every CA to issue for ${name} (${issueTag} ";")` };
  if (caIdentities.length === 0) return { allowed: true };
  const ours = new Set(caIdentities.map((d) => d.toLowerCase()));
  if (named.some((d) => ours.has(d))) return { allowed: true };
  return {
    allowed: false,
    reason: `CAA at ${owner} lets only ${named.join(", ")} issue for ${name}, and this ACME server is ${caIdentities.join(", ")}: add ${owner}. CAA 0 ${issueTag} "${caIdentities[0]}"`,
  };
}

/** The issuer domain of an issue/issuewild value: `letsencrypt.org; accounturi=...` → letsencrypt.org. */
function issuerDomain(value: string): string {
  return value.split(";")[0]!.trim().toLowerCase();
}

/** Climbs from `name` towards the root and returns the first CAA record set found. */
export async function relevantCaa(resolver: DnsResolver, name: string): Promise<{ owner: string; records: CaaRecord[] } | null> {
  const labels = name.replace(/^\*\./, "").replace(/\.$/, "").toLowerCase().split(".");
  for (let i = 0; i < labels.length; i++) {
    const owner = labels.slice(i).join(".");
    try {
      const records = await resolver.resolveCaa(owner);
      if (records.length > 0) return { owner, records };
    } catch (err) {
      if (!isNoDataError(err)) throw new Error(`could not look up CAA at ${owner}: ${(err as Error).message}`);
    }
  }
  return null;
}

/** Every configured name checked; the first refusal, as a sentence, or null. */
export async function caaProblem(resolver: DnsResolver, names: readonly string[], caIdentities: readonly string[]): Promise<string | null> {
  for (const name of names) {
    const found = await relevantCaa(resolver, name);
    if (!found) continue;
    const verdict = caaVerdict(name, found.owner, found.records, caIdentities);
    if (!verdict.allowed) return verdict.reason;
  }
  return null;
}
