// The DNS server bench:inbound's senders publish in (bench/signed-senders.ts): unbound in a
// child process (bench/unbound.ts, the default) or, with `--dns js`, the JavaScript server
// of the tests inside the benchmark process (as before 2026-11-24), behind one interface.
import { createResolver } from "../src/lib/dns.ts";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { countQueries } from "./measure.ts";
import { publishSenders, senderRecords, type SenderKey } from "./signed-senders.ts";
import { UnboundServer } from "./unbound.ts";

export const DNS_KINDS = ["unbound", "js"] as const;
export type DnsKind = (typeof DNS_KINDS)[number];

export interface SenderDns {
  kind: DnsKind;
  address: string;
  /** Whether `name` has a record (else it is answered NXDOMAIN). */
  has(name: string): boolean;
  /** name → queries for it since the last call. */
  takeQueries(): Map<string, number>;
  /** CPU time (ms) of the DNS server's own process; null when it runs in this process. */
  cpuMs(): number | null;
  stop(): Promise<void>;
}

/**
 * Starts the `kind` server with the records of sender domains 0..domains-1 and checks that
 * it serves the first and the last domain's as configured (`checkServed`).
 */
export async function startSenderDns(kind: DnsKind, workDir: string, domains: number, key: SenderKey): Promise<SenderDns> {
  const records = Array.from({ length: domains }, (_, k) => senderRecords(k, key)).flat();
  const names = new Set(records.map(([name]) => name));
  let dns: SenderDns;
  if (kind === "unbound") {
    const [first] = records;
    const server = await UnboundServer.start(workDir, records, (address) =>
      createResolver({ servers: [address], timeoutMs: 500, cacheMaxEntries: 1 }).resolveTxt(first![0]),
    );
    dns = {
      kind,
      address: server.address,
      has: (n) => names.has(n),
      takeQueries: () => server.queries(),
      cpuMs: () => server.cpuMs(),
      stop: () => server.stop(),
    };
  } else {
    const server = await TestDnsServer.start();
    publishSenders(server, domains, key);
    const counted = countQueries(server);
    const takeQueries = () => {
      const copy = new Map(counted);
      counted.clear();
      return copy;
    };
    dns = { kind, address: server.address, has: (n) => names.has(n), takeQueries, cpuMs: () => null, stop: () => server.stop() };
  }
  try {
    await checkServed(dns.address, [...senderRecords(0, key), ...(domains > 1 ? senderRecords(domains - 1, key) : [])]);
    dns.takeQueries(); // the check's queries are no phase's
  } catch (err) {
    await dns.stop();
    throw err;
  }
  return dns;
}

/**
 * Asks the server at `address` for each of `records` through Postroom's own resolver and
 * throws unless the TXT text (its strings joined) is what was configured, and unless a
 * name that was not configured is NXDOMAIN.
 */
export async function checkServed(address: string, records: readonly (readonly [string, string])[]): Promise<void> {
  const resolver = createResolver({ servers: [address], timeoutMs: 2000, cacheMaxEntries: 1 });
  for (const [name, text] of records) {
    const answers = await resolver.resolveTxt(name).catch((err: Error & { code?: string }) => `${err.code ?? err.message}`);
    const got = typeof answers === "string" ? answers : answers.map((strings) => strings.join(""));
    if (typeof got === "string" || got.length !== 1 || got[0] !== text)
      throw new Error(
        `the DNS server at ${address} answered ${JSON.stringify(got)} for the TXT record of ${name}, not ${JSON.stringify(text)}`,
      );
  }
  const unknown = "no-such-name.bench.test";
  const code = await resolver.resolveTxt(unknown).then(
    (a) => `an answer ${JSON.stringify(a)}`,
    (err: { code?: string }) => err.code,
  );
  if (code !== "ENOTFOUND") throw new Error(`the DNS server at ${address} answered ${code} for ${unknown}, not NXDOMAIN (ENOTFOUND)`);
}
