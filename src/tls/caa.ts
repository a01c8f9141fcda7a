// CAA (RFC 8659): before ordering, find the CAA record set that governs each name (the
// name's own, else its closest ancestor's) and refuse to order when it does not let our
// CA issue. The CA would refuse anyway; checking first turns an opaque order failure
// into a sentence that says which record to change.
//
// Only a definite answer stops an order. A lookup that fails (SERVFAIL, REFUSED, no
// answer) is our resolver's trouble, not a policy: the CA checks CAA itself with its own
// resolvers, so the order goes ahead and the failed lookup is logged as a warning.
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

/**
 * What the resolver said about CAA at one owner name: the records (none for NOERROR
 * without CAA and for NXDOMAIN), or why it could not say ("SERVFAIL", "REFUSED", ...).
 */
export type CaaLookup = readonly CaaRecord[] | { error: string };

export type CaaDecision = { proceed: true; warning: string | null } | { proceed: false; reason: string };

/** The owner names whose CAA may govern `name`, closest first: mx.example.com, example.com, com. */
export function caaOwners(name: string): string[] {
  const labels = name.replace(/^\*\./, "").replace(/\.$/, "").toLowerCase().split(".");
  return labels.map((_, i) => labels.slice(i).join("."));
}

/**
 * Whether to order a certificate for `name`, from the CAA answers met climbing towards
 * the root (`answers` by owner; an owner not asked counts as holding no CAA). The first
 * non-empty set decides; a failed lookup before it lets the order go ahead with a
 * warning, since which set governs is then unknown and the CA will find out itself.
 */
export function caaDecision(name: string, answers: ReadonlyMap<string, CaaLookup>, caIdentities: readonly string[]): CaaDecision {
  for (const owner of caaOwners(name)) {
    const answer = answers.get(owner) ?? [];
    if ("error" in answer)
      return { proceed: true, warning: `could not look up CAA at ${owner} (${answer.error}); ordering anyway, the CA checks CAA itself` };
    if (answer.length === 0) continue;
    const verdict = caaVerdict(name, owner, answer, caIdentities);
    return verdict.allowed ? { proceed: true, warning: null } : { proceed: false, reason: verdict.reason };
  }
  return { proceed: true, warning: null };
}

const LOOKUP_ERRORS: Record<string, string> = {
  ESERVFAIL: "SERVFAIL",
  EREFUSED: "REFUSED",
  ETIMEOUT: "no answer in time",
  ECONNREFUSED: "connection refused",
};

/** Asks for CAA from `name` upwards until a set is found or a lookup fails. */
export async function lookUpCaa(resolver: DnsResolver, name: string): Promise<Map<string, CaaLookup>> {
  const answers = new Map<string, CaaLookup>();
  for (const owner of caaOwners(name)) {
    try {
      const records = await resolver.resolveCaa(owner);
      answers.set(owner, records);
      if (records.length > 0) break;
    } catch (err) {
      if (isNoDataError(err)) {
        answers.set(owner, []);
        continue;
      }
      const code = (err as { code?: string }).code ?? "";
      answers.set(owner, { error: LOOKUP_ERRORS[code] ?? (err as Error).message });
      break;
    }
  }
  return answers;
}

/** Every configured name checked: the first refusal as a sentence (or null), and the lookups that failed. */
export async function checkCaa(
  resolver: DnsResolver,
  names: readonly string[],
  caIdentities: readonly string[],
): Promise<{ refusal: string | null; warnings: string[] }> {
  const warnings: string[] = [];
  for (const name of names) {
    const decision = caaDecision(name, await lookUpCaa(resolver, name), caIdentities);
    if (!decision.proceed) return { refusal: decision.reason, warnings };
    if (decision.warning) warnings.push(decision.warning);
  }
  return { refusal: null, warnings };
}
