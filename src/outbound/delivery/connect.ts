// A connection to a destination domain: the first of its planned hops (next-hop.ts) that
// answers, or why none could be had (no route at all is permanent; unreachable is not).
import { createHash } from "node:crypto";
import type { Config } from "../../config/config.ts";
import type { DnsResolver } from "../../lib/dns.ts";
import type { SourceAddress } from "../../config/config.ts";
import { planHops } from "./next-hop.ts";
import { pairForRemote } from "./source-address.ts";
import { SmtpClient } from "./smtp-client.ts";
import { mxPermitted, type TlsRequirement } from "./tls-policy.ts";
import type { TlsSessionCache } from "./tls-sessions.ts";

/** What a kept TLS session was checked against: a session is resumed only under the same checks. */
export function sessionChecks(requirement: TlsRequirement, ca?: string[]): string {
  if (requirement.level !== "verify") return requirement.level;
  return ca?.length ? `verify ca=${createHash("sha256").update(ca.join("\n")).digest("hex").slice(0, 16)}` : "verify";
}

export type Connected = { ok: true; client: SmtpClient } | { ok: false; permanent: boolean; reason: string };

/**
 * `requirement` decides how the hops are used: "encrypt" never in clear, "verify" only the
 * MX hosts the MTA-STS policy names, with a certificate valid for that name (`ca` adds
 * private roots to the public ones). A refusal under a requirement is temporary: the
 * recipient domain may fix its servers before the queue time runs out. `sources`: the
 * pool's addresses in the destination's order (source-address.ts); each hop is reached
 * from the first of its family, greeting with that address's name. Null: the system's
 * default address, greeting with the hostname.
 */
export async function connectTo(
  domain: string,
  config: Config,
  resolver: DnsResolver,
  requirement: TlsRequirement = { level: "opportunistic" },
  ca?: string[],
  sessions?: TlsSessionCache,
  sources: readonly SourceAddress[] | null = null,
): Promise<Connected> {
  const plan = await planHops(domain, {
    smarthost: config.outbound.smarthost,
    mxPort: config.outbound.mxPort,
    resolver,
    policy: { allowPrivate: config.outbound.allowPrivateMx },
  });
  if (!plan.ok) return plan;
  const problems: string[] = [];
  for await (const ep of plan.endpoints()) {
    if ("refused" in ep) {
      problems.push(ep.refused);
      continue;
    }
    if (!mxPermitted(ep.host, requirement)) {
      problems.push(
        `MX ${ep.host} is not named by ${requirement.level === "verify" ? requirement.why : "the policy"} (mx: ${requirement.level === "verify" ? requirement.policy.mx.join(", ") : ""})`,
      );
      continue;
    }
    const pair = sources ? pairForRemote(sources, ep.ips) : null;
    if (sources && !pair) {
      problems.push(`${ep.host} [${ep.ips.join(", ")}]: the pool has no ${ep.ip.includes(":") ? "IPv6" : "IPv4"} address to reach it from`);
      continue;
    }
    const source = pair?.source ?? null;
    const tls =
      requirement.level === "opportunistic"
        ? undefined
        : { require: true, verify: requirement.level === "verify", ca: requirement.level === "verify" ? ca : undefined };
    try {
      const client = await SmtpClient.open(pair ? { ...ep, ip: pair.ip } : ep, {
        heloName: source?.helo ?? config.hostname,
        localAddress: source?.ip,
        connectTimeoutMs: config.outbound.connectTimeoutMs,
        commandTimeoutMs: config.outbound.commandTimeoutMs,
        tls,
        sessions: sessions ? { cache: sessions, checks: sessionChecks(requirement, ca) } : undefined,
      });
      return { ok: true, client };
    } catch (err) {
      const why = requirement.level === "opportunistic" ? "" : ` (TLS is required: ${requirement.why})`;
      problems.push(`${ep.host}: ${(err as Error).message}${why}`);
    }
  }
  return { ok: false, permanent: false, reason: problems.join("; ") || `no mail server for ${domain} could be reached` };
}
