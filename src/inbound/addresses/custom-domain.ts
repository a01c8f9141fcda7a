// A custom domain of an address (stored through custom-domains.port.ts): mail to any recipient
// at it that its auth_regex admits goes to the address, or to the domain's own target.
// Decisions about custom domains: what an auth_regex is allowed to be and whom it admits,
// and whether the domain's MX points at us (which names may be claimed: domains/ownership.ts).
import type { DnsResolver, MxRecord } from "../../lib/dns.ts";
import type { StoredTarget } from "./target-url.ts";

export interface CustomDomain {
  id: string;
  accountId: string;
  addressId: string;
  domain: string;
  authRegex: string | null;
  domainTarget: StoredTarget | null;
  mxVerified: boolean;
  mxCheckedAtMs: number | null;
  createdAtMs: number;
}

export class DomainTakenError extends Error {
  override name = "DomainTakenError";
}

export const AUTH_REGEX_MAX_LENGTH = 512;

/** Why `source` cannot be an auth_regex, or null when it can. */
export function authRegexProblem(source: string): string | null {
  if (source.length > AUTH_REGEX_MAX_LENGTH) return `must be at most ${AUTH_REGEX_MAX_LENGTH} characters`;
  try {
    compileAuthRegex(source);
    return null;
  } catch (err) {
    return `is not a valid regular expression (${(err as Error).message.replace(/^Invalid regular expression: /, "")})`;
  }
}

/**
 * The whole recipient address must match (docs/receiving.md, Custom domains), so the pattern is anchored.
 * Matching ignores case: mail systems treat addresses case-insensitively in practice.
 */
export function compileAuthRegex(source: string): RegExp {
  return new RegExp(`^(?:${source})$`, "iu");
}

/** Whether any MX of the domain is our hostname (names compared without case or final dot). */
export function mxPointsAt(records: readonly MxRecord[], hostname: string): boolean {
  const want = hostname.toLowerCase().replace(/\.$/, "");
  return records.some((r) => r.exchange.toLowerCase().replace(/\.$/, "") === want);
}

/** Looks the MX up; a lookup that fails counts as not pointing at us (checked again later). */
export async function checkMx(resolver: DnsResolver, domain: string, hostname: string): Promise<boolean> {
  try {
    return mxPointsAt(await resolver.resolveMx(domain), hostname);
  } catch {
    return false;
  }
}
