// The egress guard (DESIGN.md section 9): every connection to a host a user gave us
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
  if (isIP(ip) === 0) return "invalid";
  let addr = ipaddr.parse(ip);
  if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const normalized = addr.toString();
  if (METADATA.has(normalized)) return "metadata";
  const range = addr.range();
  if (range === "unicast") return "public";
  if (INVALID_RANGES.has(range)) return "invalid";
  // loopback, private, linkLocal, uniqueLocal, carrierGradeNat, unspecified, 6to4,
  // teredo and the other special ranges: all can reach inside the host or its network.
  return "private";
}

export interface EgressPolicy {
  allowPrivate: boolean;
}

export class EgressRefused extends Error {
  override name = "EgressRefused";
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
    if (problem) throw new EgressRefused(ip === bare ? `${ip} is ${problem}` : `${bare} resolves to ${ip}, ${problem}`);
  }
  return addresses[0]!;
}
