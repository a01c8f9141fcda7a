// A sending domain's DMARC policy and how its mail aligns with it (RFC 7489, RFC 9989),
// with what to publish to fix each point. Pure, table-tested; the lookups are
// domain-health-check.ts's.
import type { CheckName, DmarcPolicy, DomainHealth } from "./sending-domain.ts";

export type { DmarcPolicy, DomainHealth };

/** What a domain's DMARC record says, as far as our mail is concerned. */
export interface DmarcRecord {
  policy: DmarcPolicy;
  /** Strict DKIM alignment (adkim=s): d= must be the From domain itself. */
  strictDkim: boolean;
  /** Strict SPF alignment (aspf=s): the return path's domain must be the From domain itself. */
  strictSpf: boolean;
  /** Where it was found (_dmarc.<domain> or a parent's), null when none was. */
  host: string | null;
  /** The record's text, or why there is no usable one. */
  text: string | null;
}

const POLICIES = new Set(["none", "quarantine", "reject"]);

/** Tags of "v=DMARC1; p=reject; ...", names and policy values lower-cased. */
function tagsOf(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return tags;
}

/** The names a policy is looked for at, the domain's own first, then its parents (a tree walk up to two labels). */
export function dmarcHosts(domain: string): string[] {
  const labels = domain.toLowerCase().split(".");
  const out: string[] = [];
  for (let i = 0; i <= labels.length - 2; i++) out.push(`_dmarc.${labels.slice(i).join(".")}`);
  return out;
}

/**
 * The policy the TXT records at `host` give the sending domain; `own` when host is the
 * domain's own _dmarc name (a parent's record applies its sp= to subdomains). null when
 * there is no DMARC record there (look at the next parent).
 */
export function dmarcRecordAt(host: string, records: readonly (readonly string[])[], own: boolean): DmarcRecord | null {
  const dmarc = records.map((r) => r.join("")).filter((r) => /^v\s*=\s*DMARC1\s*(;|$)/.test(r));
  if (dmarc.length === 0) return null;
  const missing = (why: string): DmarcRecord => ({ policy: "missing", strictDkim: false, strictSpf: false, host, text: why });
  if (dmarc.length > 1) return missing(`${host} has ${dmarc.length} DMARC records; receivers ignore them all`);
  const tags = tagsOf(dmarc[0]!);
  const p = tags.get("p")?.toLowerCase();
  const sp = tags.get("sp")?.toLowerCase();
  const applied = !own && sp && POLICIES.has(sp) ? sp : p;
  if (!applied || !POLICIES.has(applied)) {
    // RFC 9989 4.10.1: without a valid p=, a record that asks for reports acts as p=none.
    if ((tags.get("rua") ?? "").includes(":")) return { policy: "none", strictDkim: false, strictSpf: false, host, text: dmarc[0]! };
    return missing(`the record at ${host} has no valid p= (none, quarantine or reject)`);
  }
  return {
    policy: applied as DmarcPolicy,
    strictDkim: tags.get("adkim")?.toLowerCase() === "s",
    strictSpf: tags.get("aspf")?.toLowerCase() === "s",
    host,
    text: dmarc[0]!,
  };
}

/** No record anywhere up the tree. */
export const NO_DMARC: DmarcRecord = { policy: "missing", strictDkim: false, strictSpf: false, host: null, text: null };

/**
 * The domain's health from its DMARC record and the verifier's checks. Our signature's d=
 * is the sending domain and the return path is mta.<domain>: both align (relaxed) with mail
 * from the domain once their records are published, and SPF's only under aspf=r.
 */
export interface HealthHosts {
  /** The RSA key's TXT name (<selector>._domainkey.<domain>). */
  dkim: string;
  /** The return path's name (mta.<domain>) and the bounce host its CNAME points at. */
  mta: string;
  bounce: string;
}

export function domainHealth(
  domain: string,
  hosts: HealthHosts,
  dmarc: DmarcRecord,
  checks: Record<CheckName, boolean>,
  reasons: Partial<Record<CheckName, string>>,
  unknown: string | null = null,
): DomainHealth {
  // The RSA signature: Gmail and others verify no Ed25519 signature (RFC 8463) yet.
  const dkimAligned = checks.dkim;
  const returnPathPasses = checks.return_path && checks.spf;
  const returnPathAligned = returnPathPasses && !dmarc.strictSpf;
  let dmarcFix: string | null = null;
  if (dmarc.policy === "missing")
    dmarcFix = `publish a TXT record at _dmarc.${domain}: "v=DMARC1; p=none; rua=mailto:dmarc-reports@${domain}" (Gmail and Yahoo require one of bulk senders); once the reports show all your mail aligned, raise it to p=quarantine${dmarc.text ? ` (now: ${dmarc.text})` : ""}`;
  else if (dmarc.policy === "none")
    dmarcFix = `p=none only asks for reports: once they show all your mail from ${domain} aligned, change the record at ${dmarc.host} to p=quarantine, then p=reject, so others cannot send as ${domain}`;
  const dkimFix = dkimAligned
    ? null
    : `publish the TXT record at ${hosts.dkim} shown in dns_records (purpose dkim): our signatures use d=${domain}, which aligns with mail from ${domain} once receivers find the key${reasons.dkim ? ` (now: ${reasons.dkim})` : ""}`;
  let returnPathFix: string | null = null;
  if (!returnPathPasses)
    returnPathFix = `publish the CNAME ${hosts.mta} → ${hosts.bounce} shown in dns_records, and the SPF record at ${hosts.bounce} must authorise every sending IP: the return path bounces+...@${hosts.mta} then passes SPF and aligns with ${domain}${reasons.return_path || reasons.spf ? ` (now: ${reasons.return_path ?? reasons.spf})` : ""}`;
  else if (dmarc.strictSpf)
    returnPathFix = `the DMARC record at ${dmarc.host} asks for strict SPF alignment (aspf=s), but the return path is ${hosts.mta}: remove aspf=s (relaxed is the default) so SPF counts for DMARC too`;
  return {
    dmarc: dmarc.policy,
    dmarc_record: dmarc.text && dmarc.policy !== "missing" ? dmarc.text : null,
    dkim_aligned: dkimAligned,
    return_path_aligned: returnPathAligned,
    fix: { dmarc: dmarcFix, dkim_aligned: dkimFix, return_path_aligned: returnPathFix },
    unknown,
  };
}
