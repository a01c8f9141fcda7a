// The lookups behind a sending IP's health: its PTR, the PTR name's addresses, and one
// query per blocklist zone (with the zone's TXT reason when listed). Thin glue over the
// resolver; what the answers mean is dnsbl.ts's and sending-ip.ts's.
import { isIPv4 } from "node:net";
import { type DnsResolver, isNoDataError } from "../lib/dns.ts";
import { type DnsblAnswer, dnsblQueryName, dnsblVerdict, ptrQueryName } from "./dnsbl.ts";
import { forwardConfirms, heloMatches, type SendingIpHealth, type SourceAddress, type UnknownCheck } from "./sending-ip.ts";

const codeOf = (err: unknown): string => (err as { code?: string })?.code ?? (err as Error)?.message ?? String(err);

async function ask(resolver: DnsResolver, name: string): Promise<DnsblAnswer> {
  try {
    return { kind: "addresses", addresses: await resolver.resolve4(name) };
  } catch (err) {
    return { kind: "error", code: codeOf(err) };
  }
}

/** The TXT reason of a listing, or "" when the zone gives none (or it could not be read). */
async function reasonText(resolver: DnsResolver, name: string): Promise<string> {
  try {
    // Control characters never reach the store or a header: a TXT string may hold any octet.
    return (await resolver.resolveTxt(name))
      .map((parts) => parts.join(""))
      .join(" ")
      .replace(/[\u0000-\u001f\u007f]/g, " ")
      .slice(0, 500);
  } catch {
    return "";
  }
}

/** The PTR name and whether it resolves back, or what stopped the check. */
async function reverse(resolver: DnsResolver, address: SourceAddress) {
  const unknown: UnknownCheck[] = [];
  let ptr: string | null = null;
  let fcrdns: boolean | null = null;
  try {
    const names = (await resolver.resolve(ptrQueryName(address.ip), "PTR")) as string[];
    ptr = names[0] ?? null;
  } catch (err) {
    if (!isNoDataError(err)) unknown.push({ check: "ptr", reason: `the PTR lookup failed (${codeOf(err)})` });
  }
  if (ptr !== null) {
    try {
      const forward = isIPv4(address.ip) ? await resolver.resolve4(ptr) : await resolver.resolve6(ptr);
      fcrdns = forwardConfirms(address.ip, forward);
    } catch (err) {
      if (isNoDataError(err)) fcrdns = false;
      else unknown.push({ check: "fcrdns", reason: `the lookup of ${ptr} failed (${codeOf(err)})` });
    }
  } else if (!unknown.length) {
    fcrdns = false;
  }
  return { ptr, fcrdns, unknown };
}

/** Checks one address against its PTR and every zone, at `nowMs`. Never throws. */
export async function checkSendingIp(
  resolver: DnsResolver,
  address: SourceAddress,
  zones: readonly string[],
  nowMs: number,
): Promise<SendingIpHealth> {
  const r = resolver.uncached();
  const [rev, verdicts] = await Promise.all([
    reverse(r, address),
    Promise.all(
      zones.map(async (zone) => ({
        zone,
        name: dnsblQueryName(address.ip, zone),
        verdict: dnsblVerdict(await ask(r, dnsblQueryName(address.ip, zone))),
      })),
    ),
  ]);
  const listed = await Promise.all(
    verdicts.filter((v) => v.verdict.state === "listed").map(async (v) => ({ zone: v.zone, text: await reasonText(r, v.name) })),
  );
  const unknown = [...rev.unknown];
  for (const v of verdicts) if (v.verdict.state === "unknown") unknown.push({ check: v.zone, reason: v.verdict.reason });
  return {
    ip: address.ip,
    helo: address.helo,
    ptr: rev.ptr,
    fcrdns: rev.fcrdns,
    helo_matches: rev.ptr === null ? null : heloMatches(address.helo, rev.ptr),
    listed,
    unknown,
    checkedAtMs: nowMs,
  };
}
