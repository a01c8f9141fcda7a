// The DNS resolver every feature uses: the servers from `dns.servers`, or the system's.
// Passed in (never a global) so tests point it at a real DNS server on loopback.
//
// TXT goes through dns2's client, not node:dns: Bun 1.4.5's resolveTxt returns every
// character-string of a record as a record of its own, which breaks SPF and DKIM
// records longer than 255 characters (they must be joined, and only within a record).
// Answers are cached briefly, negative ones too, so a burst of mail from one domain
// costs one lookup.
import dns2 from "dns2";
import { getServers } from "node:dns";
import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";

export interface MxRecord {
  exchange: string;
  priority: number;
}

export type RrType = "A" | "AAAA" | "MX" | "TXT" | "CNAME" | "PTR" | "NS";

export interface DnsResolver {
  resolveMx(name: string): Promise<MxRecord[]>;
  /** Each record as the list of its character-strings (join them to read the record). */
  resolveTxt(name: string): Promise<string[][]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  resolveCname(name: string): Promise<string[]>;
  /** node:dns.promises.resolve's shape, for libraries (mailauth) that take a resolver. */
  resolve(name: string, rrtype: string): Promise<unknown>;
}

export interface ResolverOptions {
  /** "ip" or "ip:port"; [] = the system resolvers. */
  servers: readonly string[];
  /** Per-try timeout. */
  timeoutMs?: number;
  tries?: number;
  /** How long answers (and "no such name") are kept; 0 = no cache. */
  cacheTtlMs?: number;
  cacheMaxEntries?: number;
}

/** A DNS failure with node:dns's error codes, which mailauth and our callers test. */
export class DnsError extends Error {
  constructor(
    readonly code: "ENOTFOUND" | "ENODATA" | "ESERVFAIL" | "EREFUSED" | "ETIMEOUT" | "ECONNREFUSED",
    name: string,
  ) {
    super(`${code} ${name}`);
  }
}

/** DNS error codes that mean "the name or record does not exist" rather than "could not ask". */
export function isNoDataError(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === "ENODATA" || code === "ENOTFOUND" || code === "NXDOMAIN";
}

function splitServer(server: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
  if (bracketed) return { host: bracketed[1]!, port: Number(bracketed[2] ?? 53) };
  if (isIP(server)) return { host: server, port: 53 };
  const i = server.lastIndexOf(":");
  return { host: server.slice(0, i), port: Number(server.slice(i + 1)) };
}

const RCODE_ERRORS: Record<number, DnsError["code"]> = { 2: "ESERVFAIL", 3: "ENOTFOUND", 5: "EREFUSED" };

function txtClient(servers: readonly string[], timeoutMs: number) {
  const list = (servers.length > 0 ? servers : getServers()).map(splitServer);
  const clients = list.map(({ host, port }) => (dns2 as any).UDPClient({ dns: host, port, timeout: timeoutMs }));
  return async (name: string): Promise<string[][]> => {
    let lastError: unknown = new DnsError("ETIMEOUT", name);
    for (const query of clients) {
      try {
        const packet = await query(name, "TXT");
        const rcodeError = RCODE_ERRORS[packet.header.rcode];
        if (rcodeError) throw new DnsError(rcodeError, name);
        const records = (packet.answers as { type: number; data: string | string[] }[])
          .filter((a) => a.type === 16)
          .map((a) => (Array.isArray(a.data) ? a.data : [a.data]));
        if (records.length === 0) throw new DnsError("ENODATA", name);
        return records;
      } catch (err) {
        if (err instanceof DnsError && err.code !== "ESERVFAIL" && err.code !== "EREFUSED") throw err;
        lastError = err instanceof DnsError ? err : new DnsError("ETIMEOUT", name);
      }
    }
    throw lastError;
  };
}

class TtlCache {
  private entries = new Map<string, { expiresMs: number; value: unknown; error: boolean }>();
  constructor(
    private ttlMs: number,
    private maxEntries: number,
  ) {}
  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0) return load();
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresMs > now) {
      if (hit.error) throw hit.value;
      return hit.value as T;
    }
    try {
      const value = await load();
      this.put(key, value, false, now);
      return value;
    } catch (err) {
      // Only "does not exist" is worth remembering; a timeout should be asked again.
      if (isNoDataError(err)) this.put(key, err, true, now);
      throw err;
    }
  }
  private put(key: string, value: unknown, error: boolean, now: number) {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { expiresMs: now + this.ttlMs, value, error });
  }
}

export function createResolver(opts: ResolverOptions): DnsResolver {
  const timeoutMs = opts.timeoutMs ?? 3000;
  const resolver = new Resolver({ timeout: timeoutMs, tries: opts.tries ?? 2 });
  if (opts.servers.length > 0) resolver.setServers([...opts.servers]);
  const queryTxt = txtClient(opts.servers, timeoutMs);
  const cache = new TtlCache(opts.cacheTtlMs ?? 60_000, opts.cacheMaxEntries ?? 10_000);
  const cached = <T>(type: string, name: string, load: () => Promise<T>) => cache.get(`${type} ${name.toLowerCase()}`, load);

  const api: DnsResolver = {
    resolveMx: (n) => cached("MX", n, () => resolver.resolveMx(n)),
    resolveTxt: (n) => cached("TXT", n, () => queryTxt(n)),
    resolve4: (n) => cached("A", n, () => resolver.resolve4(n)),
    resolve6: (n) => cached("AAAA", n, () => resolver.resolve6(n)),
    resolveCname: (n) => cached("CNAME", n, () => resolver.resolveCname(n)),
    resolve: (n, rrtype) => {
      switch (rrtype.toUpperCase()) {
        case "TXT":
          return api.resolveTxt(n);
        case "MX":
          return api.resolveMx(n);
        case "A":
          return api.resolve4(n);
        case "AAAA":
          return api.resolve6(n);
        case "CNAME":
          return api.resolveCname(n);
        default:
          return cached(rrtype, n, () => resolver.resolve(n, rrtype as "PTR"));
      }
    },
  };
  return api;
}
