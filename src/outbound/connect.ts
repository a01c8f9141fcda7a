// A connection to a destination domain: the first of its planned hops (route.ts) that
// answers, or why none could be had (no route at all is permanent; unreachable is not).
import type { Config } from "../config/config.ts";
import type { DnsResolver } from "../lib/dns.ts";
import { planHops } from "./route.ts";
import { SmtpClient } from "./smtp-client.ts";

export type Connected = { ok: true; client: SmtpClient } | { ok: false; permanent: boolean; reason: string };

export async function connectTo(domain: string, config: Config, resolver: DnsResolver): Promise<Connected> {
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
    try {
      const client = await SmtpClient.open(ep, { heloName: config.hostname, connectTimeoutMs: config.outbound.connectTimeoutMs, commandTimeoutMs: config.outbound.commandTimeoutMs });
      return { ok: true, client };
    } catch (err) {
      problems.push(`${ep.host}: ${(err as Error).message}`);
    }
  }
  return { ok: false, permanent: false, reason: problems.join("; ") || `no mail server for ${domain} could be reached` };
}
