// The egress guard (docs/security.md): every connection to a host a user gave us
// (targets, webhooks, MX hosts, S3 endpoints) is checked here first. A name is judged
// by all of its addresses; loopback, private and link-local ones are refused unless the
// config allows them; cloud metadata addresses are refused always; an address that
// cannot be parsed is refused. The caller then connects to the address that was checked,
// so a second DNS answer cannot swap in another one.
import ipaddr from "ipaddr.js";
import { isIP } from "node:net";
import { BoundedCache } from "./bounded-cache.ts";
import type { DnsResolver } from "./dns.ts";

export type AddressClass = "public" | "private" | "metadata" | "invalid";

const METADATA = new Set(["169.254.169.254", "fd00:ec2::254", "100.100.100.200"]);

// Ranges that are neither private nor reachable: never a valid destination.
const INVALID_RANGES = new Set(["multicast", "broadcast", "reserved", "discard"]);

// The class of an address never changes, and the same few (targets, MX hosts) come back
// for every message: parsing them each time was most of the guard's cost.
const CLASS_CACHE_ENTRIES = 4096;
const classes = new BoundedCache<string, AddressClass>(CLASS_CACHE_ENTRIES);

/** What kind of address `ip` is, for deciding whether we may connect to it. */
export function classifyIp(ip: string): AddressClass {
  return classes.getOrMake(ip, classify);
}

function classify(ip: string): AddressClass {
  // node:net's isIP accepts only the standard forms ("1.2.3" is not an address here,
  // though ipaddr.js would read it the classful way).
  const family = isIP(ip);
  if (family === 0) return "invalid";
  // ipaddr.js reads "::a.b.c.d" as "::ffff:a.b.c.d": the dotted tail goes in as hex first.
  const addr = ipaddr.parse(family === 6 ? dottedTailAsHex(ip) : ip);
  if (addr.kind() === "ipv6") {
    const v4 = embeddedIpv4(addr as ipaddr.IPv6);
    if (v4) return classify(v4);
  }
  const normalized = addr.toString();
  if (METADATA.has(normalized)) return "metadata";
  const range = addr.range();
  if (range === "unicast") return "public";
  if (INVALID_RANGES.has(range)) return "invalid";
  // loopback, private, linkLocal, uniqueLocal, carrierGradeNat, unspecified, 6to4,
  // teredo and the other special ranges: all can reach inside the host or its network.
  return "private";
}

/**
 * The IPv4 address inside an IPv6 address that carries one to an IPv4 host: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, deprecated), IPv4-translated
 * (::ffff:0:a.b.c.d, RFC 6145), the well-known NAT64 prefix (64:ff9b::/96, RFC 6052) and
 * 6to4 (2002:aabb:ccdd::/48, RFC 3056). Such an address is judged as that IPv4 address:
 * [::127.0.0.1] is loopback, 64:ff9b::a9fe:a9fe the metadata service. :: and ::1 are
 * themselves, not 0.0.0.0 and 0.0.0.1.
 */
export function embeddedIpv4(addr: ipaddr.IPv6): string | null {
  const p = addr.parts;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeroUpTo = (n: number) => p.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(4) && ((p[4] === 0 && (p[5] === 0 || p[5] === 0xffff)) || (p[4] === 0xffff && p[5] === 0))) {
    if (zeroUpTo(7) && p[7]! <= 1) return null;
    return v4(p[6]!, p[7]!);
  }
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return v4(p[6]!, p[7]!);
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!);
  return null;
}

/** "::1.2.3.4" → "::102:304" (valid input only: node:net has checked it). */
export function dottedTailAsHex(ip: string): string {
  const m = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (!m) return ip;
  const [a, b, c, d] = m.slice(1).map(Number) as [number, number, number, number];
  return ip.slice(0, m.index) + ((a << 8) | b).toString(16) + ":" + ((c << 8) | d).toString(16);
}

export interface EgressPolicy {
  allowPrivate: boolean;
}

export class EgressRefused extends Error {
  override name = "EgressRefused";
  /** A private address, which a config key may allow (a metadata one never is). */
  constructor(
    message: string,
    readonly privateAddress = false,
  ) {
    super(message);
  }
}

/** Whether we may connect to `ip` under `policy`; what kind of address it is when not. */
export function egressProblem(ip: string, policy: EgressPolicy): string | null {
  switch (classifyIp(ip)) {
    case "public":
      return null;
    case "private":
      return policy.allowPrivate ? null : "a private, loopback or link-local address";
    case "metadata":
      return "a cloud metadata address";
    case "invalid":
      return "not a usable address";
  }
}

/**
 * Resolves `host` and returns the address to connect to, or throws EgressRefused when
 * any of its addresses is refused. DNS failures propagate as they are (the caller treats
 * them as unreachable).
 */
export async function checkedAddress(host: string, resolver: DnsResolver, policy: EgressPolicy): Promise<string> {
  return (await checkedAddresses(host, resolver, policy))[0]!;
}

/** Every address of `host`, IPv4 first, each passed by the guard (or EgressRefused, as checkedAddress). */
export async function checkedAddresses(host: string, resolver: DnsResolver, policy: EgressPolicy): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIP(bare)) {
    addresses = [bare];
  } else {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(bare), resolver.resolve6(bare)]);
    addresses = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])];
    if (addresses.length === 0) throw v4.status === "rejected" ? v4.reason : new EgressRefused(`${bare} has no address`);
  }
  for (const ip of addresses) {
    const problem = egressProblem(ip, policy);
    if (problem)
      throw new EgressRefused(ip === bare ? `${ip} is ${problem}` : `${bare} resolves to ${ip}, ${problem}`, classifyIp(ip) === "private");
  }
  return addresses;
}
