// The DNS resolver every feature uses: the servers from `dns.servers`, or the system's.
// Passed in (never a global) so tests point it at a real DNS server on loopback.
import { Resolver } from "node:dns/promises";

export interface MxRecord {
  exchange: string;
  priority: number;
}

export interface DnsResolver {
  resolveMx(name: string): Promise<MxRecord[]>;
  resolveTxt(name: string): Promise<string[][]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  resolveCname(name: string): Promise<string[]>;
}

export interface ResolverOptions {
  servers: readonly string[];
  /** Per-try timeout; node retries `tries` times. */
  timeoutMs?: number;
  tries?: number;
}

export function createResolver(opts: ResolverOptions): DnsResolver {
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? 3000, tries: opts.tries ?? 2 });
  if (opts.servers.length > 0) resolver.setServers([...opts.servers]);
  return {
    resolveMx: (n) => resolver.resolveMx(n),
    resolveTxt: (n) => resolver.resolveTxt(n),
    resolve4: (n) => resolver.resolve4(n),
    resolve6: (n) => resolver.resolve6(n),
    resolveCname: (n) => resolver.resolveCname(n),
  };
}

/** DNS error codes that mean "the name or record does not exist" rather than "could not ask". */
export function isNoDataError(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === "ENODATA" || code === "ENOTFOUND" || code === "NXDOMAIN";
}
