// SPF, DKIM and DMARC of a received message, through mailauth with our resolver (the
// servers of `dns.servers`), so the checks see the same DNS as everything else.
import { authenticate } from "mailauth";
import type { DnsResolver } from "../lib/dns.ts";
import type { PayloadEnvelope } from "./payload.ts";

export interface AuthChecks {
  spf: PayloadEnvelope["spf"];
  dkim: PayloadEnvelope["dkim"];
  dmarc: PayloadEnvelope["dmarc"];
}

export const SPF_RESULTS = ["none", "neutral", "pass", "fail", "softfail", "temperror", "permerror"] as const;

/**
 * The SPF identity: the MAIL FROM address, or postmaster@<HELO name> for the null
 * sender (RFC 7208 section 2.4), never the message's own Return-Path header.
 */
export function spfSender(mailFrom: string, helo: string): string {
  return mailFrom !== "" ? mailFrom : `postmaster@${helo}`;
}

export async function checkMessageAuth(
  raw: Buffer,
  session: { mailFrom: string; helo: string; remoteIp: string; mta: string },
  resolver: DnsResolver,
): Promise<AuthChecks> {
  const sender = spfSender(session.mailFrom, session.helo);
  const spfDomain = sender.slice(sender.lastIndexOf("@") + 1).toLowerCase();
  try {
    const result = await authenticate(raw, {
      ip: session.remoteIp,
      helo: session.helo,
      sender,
      mta: session.mta,
      resolver: resolver.resolve as never,
      disableArc: true,
      disableBimi: true,
      // RFC-exact evaluation: the lenient default misses SPF syntax errors after the
      // matching term and takes invalid macro expansions (7 cases of the RFC 7208 suite).
      strict: true,
    });
    const spfResult = result.spf ? result.spf.status.result : "none";
    const signatures = (result.dkim?.results ?? [])
      .filter((r) => r.signingDomain)
      .map((r) => ({ domain: r.signingDomain!, selector: r.selector ?? "", result: r.status?.result ?? "neutral" }));
    const dkimResult = signatures.some((s) => s.result === "pass") ? "pass" : signatures[0]?.result ?? "none";
    const dmarc = result.dmarc
      ? { result: result.dmarc.status.result, domain: result.dmarc.domain ?? null, policy: result.dmarc.policy ?? null }
      : { result: "none", domain: null, policy: null };
    return { spf: { result: spfResult, domain: spfDomain }, dkim: { result: dkimResult, signatures }, dmarc };
  } catch {
    // A check that cannot run must not lose the message: report it as a temporary error.
    return { spf: { result: "temperror", domain: spfDomain }, dkim: { result: "temperror", signatures: [] }, dmarc: { result: "temperror", domain: null, policy: null } };
  }
}
