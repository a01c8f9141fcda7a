// IP addresses and CIDR ranges read strictly: only the standard written forms (node:net's
// isIP), never ipaddr.js's classful or octal readings ("127.1", "010.0.0.1"). An IPv4-mapped
// IPv6 address (::ffff:a.b.c.d, as a dual-stack socket reports an IPv4 client) is that IPv4
// address, so a client has one form however it connected.
import ipaddr from "ipaddr.js";
import { isIP } from "node:net";
import { dottedTailAsHex } from "./egress.ts";

export type Ip = ipaddr.IPv4 | ipaddr.IPv6;
/** A network and its prefix length in bits. */
export type IpRange = readonly [Ip, number];

const unmapped = (ip: Ip): Ip =>
  ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;

function parseStrict(text: string): Ip | null {
  const family = isIP(text);
  if (family === 0) return null;
  // ipaddr.js reads "::a.b.c.d" as "::ffff:a.b.c.d": the dotted tail goes in as hex first.
  return ipaddr.parse(family === 6 ? dottedTailAsHex(text) : text);
}

/** An address in a standard form (a zone such as %eth0 allowed), IPv4-mapped IPv6 as IPv4; null otherwise. */
export function parseIp(text: string): Ip | null {
  const ip = parseStrict(text);
  return ip ? unmapped(ip) : null;
}

/**
 * "10.0.0.5" (the address alone), "10.0.0.0/8", "fd00::/8", "::ffff:10.0.0.0/104" (as
 * 10.0.0.0/8); null for anything else, a zone or a prefix past the family's length included.
 * An IPv4-mapped range shorter than /96 would also hold IPv6 addresses: refused.
 */
export function parseIpRange(text: string): IpRange | null {
  const slash = text.indexOf("/");
  const addressText = slash < 0 ? text : text.slice(0, slash);
  if (addressText.includes("%")) return null;
  const written = parseStrict(addressText);
  if (!written) return null;
  const ip = unmapped(written);
  const shift = written.kind() === "ipv6" && ip.kind() === "ipv4" ? 96 : 0;
  const maxBits = written.kind() === "ipv4" ? 32 : 128;
  if (slash < 0) return [ip, maxBits - shift];
  const bitsText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return null;
  const bits = Number(bitsText);
  if (bits > maxBits || bits < shift) return null;
  return [ip, bits - shift];
}

/** Whether `ip` is in one of `ranges` (an IPv4 address never in an IPv6 range, nor the reverse). */
export function inRanges(ip: Ip, ranges: readonly IpRange[]): boolean {
  return ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}
