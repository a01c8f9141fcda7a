// The loopback DNS server of `bun run bench:inbound`: Debian's unbound (a DNS server in C)
// in a child process, answering the sender domains' TXT records from its config and
// NXDOMAIN for every other name, forwarding nothing.
//
// Why a separate process in C: the JavaScript server of the tests (test/helpers/dns-server.ts)
// ran inside the benchmark process and cost it about 900 µs of CPU per Postroom message
// (three or four queries), on the two cores the servers are measured on. unbound answers
// the same queries for about 70 µs each (with query logging on), and its CPU is its own
// process's, so the benchmark can print it apart.
//
// Why unbound and not dnsmasq: dnsmasq 2.90 looks a TXT record up by walking the list of
// all its txt-record lines, so with 12,000 domains (36,000 records) each query cost it
// 1,065-1,157 µs here, more than the JavaScript server. unbound keeps local-data in a
// tree.
//
// Queries are counted from unbound's query log (log-queries: one line per query, written
// and flushed as it comes in): `queries()` reads the lines logged since the last call.
import { closeSync, existsSync, openSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { processCpuMs, terminate } from "./child.ts";

const UNBOUND = "/usr/sbin/unbound";
/** A TXT character-string holds at most 255 bytes; longer texts go as several. */
const TXT_STRING_BYTES = 255;

/** A TXT record's text as unbound's local-data wants it: quoted strings of at most 255 bytes, separated by spaces. */
export function txtStrings(text: string): string {
  if (/["\\\n']/.test(text) || !/^[\x20-\x7e]*$/.test(text))
    throw new Error(`TXT text must be printable ASCII without quotes or backslashes: ${JSON.stringify(text)}`);
  return (text.match(new RegExp(`.{1,${TXT_STRING_BYTES}}`, "g")) ?? [""]).map((s) => `"${s}"`).join(" ");
}

/**
 * unbound's config: loopback only, in the foreground, no chroot or user change, one
 * thread, no DNSSEC validation, every name under `.` answered locally ("static": the
 * records given, NXDOMAIN or NODATA for the rest), so nothing is ever forwarded.
 */
export function unboundConfig(
  port: number,
  dir: string,
  records: Iterable<readonly [name: string, text: string]>,
  opts: UnboundListenOptions = {},
): string {
  const lines = [
    "server:",
    `  interface: ${opts.host ?? "127.0.0.1"}`,
    `  port: ${port}`,
    "  do-ip6: no",
    "  do-daemonize: no",
    '  username: ""',
    '  chroot: ""',
    `  directory: "${dir}"`,
    '  pidfile: ""',
    "  use-syslog: no",
    `  logfile: "${join(dir, "unbound.log")}"`,
    "  verbosity: 0",
    "  log-queries: yes",
    "  num-threads: 1",
    "  access-control: 127.0.0.0/8 allow",
    '  module-config: "iterator"',
    '  local-zone: "." static',
  ];
  for (const [name, text] of records) lines.push(`  local-data: '${name}. 60 IN TXT ${txtStrings(text)}'`);
  for (const rr of opts.rrs ?? []) {
    if (/['\\\n]/.test(rr))
      throw new Error(`a resource record for unbound must not hold quotes, backslashes or newlines: ${JSON.stringify(rr)}`);
    lines.push(`  local-data: '${rr}'`);
  }
  return lines.join("\n") + "\n";
}

/** Where unbound listens and what else it serves, besides TXT records. */
export interface UnboundListenOptions {
  /** The loopback address it binds (default 127.0.0.1). */
  host?: string;
  /**
   * A fixed port (default: a free one). Port 53 is for programs that cannot be told a
   * port, such as Postfix, whose resolver reads only `nameserver ADDRESS` from resolv.conf.
   */
  port?: number;
  /** Other records, in zone-file form ("name. 60 IN MX 10 host."). */
  rrs?: readonly string[];
}

/** A free loopback port for both UDP and TCP at the time of asking (unbound binds both). */
function freePort(): number {
  const tcp = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = tcp.port;
  tcp.stop(true);
  return port;
}

export class UnboundServer {
  private logOffset = 0;
  private constructor(
    readonly proc: Subprocess<"ignore", "ignore", "pipe">,
    readonly host: string,
    readonly port: number,
    private logFile: string,
  ) {}

  /**
   * Starts unbound with `records` (name → TXT text) in `dir` and waits until `ready`
   * (a query through the new server) succeeds; tries another port if unbound exits at start.
   */
  static async start(
    dir: string,
    records: Iterable<readonly [string, string]>,
    ready: (address: string) => Promise<unknown>,
    opts: UnboundListenOptions = {},
  ): Promise<UnboundServer> {
    if (!existsSync(UNBOUND))
      throw new Error(`${UNBOUND} not found: install Debian's unbound (apt-get install unbound), or run with --dns js`);
    const confFile = join(dir, "unbound.conf");
    const list = [...records];
    const host = opts.host ?? "127.0.0.1";
    // A free port is free only when asked: another program may take it first, so try again.
    // A fixed port is tried once.
    const attempts = opts.port === undefined ? 5 : 1;
    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? freePort();
      writeFileSync(confFile, unboundConfig(port, dir, list, { ...opts, host }));
      const proc = Bun.spawn([UNBOUND, "-d", "-c", confFile], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
      const server = new UnboundServer(proc, host, port, join(dir, "unbound.log"));
      const started = await server.waitReady(ready);
      if (started === true) {
        server.queries(); // the readiness queries are no phase's
        return server;
      }
      await terminate(proc);
      if (attempt >= attempts) throw new Error(`unbound did not start on ${host}:${port}: ${started}`);
    }
  }

  private async waitReady(ready: (address: string) => Promise<unknown>): Promise<true | string> {
    const end = Date.now() + 30_000;
    let last = "";
    while (Date.now() < end) {
      if (this.proc.exitCode !== null)
        return `it exited with ${this.proc.exitCode}: ${(await new Response(this.proc.stderr).text()).trim()}`;
      try {
        await ready(this.address);
        return true;
      } catch (err) {
        last = (err as Error).message;
        await Bun.sleep(50);
      }
    }
    return `no answer within 30 s (${last})`;
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** CPU time unbound has used, in ms. */
  cpuMs(): number {
    return processCpuMs(this.proc.pid);
  }

  /** name → how often it was asked for (any type) since the last call, from the query log. */
  queries(): Map<string, number> {
    const fd = openSync(this.logFile, "r");
    const chunks: Buffer[] = [];
    try {
      const buf = Buffer.alloc(1 << 20);
      for (let n: number; (n = readSync(fd, buf, 0, buf.length, this.logOffset)) > 0; this.logOffset += n)
        chunks.push(Buffer.from(buf.subarray(0, n)));
    } finally {
      closeSync(fd);
    }
    const text = Buffer.concat(chunks).toString("latin1");
    // A line unwritten to its end stays for the next call.
    const end = text.lastIndexOf("\n") + 1;
    this.logOffset -= Buffer.byteLength(text.slice(end), "latin1");
    return countQueryLines(text.slice(0, end));
  }

  async stop(): Promise<void> {
    await terminate(this.proc);
  }
}

/** Counts log-queries lines ("[time] unbound[pid:0] info: 127.0.0.1 NAME. TXT IN") by name, lowercase without the final dot. */
export function countQueryLines(log: string): Map<string, number> {
  const queries = new Map<string, number>();
  for (const m of log.matchAll(/ info: \S+ (\S+?)\.? [A-Z0-9]+ [A-Z]+$/gm)) {
    const name = m[1]!.toLowerCase();
    queries.set(name, (queries.get(name) ?? 0) + 1);
  }
  return queries;
}
