// Where mail for a domain goes: its MX hosts by preference, the domain itself when it
// has no MX (RFC 5321 section 5.1), nowhere when it publishes a null MX (RFC 7505).
import { isNoDataError, type DnsResolver, type MxRecord } from "../../lib/dns.ts";

export type MxRoute = { ok: true; hosts: string[] } | { ok: false; permanent: boolean; reason: string };

/** Pure: MX records to host names in the order to try them; "null" for a null MX. */
export function mxHostsFrom(records: readonly MxRecord[], random: () => number = Math.random): string[] | "null" {
  const usable = records.filter((r) => r.exchange !== "" && r.exchange !== ".");
  if (usable.length === 0) return "null";
  // Equal preferences are tried in random order, spreading load as RFC 5321 asks.
  return usable
    .map((r) => ({ r, tie: random() }))
    .sort((a, b) => a.r.priority - b.r.priority || a.tie - b.tie)
    .map(({ r }) => r.exchange.toLowerCase().replace(/\.$/, ""));
}

export async function resolveMxRoute(domain: string, resolver: DnsResolver): Promise<MxRoute> {
  try {
    const hosts = mxHostsFrom(await resolver.resolveMx(domain));
    if (hosts === "null") return { ok: false, permanent: true, reason: `${domain} does not accept mail (null MX)` };
    return { ok: true, hosts };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOTFOUND") return { ok: false, permanent: true, reason: `domain ${domain} does not exist` };
    if (isNoDataError(err)) return { ok: true, hosts: [domain] };
    return { ok: false, permanent: false, reason: `MX lookup for ${domain} failed (${code ?? (err as Error).message})` };
  }
}
