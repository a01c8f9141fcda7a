// How carefully one recipient domain is delivered to: opportunistic STARTTLS (the
// default), "encrypt" (outbound.require_tls: never in clear, any certificate), or
// "verify" (an MTA-STS policy in enforce mode, RFC 8461: only the policy's MX hosts,
// over TLS, with a certificate valid for the MX name). Pure, so the table tests read as
// the policy.
import { validateMx } from "mailauth/lib/mta-sts.js";

export interface StsPolicy {
  /** The id of the _mta-sts TXT record the policy was fetched for. */
  id: string;
  mode: "enforce" | "testing" | "none";
  /** MX patterns ("mx.example.com", "*.example.net"). */
  mx: string[];
  maxAgeSeconds: number;
  expiresAtMs: number;
}

export type TlsRequirement =
  | { level: "opportunistic" }
  | { level: "encrypt"; why: string }
  | { level: "verify"; why: string; policy: StsPolicy };

/** Whether `domain` is listed in outbound.require_tls ("example.com", or ".example.com" for subdomains). */
export function requireTlsListed(domain: string, list: readonly string[]): boolean {
  const d = domain.toLowerCase();
  return list.some((entry) => (entry.startsWith(".") ? d.endsWith(entry) && d.length > entry.length : d === entry));
}

export function tlsRequirement(domain: string, requireTls: readonly string[], policy: StsPolicy | null): TlsRequirement {
  if (policy?.mode === "enforce") return { level: "verify", why: `the MTA-STS policy of ${domain} (enforce)`, policy };
  if (requireTlsListed(domain, requireTls)) return { level: "encrypt", why: `outbound.require_tls lists ${domain}` };
  // A policy in "testing" mode asks for reports (TLSRPT), not for refusals: mail goes as usual.
  return { level: "opportunistic" };
}

/** Whether an MX host may be used under the requirement (MTA-STS enforce checks the name). */
export function mxPermitted(mxHost: string, requirement: TlsRequirement): boolean {
  if (requirement.level !== "verify") return true;
  return validateMx(mxHost, { mode: requirement.policy.mode, mx: requirement.policy.mx } as never).valid;
}
