// Which of a pool's addresses a delivery leaves from (issue 29). Pure. Rendezvous (highest
// random weight) hashing: every address gets a score per destination and the highest wins,
// so one destination always leaves from the same address (its reputation there builds on
// one IP), destinations spread evenly over the pool, and adding or removing an address
// moves only the destinations that address wins or won. The destination key is the
// destination's name (a rule's, or the recipient domain when no rule takes it).
import { createHash } from "node:crypto";
import { isIPv6 } from "node:net";
import type { Config, IpPoolConfig, SourceAddress } from "../../config/config.ts";

/** The score of `ip` for `destinationKey`: the first 8 bytes of SHA-256 over both. */
function score(ip: string, destinationKey: string): bigint {
  return createHash("sha256").update(`${ip}\0${destinationKey.toLowerCase()}`).digest().readBigUInt64BE(0);
}

/** The pool's addresses in the order `destinationKey` prefers them (rendezvous hashing). */
export function rankSourceAddresses(pool: readonly SourceAddress[], destinationKey: string): SourceAddress[] {
  return pool
    .map((address) => ({ address, score: score(address.ip, destinationKey) }))
    .sort((a, b) => (a.score === b.score ? a.address.ip.localeCompare(b.address.ip) : a.score > b.score ? -1 : 1))
    .map((s) => s.address);
}

/** The address mail to `destinationKey` leaves from; the pool has at least one (the schema's rule). */
export function pickSourceAddress(pool: readonly SourceAddress[], destinationKey: string): SourceAddress {
  return rankSourceAddresses(pool, destinationKey)[0]!;
}

/**
 * The first of `ranked` that can reach `remoteIp`: an IPv4 socket cannot connect to an
 * IPv6 address nor the reverse, so a pool of both families serves each MX address from its
 * family's preferred address. Null when the pool has none of that family.
 */
export function sourceForRemote(ranked: readonly SourceAddress[], remoteIp: string): SourceAddress | null {
  const v6 = isIPv6(remoteIp);
  return ranked.find((a) => isIPv6(a.ip) === v6) ?? null;
}

/**
 * Which of a hop's addresses (IPv4 first) to reach, and from where: the first the pool can
 * reach, from the pool's first address of its family. A dual-stack MX (most large providers)
 * is reached over IPv6 from a pool of IPv6 addresses only. Null when the pool has no address
 * of any of the hop's families.
 */
export function pairForRemote(
  ranked: readonly SourceAddress[],
  remoteIps: readonly string[],
): { ip: string; source: SourceAddress } | null {
  for (const ip of remoteIps) {
    const source = sourceForRemote(ranked, ip);
    if (source) return { ip, source };
  }
  return null;
}

/**
 * The addresses of a pool that may open new connections: those not listed on any
 * blocklist, as long as one of the same family is left (a pool never stops sending because
 * every address is listed, nor stops reaching IPv4 or IPv6 MX hosts). Order is kept.
 * Addresses without a check yet are usable.
 */
export function usableSourceAddresses<A extends { ip: string }>(
  addresses: readonly A[],
  health: readonly { ip: string; listed: readonly unknown[] }[],
  avoidListed = true,
): A[] {
  if (!avoidListed) return [...addresses];
  return withoutListed(addresses, new Set(health.filter((h) => h.listed.length > 0).map((h) => h.ip)));
}

/** `addresses` less those in `listed`, each family keeping its addresses when all of them are listed. */
function withoutListed<A extends { ip: string }>(addresses: readonly A[], listed: ReadonlySet<string>): A[] {
  if (listed.size === 0) return [...addresses];
  const cleanFamily = new Set(addresses.filter((a) => !listed.has(a.ip)).map((a) => isIPv6(a.ip)));
  return addresses.filter((a) => !listed.has(a.ip) || !cleanFamily.has(isIPv6(a.ip)));
}

/**
 * The addresses a new connection to `destinationKey` may leave from, in the order it
 * prefers them: the pool's ranking, less the addresses on a blocklist (`listed`, the health
 * check's) when outbound.avoid_listed_ips is set (usableSourceAddresses' rule).
 */
export function newConnectionSources(
  pool: readonly SourceAddress[],
  destinationKey: string,
  listed: ReadonlySet<string>,
  avoidListed: boolean,
): SourceAddress[] {
  const ranked = rankSourceAddresses(pool, destinationKey);
  return avoidListed ? withoutListed(ranked, listed) : ranked;
}

/** The config's pool named `name` (an outbound account's ip_pool, from the file or the operator API); null for none or a name no longer in the config. */
export function poolNamed(config: Config, name: string | null | undefined): IpPoolConfig | null {
  if (!name) return null;
  return config.outbound.ipPools.find((p) => p.name === name) ?? null;
}

/** Each config's outbound account → pool map, made once per config (a reload makes a new config). */
const poolMaps = new WeakMap<Config, Map<string, IpPoolConfig>>();

/** The pool an outbound account sends from, or null: the system's default address, EHLO = hostname. */
export function poolOf(config: Config, outboundAccountId: string): IpPoolConfig | null {
  let map = poolMaps.get(config);
  if (!map) {
    map = new Map();
    const byName = new Map(config.outbound.ipPools.map((p) => [p.name, p]));
    for (const account of config.accounts) {
      for (const o of account.outbound) {
        const pool = o.ipPool ? byName.get(o.ipPool) : undefined;
        if (pool) map.set(o.id, pool);
      }
    }
    poolMaps.set(config, map);
  }
  return map.get(outboundAccountId) ?? null;
}
