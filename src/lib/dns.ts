// The DNS resolver every feature uses: the servers from `dns.servers`, or the system's.
// Passed in (never a global) so tests point it at a real DNS server on loopback.
//
// Queries go over our own UDP client (dns-udp.ts: one socket shared by the queries in
// flight, with dns2's message encoding) rather than node:dns, because Bun 1.4.5's node:dns
// (a) returns every character-string of a TXT record as a record of its own, which
// breaks SPF and DKIM records longer than 255 characters, and (b) refuses, without
// asking, names with characters RFC 7208 allows after macro expansion (":", "%", " ").
// Answers are cached for their TTL (at most dns cache time, 60 s), "no such name" too,
// so a burst of mail from one domain or to one destination costs one lookup.
import dns2 from "dns2";
import { getServers } from "node:dns";
import { isIP } from "node:net";
import { UdpDnsClient } from "./dns-udp.ts";
import { TtlCache } from "./ttl-cache.ts";

export interface MxRecord {
  exchange: string;
  priority: number;
}

export type RrType = "A" | "AAAA" | "MX" | "TXT" | "CNAME" | "PTR" | "NS" | "CAA";

/** A CAA record (RFC 8659): flags (128 = critical), tag ("issue", "issuewild", "iodef") and value. */
export interface CaaRecord {
  flags: number;
  tag: string;
  value: string;
}

export interface DnsResolver {
  resolveMx(name: string): Promise<MxRecord[]>;
  /** Each record as the list of its character-strings (join them to read the record). */
  resolveTxt(name: string): Promise<string[][]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  resolveCname(name: string): Promise<string[]>;
  resolveCaa(name: string): Promise<CaaRecord[]>;
  /** node:dns.promises.resolve's shape, for libraries (mailauth) that take a resolver. */
  resolve(name: string, rrtype: string): Promise<unknown>;
  /** The same servers without the cache: for checks that must see a record just published. */
  uncached(): DnsResolver;
  /**
   * What made it (createResolver's options), so a worker thread can make its own resolver
   * asking the same servers; absent on a resolver that cannot be copied so (a test's fake).
   */
  readonly options?: ResolverOptions;
}

export interface ResolverOptions {
  /** "ip" or "ip:port"; [] = the system resolvers. */
  servers: readonly string[];
  /** How long each server is given to answer. */
  timeoutMs?: number;
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
const TYPE_NUMBER: Record<string, number> = { A: 1, NS: 2, CNAME: 5, PTR: 12, MX: 15, TXT: 16, AAAA: 28, CAA: 257 };

type Answer = {
  type: number;
  address?: string;
  exchange?: string;
  priority?: number;
  domain?: string;
  ns?: string;
  data?: string | string[];
  flags?: number;
  tag?: string;
  value?: string;
  /** Seconds the answer may be kept (RFC 1035). */
  ttl?: number;
};

/** How long answers may be kept: the smallest TTL among them (RFC 2181 5.2 wants them equal). */
const answersTtlMs = (answers: Answer[]): number => Math.min(...answers.map((a) => (typeof a.ttl === "number" ? a.ttl * 1000 : Infinity)));

/** One question asked of each server in turn until one answers; answers of `type` only. */
function dnsClient(servers: readonly string[], timeoutMs: number) {
  const list = (servers.length > 0 ? servers : getServers()).map(splitServer);
  // biome-ignore-start lint/suspicious/noExplicitAny: dns2 ships no types for its TCP client or its answers
  const clients = list.map(({ host, port }) => {
    const udp = new UdpDnsClient(host, port, timeoutMs, (name, type) => (dns2 as any).TCPClient({ dns: host, port })(name, type));
    return (name: string, type: string) => udp.query(name, type) as Promise<any>;
  });
  // biome-ignore-end lint/suspicious/noExplicitAny: dns2
  return async (name: string, type: keyof typeof TYPE_NUMBER): Promise<Answer[]> => {
    // A name dns2 cannot encode (a label over 63 octets, a name over 253) cannot exist.
    if (name.length > 253 || name.split(".").some((label) => label.length > 63)) throw new DnsError("ENOTFOUND", name);
    let lastError: unknown = new DnsError("ETIMEOUT", name);
    for (const query of clients) {
      try {
        const packet = await query(name, type);
        const rcodeError = RCODE_ERRORS[packet.header.rcode];
        if (rcodeError) throw new DnsError(rcodeError, name);
        const answers = (packet.answers as Answer[]).filter((a) => a.type === TYPE_NUMBER[type]);
        if (answers.length === 0) throw new DnsError("ENODATA", name);
        return answers;
      } catch (err) {
        if (err instanceof DnsError && err.code !== "ESERVFAIL" && err.code !== "EREFUSED") throw err;
        lastError = err instanceof DnsError ? err : new DnsError("ETIMEOUT", name);
      }
    }
    throw lastError;
  };
}

export function createResolver(opts: ResolverOptions): DnsResolver {
  const resolver = resolverOver(dnsClient(opts.servers, opts.timeoutMs ?? 3000), opts.cacheTtlMs ?? 60_000, opts.cacheMaxEntries ?? 10_000);
  // A plain copy: it crosses to worker threads by structured clone.
  return { ...resolver, options: { ...opts, servers: [...opts.servers] } };
}

function resolverOver(ask: ReturnType<typeof dnsClient>, cacheTtlMs: number, cacheMaxEntries: number): DnsResolver {
  const cache = new TtlCache<Answer[]>(cacheTtlMs, cacheMaxEntries, isNoDataError);
  // Kept for the answer's own TTL, at most cacheTtlMs ("no such name" for cacheTtlMs).
  const lookup = (name: string, type: keyof typeof TYPE_NUMBER) =>
    cache.get(`${type} ${name.toLowerCase()}`, () => ask(name.replace(/\.$/, ""), type), answersTtlMs);
  const names = (type: "CNAME" | "PTR" | "NS") => async (n: string) =>
    (await lookup(n, type)).map((a) => (a.domain ?? a.ns ?? "").replace(/\.$/, ""));

  const api: DnsResolver = {
    resolveMx: async (n) =>
      (await lookup(n, "MX")).map((a) => ({ exchange: (a.exchange ?? "").replace(/\.$/, ""), priority: a.priority ?? 0 })),
    resolveTxt: async (n) => (await lookup(n, "TXT")).map((a) => (Array.isArray(a.data) ? a.data : [a.data ?? ""])),
    resolve4: async (n) => (await lookup(n, "A")).map((a) => a.address!),
    resolve6: async (n) => (await lookup(n, "AAAA")).map((a) => a.address!),
    resolveCname: names("CNAME"),
    resolveCaa: async (n) => (await lookup(n, "CAA")).map((a) => ({ flags: a.flags ?? 0, tag: a.tag ?? "", value: a.value ?? "" })),
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
        case "PTR":
          return names("PTR")(n);
        case "NS":
          return names("NS")(n);
        default:
          return Promise.reject(new DnsError("ENODATA", n));
      }
    },
    uncached: () => (cacheTtlMs <= 0 ? api : resolverOver(ask, 0, 0)),
  };
  return api;
}
