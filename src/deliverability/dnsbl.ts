// DNS blocklists (RFC 5782): the name to ask for an address and what an answer means.
// Pure: no I/O. A blocklist that could not be asked (SERVFAIL, timeout, refused, an answer
// that is not a listing code) is "unknown", never "not listed": an operator who sees "not
// listed" must be able to believe it.
import { isIPv4, isIPv6 } from "node:net";

export type DnsblVerdict = { state: "listed" } | { state: "not_listed" } | { state: "unknown"; reason: string };

/** What asking a zone for an address's A record gave. */
export type DnsblAnswer = { kind: "addresses"; addresses: readonly string[] } | { kind: "error"; code: string };

/** The labels of an address in reverse order: 4 octets (IPv4) or 32 nibbles (IPv6). */
export function reversedLabels(ip: string): string[] {
  if (isIPv4(ip)) return ip.split(".").reverse();
  if (!isIPv6(ip)) throw new Error(`not an IP address: ${ip}`);
  return expandIPv6(ip).split("").reverse();
}

/** The 32 hex digits of an IPv6 address, zeros filled in ("2001:db8::1" → "20010db8...0001"). */
function expandIPv6(ip: string): string {
  let text = ip.toLowerCase();
  // An IPv4 tail ("::ffff:192.0.2.1") is two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, null];
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const zeros = tail === null ? [] : Array(8 - headGroups.length - tailGroups.length).fill("0");
  return [...headGroups, ...zeros, ...tailGroups].map((g) => g.padStart(4, "0")).join("");
}

/** The name to ask `zone` about `ip`: "7.113.0.203.zen.spamhaus.org". */
export const dnsblQueryName = (ip: string, zone: string): string => `${reversedLabels(ip).join(".")}.${zone}`;

/** The PTR name of an address: "7.113.0.203.in-addr.arpa", or the nibbles under ip6.arpa. */
export const ptrQueryName = (ip: string): string => `${reversedLabels(ip).join(".")}.${isIPv4(ip) ? "in-addr.arpa" : "ip6.arpa"}`;

/** DNS error codes that say the zone holds no record for the address. */
const NOT_LISTED_CODES = new Set(["ENOTFOUND", "NXDOMAIN", "ENODATA"]);

/**
 * What a blocklist's answer means: 127.0.0.x listed; no such name, not listed; Spamhaus'
 * 127.255.255.x ("query refused": asked through a public resolver, or over the free
 * limit) and any other address are not listings, and not a clean bill either.
 */
export function dnsblVerdict(answer: DnsblAnswer): DnsblVerdict {
  if (answer.kind === "error") {
    if (NOT_LISTED_CODES.has(answer.code)) return { state: "not_listed" };
    return { state: "unknown", reason: `the blocklist did not answer (${answer.code})` };
  }
  const refused = answer.addresses.find((a) => a.startsWith("127.255.255."));
  if (refused)
    return { state: "unknown", reason: `the blocklist refused the query (${refused}): ask it through your own resolver, not a public one` };
  if (answer.addresses.some((a) => /^127\.0\.0\.\d+$/.test(a))) return { state: "listed" };
  return {
    state: "unknown",
    reason: `the blocklist answered ${answer.addresses.join(", ") || "nothing"}, which is not a listing code (127.0.0.x)`,
  };
}
