// A sending IP's health as mailbox providers see it (API.md section 10, GET
// /operator/health/sending): its PTR, whether that name resolves back to it (forward-
// confirmed reverse DNS), whether it is the name the address says in EHLO, and the
// blocklists that list it. The decisions on these are pure and live here; the lookups are
// ip-check.ts's.
import type { Config } from "../config/config.ts";

// The pool picker's rule on listed addresses lives with the picker (src/outbound), which cannot import this folder.
export { usableSourceAddresses } from "../outbound/delivery/source-address.ts";

/** An address mail leaves from and the name it gives in EHLO. */
export interface SourceAddress {
  ip: string;
  helo: string;
}

/** A check that could not be made (a DNS failure): neither good nor bad. */
export interface UnknownCheck {
  /** "ptr", "fcrdns", or the blocklist zone. */
  check: string;
  reason: string;
}

export interface SendingIpHealth {
  ip: string;
  helo: string;
  /** The PTR name; null when there is none or it could not be looked up (see unknown). */
  ptr: string | null;
  /** Whether the PTR name resolves back to the address; null when that could not be asked. */
  fcrdns: boolean | null;
  /** Whether the PTR name is the HELO name; null without a PTR name. */
  helo_matches: boolean | null;
  listed: { zone: string; text: string }[];
  unknown: UnknownCheck[];
  checkedAtMs: number;
}

/**
 * Every address mail leaves from, with its EHLO name: each pool's addresses with their own
 * helo (outbound.ip_pools), then the other outbound.sending_ips with smtp.hostname. The one
 * place that lists them; an address in two pools is listed once, with its first helo.
 */
export function sendingIpsOf(config: Pick<Config, "hostname" | "outbound">): SourceAddress[] {
  const seen = new Set<string>();
  const out: SourceAddress[] = [];
  const add = (ip: string, helo: string) => {
    if (seen.has(ip)) return;
    seen.add(ip);
    out.push({ ip, helo });
  };
  for (const pool of config.outbound.ipPools) for (const a of pool.addresses) add(a.ip, a.helo);
  for (const ip of config.outbound.sendingIps) add(ip, config.hostname);
  return out;
}

const bare = (name: string) => name.toLowerCase().replace(/\.$/, "");

/** Whether `ptr` names the HELO name (case and a final dot aside). */
export const heloMatches = (helo: string, ptr: string): boolean => bare(helo) === bare(ptr);

/** Whether `ip` is among the addresses the PTR name resolves to (IPv6 compared in full form). */
export function forwardConfirms(ip: string, forward: readonly string[]): boolean {
  const norm = (a: string) => (a.includes(":") ? new URL(`http://[${a}]/`).hostname : a);
  const want = norm(ip);
  return forward.some((a) => {
    try {
      return norm(a) === want;
    } catch {
      return false;
    }
  });
}

/**
 * The sentences /healthz and the dashboard show for an address, each saying what to do.
 * Nothing for an address whose checks all passed.
 */
export function ipWarnings(h: Omit<SendingIpHealth, "checkedAtMs">): string[] {
  const out: string[] = [];
  if (h.ptr === null && !h.unknown.some((u) => u.check === "ptr"))
    out.push(`sending IP ${h.ip} has no PTR record: ask whoever owns the address (your host) to set its reverse DNS to ${h.helo}`);
  if (h.ptr !== null && h.fcrdns === false)
    out.push(`sending IP ${h.ip}'s PTR name ${h.ptr} does not resolve back to it: publish an A or AAAA record ${h.ptr} → ${h.ip}`);
  if (h.ptr !== null && h.helo_matches === false)
    out.push(
      `sending IP ${h.ip}'s PTR name ${h.ptr} is not its EHLO name ${h.helo}: set the PTR to ${h.helo}, or the EHLO name to ${h.ptr}`,
    );
  for (const l of h.listed)
    out.push(
      `sending IP ${h.ip} is listed on ${l.zone}${l.text ? ` (${l.text})` : ""}: find the cause, then ask for delisting on the list's site`,
    );
  for (const u of h.unknown)
    out.push(
      `sending IP ${h.ip}: the ${u.check === "ptr" || u.check === "fcrdns" ? u.check.toUpperCase() : `${u.check} blocklist`} check could not be made (${u.reason})`,
    );
  return out;
}
