// The next hop for a destination domain: the smarthost when one is configured, else the
// domain's MX hosts, each judged by the egress guard before we connect.
import type { DnsResolver } from "../../lib/dns.ts";
import { checkedAddresses, EgressRefused, type EgressPolicy } from "../../lib/egress.ts";
import { resolveMxRoute } from "./mx.ts";
import type { SmtpEndpoint } from "./smtp-client.ts";

/** A hop: `ip` its first checked address, `ips` every one (IPv4 first), for a source of either family. */
export type HopEndpoint = SmtpEndpoint & { ips: readonly string[] };

export type HopPlan =
  | { ok: true; endpoints: () => AsyncGenerator<HopEndpoint | { refused: string }> }
  | { ok: false; permanent: boolean; reason: string };

/** "smtp://user:pass@host:587" or "smtps://host:465" → its parts. */
export function parseSmarthost(url: string): { host: string; port: number; secure: boolean; auth: { user: string; pass: string } | null } {
  const u = new URL(url);
  const secure = u.protocol === "smtps:";
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : null,
  };
}

export async function planHops(
  domain: string,
  ctx: { smarthost: string | null; mxPort: number; resolver: DnsResolver; policy: EgressPolicy },
): Promise<HopPlan> {
  if (ctx.smarthost) {
    const relay = parseSmarthost(ctx.smarthost);
    return {
      ok: true,
      // The operator chose the smarthost: it may live on the local network.
      endpoints: async function* () {
        const ips = await checkedAddresses(relay.host, ctx.resolver, { allowPrivate: true });
        yield {
          host: relay.host,
          ip: ips[0]!,
          ips,
          port: relay.port,
          secure: relay.secure,
          auth: relay.auth,
        };
      },
    };
  }
  const route = await resolveMxRoute(domain, ctx.resolver);
  if (!route.ok) return route;
  return {
    ok: true,
    endpoints: async function* () {
      for (const host of route.hosts) {
        try {
          const ips = await checkedAddresses(host, ctx.resolver, ctx.policy);
          yield { host, ip: ips[0]!, ips, port: ctx.mxPort, secure: false, auth: null };
        } catch (err) {
          yield {
            refused:
              err instanceof EgressRefused
                ? `MX ${host} refused: ${err.message}`
                : `MX ${host}: ${(err as { code?: string }).code ?? (err as Error).message}`,
          };
        }
      }
    },
  };
}
