// `bun run bench:inbound`: inbound SMTP throughput of Postroom against a bare pipeline
// (bench/bare-pipeline.ts: smtp-server + mailparser + one JSON POST, nothing else),
// measured in the same run, alternately (A B A B ...), reporting the median of each and
// the ratio. Target: Postroom >= 0.80 of the bare pipeline.
//
//   bun run bench:inbound [--messages N] [--connections C] [--warmup W] [--rounds R] [--profile DIR]
//   defaults: N=4000, C=8, W=2000 per server, R=3 (rounds of one bare run and one Postroom run)
//   (or BENCH_MESSAGES, BENCH_CONNECTIONS, BENCH_WARMUP, BENCH_ROUNDS, BENCH_PROFILE)
//   --profile runs both servers under `bun --cpu-prof` and prints where their main
//   threads spend their time (bench/profile-summary.ts); the profiler slows them down.
//
// How it is set up, and why:
// - Both servers run as child processes: Postroom as the real `bun src/main.ts serve`
//   with a generated config, the bare pipeline as `bun bench/bare-pipeline.ts`. Each then
//   has an event loop of its own and the client's JavaScript never runs on it, so the
//   figure is the server's throughput, not a mix of client and server work (in one process
//   the client's fixed cost per message would pull the ratio towards 1). It is also how
//   Postroom runs in production, and lets us read each server's CPU time from /proc and
//   profile it with --cpu-prof. Both get exactly the same treatment.
// - This process holds the rest, shared by both runs: the SMTP client (bench/smtp-client.ts,
//   raw SMTP with pipelining, C persistent connections each sending its share of N
//   sequentially), the target (one Bun.serve on loopback answering 200 at once), and a DNS
//   server on loopback (test/helpers/dns-server.ts) that answers an SPF record for the
//   sender's domain and NXDOMAIN for everything else, so Postroom's SPF/DKIM/DMARC checks
//   cost what they cost against a fast resolver, not timeouts. With 2 cores the client side
//   still competes with the server for CPU; its cost per message is printed so it can be
//   seen that it is not the bottleneck.
// - Correctness is checked on every run: every message must get 250, the target must get
//   exactly one POST per message (per server), and Postroom's payload must show SPF "pass"
//   (proof that the DNS server answered). Anything else aborts with exit code 1.
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import { hashSecret } from "../src/auth/secrets.ts";
import { parseConfigText } from "../src/config/load.ts";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { buildMessage, MAIL_FROM, SENDER_DOMAIN } from "./message.ts";
import { summarizeProfile } from "./profile-summary.ts";
import { SmtpConnection } from "./smtp-client.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const TARGET_RATIO = 0.8;

// ---------------------------------------------------------------- options

function options() {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      messages: { type: "string", short: "n" },
      connections: { type: "string", short: "c" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      profile: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: false,
    strict: true,
  });
  if (values.help) {
    console.log("usage: bun run bench:inbound [--messages N] [--connections C] [--warmup W] [--rounds R] [--profile DIR]");
    process.exit(0);
  }
  const int = (flag: string | undefined, env: string, dflt: number, min: number) => {
    const raw = flag ?? process.env[env];
    const n = raw === undefined || raw === "" ? dflt : Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`${env.toLowerCase().replace("bench_", "--")} must be an integer >= ${min}, got ${raw}`);
    return n;
  };
  const messages = int(values.messages, "BENCH_MESSAGES", 4000, 1);
  const connections = int(values.connections, "BENCH_CONNECTIONS", 8, 1);
  const warmup = int(values.warmup, "BENCH_WARMUP", 2000, 0);
  const rounds = int(values.rounds, "BENCH_ROUNDS", 3, 1);
  if (connections > messages) throw new Error(`--connections (${connections}) must not exceed --messages (${messages})`);
  return { messages, connections, warmup, rounds, profileDir: values.profile || process.env.BENCH_PROFILE ? resolve(values.profile || process.env.BENCH_PROFILE!) : null };
}

// ---------------------------------------------------------------- child processes

const CLK_TCK = (() => {
  const out = Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim();
  return Number(out) > 0 ? Number(out) : 100;
})();

class Child {
  readonly lines: Record<string, unknown>[] = [];
  private waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  private stderr = "";
  /** Log lines are kept only until the server is up; later ones are only counted. */
  private keep = true;
  logLines = 0;

  constructor(
    readonly name: string,
    readonly proc: Subprocess<"ignore", "pipe", "pipe">,
  ) {
    void this.pump();
    void (async () => {
      this.stderr = await new Response(proc.stderr).text();
    })();
  }

  static spawn(name: string, args: string[]): Child {
    return new Child(name, Bun.spawn([process.execPath, ...args], { cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "pipe" }));
  }

  private async pump() {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of this.proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const text = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        this.logLines++;
        if (!this.keep) continue;
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(text);
        } catch {
          line = { raw: text };
        }
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => (w.match(line) ? (w.resolve(line), false) : true));
      }
    }
  }

  waitFor(match: (l: Record<string, unknown>) => boolean, timeoutMs = 15_000): Promise<Record<string, unknown>> {
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no matching log line within ${timeoutMs} ms; got:\n${this.lines.map((l) => JSON.stringify(l)).join("\n")}\n${this.stderr}`)), timeoutMs);
      void this.proc.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited with code ${code} before it was ready:\n${this.lines.map((l) => JSON.stringify(l)).join("\n")}\n${this.stderr}`));
      });
      this.waiters.push({ match, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }

  ready() {
    this.keep = false;
    this.lines.length = 0;
  }

  /** CPU time (user + system, all threads) the process has used so far, in ms. */
  cpuMs(): number {
    const stat = readFileSync(`/proc/${this.proc.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the name: state is field 3, utime 14 and stime 15 (proc(5)), i.e. indexes 11 and 12 here.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  }

  async stop(): Promise<number | null> {
    if (this.proc.exitCode !== null) return this.proc.exitCode;
    this.proc.kill("SIGTERM");
    const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 10_000).unref());
    if ((await Promise.race([this.proc.exited, timeout])) === "timeout") {
      this.proc.kill("SIGKILL");
      await this.proc.exited;
    }
    return this.proc.exitCode;
  }
}

// ---------------------------------------------------------------- the target

interface TargetCounter {
  posts: number;
  bytes: number;
  last: string;
}

function startTarget() {
  const counters = new Map<string, TargetCounter>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      let c = counters.get(path);
      if (!c) counters.set(path, (c = { posts: 0, bytes: 0, last: "" }));
      const body = await req.text();
      if (req.method === "POST") c.posts++;
      c.bytes += body.length;
      c.last = body;
      return new Response("ok");
    },
  });
  const counter = (path: string): TargetCounter => {
    let c = counters.get(path);
    if (!c) counters.set(path, (c = { posts: 0, bytes: 0, last: "" }));
    return c;
  };
  return { server, url: (path: string) => `http://127.0.0.1:${server.port}${path}`, counter };
}

// ---------------------------------------------------------------- Postroom

const ACCOUNT = { id: "b0b0b0b0b0b0b0b0", token: "pr_bench_token", outboundId: "b0b0b0b0b0b0b0f1", smtpKey: "pr_bench_smtp_key" };

function postroomConfig(dataDir: string, dnsServer: string): string {
  return `
hostname = "mx.postroom.bench"
data_dir = "${dataDir}"
[log]
# The default level: one "inbound delivered" line per message, as in production.
level = "info"
[http]
listen = "127.0.0.1:0"
public_url = "http://127.0.0.1:8080"
[smtp]
inbound_listen = "127.0.0.1:0"
submission_listen = ""
[inbound]
domain = "in.postroom.bench"
allow_private_targets = true
[outbound]
bounce_host = "bounces.postroom.bench"
[dns]
servers = ["${dnsServer}"]
[[accounts]]
id = "${ACCOUNT.id}"
name = "bench"
api_tokens = ["${hashSecret(ACCOUNT.token)}"]
rate_limit = "off"
  [[accounts.outbound]]
  id = "${ACCOUNT.outboundId}"
  api_keys = ["${hashSecret(ACCOUNT.smtpKey)}"]
  send_rate_limit = "off"
`;
}

async function startPostroom(workDir: string, dnsServer: string, target: string, profileArgs: string[]) {
  const configPath = join(workDir, "postroom.toml");
  const text = postroomConfig(join(workDir, "data"), dnsServer);
  const parsed = parseConfigText(text);
  if (!parsed.ok) throw new Error(`the benchmark's Postroom config is invalid:\n${parsed.problems.join("\n")}`);
  writeFileSync(configPath, text);
  const child = Child.spawn("postroom", [...profileArgs, "src/main.ts", "serve", "--config", configPath]);
  const smtpPort = (await child.waitFor((l) => l.msg === "inbound smtp listening")).port as number;
  const httpPort = (await child.waitFor((l) => l.msg === "http listening")).port as number;
  const res = await fetch(`http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.id}/addresses`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT.token}`, "content-type": "application/json" },
    body: JSON.stringify({ target, target_format: "json+n" }),
  });
  const created = (await res.json()) as { email?: string };
  if (res.status !== 201 || !created.email) throw new Error(`creating the benchmark address failed: ${res.status} ${JSON.stringify(created)}`);
  child.ready();
  return { child, smtpPort, rcpt: created.email };
}

async function startBare(target: string, profileArgs: string[]) {
  const child = Child.spawn("bare pipeline", [...profileArgs, "bench/bare-pipeline.ts", "--target", target]);
  const smtpPort = (await child.waitFor((l) => l.msg === "bare smtp listening")).port as number;
  child.ready();
  return { child, smtpPort };
}

// ---------------------------------------------------------------- one run

let nextMessage = 0;

interface RunResult {
  count: number;
  ms: number;
  rate: number;
  serverCpuMs: number;
  clientCpuMs: number;
}

/** Sends `count` messages over `connections` connections and checks every reply. */
async function run(label: string, port: number, rcpt: string, count: number, connections: number, server: Child, message: ReturnType<typeof buildMessage>): Promise<RunResult> {
  const conns = await Promise.all(Array.from({ length: connections }, () => SmtpConnection.open("127.0.0.1", port, "client.sender.bench.test")));
  const share = (i: number) => Math.floor(count / connections) + (i < count % connections ? 1 : 0);
  const failures: string[] = [];
  let failed = 0;
  const cpu0 = server.cpuMs();
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    conns.map(async (conn, i) => {
      for (let k = share(i); k > 0; k--) {
        const r = await conn.send(MAIL_FROM, rcpt, message.data(nextMessage++));
        if (r.code !== 250) {
          failed++;
          if (failures.length < 5) failures.push(`${r.code} ${r.text}`);
        }
      }
    }),
  );
  const ms = performance.now() - t0;
  const clientUsage = process.cpuUsage(client0);
  const serverCpuMs = server.cpuMs() - cpu0;
  await Promise.all(conns.map((c) => c.quit()));
  if (failed > 0) throw new Error(`${label}: ${failed} of ${count} messages did not get 250; first replies:\n  ${failures.join("\n  ")}`);
  return { count, ms, rate: (count * 1000) / ms, serverCpuMs, clientCpuMs: (clientUsage.user + clientUsage.system) / 1000 };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// ---------------------------------------------------------------- main

async function main() {
  const opts = options();
  const workDir = mkdtempSync(join(tmpdir(), "postroom-bench-"));
  const cleanup: (() => Promise<unknown> | unknown)[] = [() => rmSync(workDir, { recursive: true, force: true })];
  try {
    // DNS: SPF for the sender's domain, NXDOMAIN for every other name; queries counted.
    const dns = await TestDnsServer.start();
    cleanup.unshift(() => dns.stop());
    dns.set(SENDER_DOMAIN, [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
    const dnsQueries = new Map<string, number>();
    const zoneGet = dns.zone.get.bind(dns.zone);
    dns.zone.get = (name: string) => {
      dnsQueries.set(name, (dnsQueries.get(name) ?? 0) + 1);
      return zoneGet(name);
    };

    const target = startTarget();
    cleanup.unshift(() => target.server.stop(true));

    let profileArgs = (_name: string): string[] => [];
    if (opts.profileDir) {
      const dir = opts.profileDir;
      mkdirSync(dir, { recursive: true });
      profileArgs = (name) => ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}`];
    }

    const bare = await startBare(target.url("/bare"), profileArgs("bare-pipeline"));
    cleanup.unshift(() => bare.child.stop());
    const postroom = await startPostroom(workDir, dns.address, target.url("/postroom"), profileArgs("postroom"));
    cleanup.unshift(() => postroom.child.stop());

    const message = buildMessage(postroom.rcpt);
    const sides = {
      bare: { label: "bare pipeline", port: bare.smtpPort, child: bare.child, path: "/bare", rates: [] as number[], cpu: [] as number[], client: [] as number[] },
      postroom: { label: "postroom", port: postroom.smtpPort, child: postroom.child, path: "/postroom", rates: [] as number[], cpu: [] as number[], client: [] as number[] },
    };

    console.log(`inbound benchmark: N=${opts.messages} messages over C=${opts.connections} connections, ${opts.warmup} warm-up, ${opts.rounds} round${opts.rounds === 1 ? "" : "s"} (bare, postroom, bare, postroom, ...), message ${message.size} bytes`);
    console.log(`machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`);

    const measure = async (side: (typeof sides)["bare"], count: number, warm: boolean) => {
      const counter = target.counter(side.path);
      const before = counter.posts;
      const r = await run(side.label, side.port, postroom.rcpt, count, opts.connections, side.child, message);
      const got = counter.posts - before;
      if (got !== count) throw new Error(`${side.label}: the target received ${got} POSTs for ${count} messages`);
      if (side === sides.postroom) {
        const payload = JSON.parse(counter.last) as { envelope?: { spf?: { result?: string } } };
        if (payload.envelope?.spf?.result !== "pass") throw new Error(`postroom: SPF of the last message was ${JSON.stringify(payload.envelope?.spf)}, not pass: the DNS server did not answer as expected`);
      }
      const tag = warm ? "warm-up " : "";
      console.log(
        `  ${tag}${side.label.padEnd(14)} ${r.rate.toFixed(0).padStart(5)} msg/s  (${count} in ${(r.ms / 1000).toFixed(2)} s; server CPU ${((r.serverCpuMs * 1000) / count).toFixed(0)} µs/msg, client+target+DNS CPU ${((r.clientCpuMs * 1000) / count).toFixed(0)} µs/msg)`,
      );
      if (!warm) {
        side.rates.push(r.rate);
        side.cpu.push(r.serverCpuMs / count);
        side.client.push(r.clientCpuMs / count);
      }
    };

    if (opts.warmup > 0) {
      await measure(sides.bare, opts.warmup, true);
      await measure(sides.postroom, opts.warmup, true);
    }
    const warmupQueries = new Map(dnsQueries);
    dnsQueries.clear();
    for (let round = 0; round < opts.rounds; round++) {
      await measure(sides.bare, opts.messages, false);
      await measure(sides.postroom, opts.messages, false);
    }

    const bareRate = median(sides.bare.rates);
    const postroomRate = median(sides.postroom.rates);
    const ratio = postroomRate / bareRate;
    const bodyBytes = (side: (typeof sides)["bare"]) => target.counter(side.path).last.length;
    console.log("");
    console.log(`bare pipeline: ${bareRate.toFixed(0)} msg/s  (median of ${sides.bare.rates.length}; server CPU ${(median(sides.bare.cpu) * 1000).toFixed(0)} µs/msg; POST body ${bodyBytes(sides.bare)} B)`);
    console.log(`postroom:      ${postroomRate.toFixed(0)} msg/s  (median of ${sides.postroom.rates.length}; server CPU ${(median(sides.postroom.cpu) * 1000).toFixed(0)} µs/msg; POST body ${bodyBytes(sides.postroom)} B)`);
    console.log(`ratio:         ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(2)})${ratio >= TARGET_RATIO ? "" : "  BELOW TARGET"}`);
    const listQueries = (q: Map<string, number>) => [...q].map(([n, c]) => `${n} x${c} (${dns.zone.has(n) ? "answered" : "NXDOMAIN"})`).join(", ");
    console.log(`DNS queries (loopback server: SPF TXT for ${SENDER_DOMAIN}, NXDOMAIN for the rest):`);
    console.log(`  warm-up: ${listQueries(warmupQueries) || "none"}`);
    console.log(`  timed runs: ${listQueries(dnsQueries) || "none (answered from Postroom's 60 s cache)"}`);
    if (opts.profileDir) {
      // The profiles are written when the servers exit.
      await bare.child.stop();
      await postroom.child.stop();
      const total = opts.warmup + opts.rounds * opts.messages;
      for (const name of ["bare-pipeline", "postroom"]) {
        const file = join(opts.profileDir, `${name}.cpuprofile`);
        console.log(`\n${name} main thread (${file}; markdown report next to it):`);
        console.log(existsSync(file) ? summarizeProfile(file, total) : "  no profile was written");
      }
    }
  } finally {
    for (const step of cleanup) await step();
  }
}

try {
  await main();
  process.exit(0);
} catch (err) {
  console.error(`bench:inbound failed: ${(err as Error).message}`);
  process.exit(1);
}
