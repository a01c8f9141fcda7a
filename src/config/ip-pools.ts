// [[outbound.ip_pools]] as the program sees them (config.ts): the warm-up start as a time,
// and the addresses SPF must authorise: outbound.sending_ips with every pool address added.
import type { IpPoolConfig } from "./config.ts";
import type { RawConfig } from "./schema.ts";

/** Midnight UTC of a "YYYY-MM-DD" the schema accepted. */
export const utcDayStartMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);

export function ipPoolsOf(raw: RawConfig): IpPoolConfig[] {
  return raw.outbound.ip_pools.map((p) => ({
    name: p.name,
    addresses: p.addresses.map((a) => ({
      ip: a.ip,
      helo: a.helo.toLowerCase(),
      warmup: a.warmup ? { startMs: utcDayStartMs(a.warmup.start), daily: a.warmup.daily } : null,
    })),
  }));
}

/** outbound.sending_ips, then each pool address not already named: what SPF advice and checks cover. */
export function sendingIpsOf(raw: RawConfig): string[] {
  const all = [...raw.outbound.sending_ips, ...raw.outbound.ip_pools.flatMap((p) => p.addresses.map((a) => a.ip))];
  return [...new Set(all)];
}
