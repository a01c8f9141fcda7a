// Who sent an HTTP request: the address the sign-in limiter counts, the log's remote_ip and
// the ip of tracking events. It is the connecting address, unless that is one of
// http.trusted_proxies: then it is what the proxy reported in X-Forwarded-For or Forwarded.
// A header is believed only from a trusted proxy: anyone else could write any address in
// it, and dodge every limit keyed by address (docs/security.md, "Client addresses behind a
// proxy").
import { inRanges, parseIp, parseIpRange, type Ip, type IpRange } from "../lib/ip-ranges.ts";
import { forwardedFor, xForwardedFor } from "./forwarded-header.ts";

export interface HeaderSource {
  get(name: string): string | null;
}

/** http.trusted_proxies, parsed (entries that do not parse were refused when the config was loaded). */
export const trustedProxyRanges = (entries: readonly string[]): IpRange[] =>
  entries.map(parseIpRange).filter((r): r is IpRange => r !== null);

/**
 * A hop's address as X-Forwarded-For and Forwarded write it: "192.0.2.1", "192.0.2.1:443",
 * "2001:db8::1", "[2001:db8::1]", "[2001:db8::1]:443"; null for anything else ("unknown",
 * an obfuscated "_hidden", a name, a zone).
 */
export function hopAddress(text: string): Ip | null {
  let host = text;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  const v4WithPort = /^([\d.]+):(\d{1,5})$/.exec(text);
  if (bracketed) {
    host = bracketed[1]!;
    if (!host.includes(":")) return null;
  } else if (v4WithPort) host = v4WithPort[1]!;
  const port = bracketed?.[2] ?? v4WithPort?.[2];
  if ((port !== undefined && Number(port) > 65535) || host.includes("%")) return null;
  return parseIp(host);
}

/**
 * The client in a list of hops (first to last), read from the right as nginx's real_ip
 * (real_ip_recursive on) and Express's trust proxy do: the last hop that is not a trusted
 * proxy; the first hop when all are. Entries left of it are never read: the client may have
 * written them. Null when the header says nothing usable (empty, or a hop that must be read
 * does not parse).
 */
function lastUntrusted(hops: readonly (string | null)[] | null, trusted: readonly IpRange[]): Ip | null {
  if (!hops) return null;
  for (let i = hops.length - 1; i >= 0; i--) {
    const text = hops[i] ?? null;
    const ip = text === null ? null : hopAddress(text);
    if (!ip) return null;
    if (i === 0 || !inRanges(ip, trusted)) return ip;
  }
  return null;
}

/**
 * The request's client address (normalised: IPv6 in its short lowercase form, IPv4-mapped
 * IPv6 as IPv4), from the connecting address `peer` (null in-process: then null), the
 * request's headers and http.trusted_proxies.
 *
 * From a trusted proxy, X-Forwarded-For or Forwarded names the client; when a request
 * carries both and they name different clients, neither is believed: a proxy writes one of
 * them and passes the other through from the client, and which one is not known here. A
 * header that says nothing usable, or none at all, leaves the connecting address.
 */
export function clientAddress(peer: string | null | undefined, headers: HeaderSource, trusted: readonly IpRange[]): string | null {
  if (!peer) return null;
  const peerIp = parseIp(peer);
  if (!peerIp) return peer;
  if (trusted.length === 0 || !inRanges(peerIp, trusted)) return peerIp.toString();
  const xff = headers.get("x-forwarded-for");
  const forwarded = headers.get("forwarded");
  const fromXff = xff === null ? undefined : lastUntrusted(xForwardedFor(xff), trusted);
  const fromForwarded = forwarded === null ? undefined : lastUntrusted(forwardedFor(forwarded), trusted);
  let client: Ip | null | undefined;
  if (fromXff === undefined) client = fromForwarded;
  else if (fromForwarded === undefined) client = fromXff;
  else client = fromXff && fromForwarded && fromXff.toString() === fromForwarded.toString() ? fromXff : null;
  return (client ?? peerIp).toString();
}
