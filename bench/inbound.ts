// `bun run bench:inbound`: inbound SMTP throughput of Postroom against a bare pipeline
// (bench/bare-pipeline.ts: smtp-server + mailparser + one JSON POST, nothing else),
// measured in the same run, alternately (A B A B ...), reporting the median of each and
// the ratio. Target: Postroom >= 0.80 of the bare pipeline.
//
//   bun run bench:inbound [--messages N] [--connections C] [--warmup W] [--rounds R] [--profile DIR]
//   defaults: N=4000, C=8, W=2000 per warm-up batch, R=5 (rounds of one bare run and one Postroom run)
//   (or BENCH_MESSAGES, BENCH_CONNECTIONS, BENCH_WARMUP, BENCH_ROUNDS, BENCH_PROFILE)
//   --profile runs both servers under `bun --cpu-prof` and prints where their main
//   threads spend their time (bench/profile-summary.ts); the profiler slows them down.
//
// How it is set up, and why:
// - Both servers run as child processes (bench/child.ts): Postroom as the real
//   `bun src/main.ts serve` with a generated config (bench/postroom.ts), the bare
//   pipeline as `bun bench/bare-pipeline.ts`. Each then has an event loop of its own and
//   the client's JavaScript never runs on it, so the figure is the server's throughput,
//   not a mix of client and server work (in one process the client's fixed cost per
//   message would pull the ratio towards 1). It is also how Postroom runs in production,
//   and lets us read each server's CPU time from /proc and profile it with --cpu-prof.
//   Both get exactly the same treatment.
// - This process holds the rest, shared by both runs: the SMTP client (bench/smtp-client.ts,
//   raw SMTP with pipelining, C persistent connections each sending its share of N
//   sequentially), the target (one Bun.serve on loopback answering 200 at once), and a DNS
//   server on loopback (test/helpers/dns-server.ts) that answers an SPF record for the
//   sender's domain and NXDOMAIN for everything else, so Postroom's SPF/DKIM/DMARC checks
//   cost what they cost against a fast resolver, not timeouts. With 2 cores the client side
//   still competes with the server for CPU; its cost per message is printed so it can be
//   seen that it is not the bottleneck.
// - Each server is warmed up before the timed rounds, in batches of W messages, until its
//   JIT compiler is nearly idle (its threads used at most 5% of the server's CPU during
//   a batch; at most 20 batches): the figure wanted is the speed a server keeps for days,
//   and JavaScriptCore keeps compiling (and recompiling) hot code for a while, on a core
//   the server and the client also need. With a single batch of 2,000 (the warm-up this
//   benchmark had before), the compiler still took 9-23% of Postroom's CPU through the
//   next 12,000 messages and 8-20% of the bare pipeline's: the timed rounds measured
//   both, Postroom the more, while they were still compiling. Each needs 16,000-22,000.
// - Correctness is checked on every run: every message must get 250, the target must get
//   exactly one POST per message (per server), and Postroom's payload must show SPF "pass"
//   (proof that the DNS server answered). Anything else aborts with exit code 1.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { dirOption, intOption, parseOptions } from "./args.ts";
import { Child, cpuProfileArgs, cpuProfileReport } from "./child.ts";
import { countQueries, median } from "./measure.ts";
import { buildMessage, MAIL_FROM, SENDER_DOMAIN } from "./message.ts";
import { inboundAddress, startPostroom } from "./postroom.ts";
import { summarizeProfile } from "./profile-summary.ts";
import { SmtpConnection } from "./smtp-client.ts";
import { startTarget } from "./target.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const TARGET_RATIO = 0.8;
/** Warm-up ends after a batch in which the JIT threads used at most this share of the server's CPU... */
const JIT_QUIET_SHARE = 0.05;
/** ...or after this many batches. */
const MAX_WARMUP_BATCHES = 20;

// ---------------------------------------------------------------- options

function options() {
  const values = parseOptions("bun run bench:inbound [--messages N] [--connections C] [--warmup W] [--rounds R] [--profile DIR]", {
    messages: { type: "string", short: "n" },
    connections: { type: "string", short: "c" },
    warmup: { type: "string" },
    rounds: { type: "string" },
    profile: { type: "string" },
  });
  const messages = intOption(values.messages, "BENCH_MESSAGES", 4000, 1);
  const connections = intOption(values.connections, "BENCH_CONNECTIONS", 8, 1);
  const warmup = intOption(values.warmup, "BENCH_WARMUP", 2000, 0);
  const rounds = intOption(values.rounds, "BENCH_ROUNDS", 5, 1);
  if (connections > messages) throw new Error(`--connections (${connections}) must not exceed --messages (${messages})`);
  return { messages, connections, warmup, rounds, profileDir: dirOption(values.profile, "BENCH_PROFILE") };
}

// ---------------------------------------------------------------- the servers

/** Postroom taking mail in on an ephemeral port, with one address that POSTs to `target`. */
async function startInboundPostroom(workDir: string, dnsServer: string, target: string, profileArgs: string[]) {
  const { child, httpPort } = await startPostroom(workDir, dnsServer, { inboundListen: "127.0.0.1:0", inbound: "allow_private_targets = true" }, profileArgs);
  const smtpPort = (await child.waitFor((l) => l.msg === "inbound smtp listening")).port as number;
  const rcpt = await inboundAddress(httpPort, target);
  child.ready();
  return { child, smtpPort, rcpt };
}

async function startBare(target: string, profileArgs: string[]) {
  const child = Child.spawn("bare pipeline", [...profileArgs, "bench/bare-pipeline.ts", "--target", target], ROOT);
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
  /** The server's main thread (its event loop, which one core bounds): near ms means saturated. */
  mainThreadCpuMs: number;
  /** The server's JIT compiler threads. */
  jitCpuMs: number;
  clientCpuMs: number;
}

/** Sends `count` messages over `connections` connections and checks every reply. */
async function run(label: string, port: number, rcpt: string, count: number, connections: number, server: Child, message: ReturnType<typeof buildMessage>): Promise<RunResult> {
  const conns = await Promise.all(Array.from({ length: connections }, () => SmtpConnection.open("127.0.0.1", port, "client.sender.bench.test")));
  const share = (i: number) => Math.floor(count / connections) + (i < count % connections ? 1 : 0);
  const failures: string[] = [];
  let failed = 0;
  const cpu0 = server.cpuMs();
  const main0 = server.mainThreadCpuMs();
  const jit0 = server.jitCpuMs();
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
  const mainThreadCpuMs = server.mainThreadCpuMs() - main0;
  const jitCpuMs = server.jitCpuMs() - jit0;
  await Promise.all(conns.map((c) => c.quit()));
  if (failed > 0) throw new Error(`${label}: ${failed} of ${count} messages did not get 250; first replies:\n  ${failures.join("\n  ")}`);
  return { count, ms, rate: (count * 1000) / ms, serverCpuMs, mainThreadCpuMs, jitCpuMs, clientCpuMs: (clientUsage.user + clientUsage.system) / 1000 };
}

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
    const dnsQueries = countQueries(dns);

    const target = startTarget();
    cleanup.unshift(() => target.server.stop(true));

    const bare = await startBare(target.url("/bare"), cpuProfileArgs(opts.profileDir, "bare-pipeline"));
    cleanup.unshift(() => bare.child.stop());
    const postroom = await startInboundPostroom(workDir, dns.address, target.url("/postroom"), cpuProfileArgs(opts.profileDir, "postroom"));
    cleanup.unshift(() => postroom.child.stop());

    const message = buildMessage(postroom.rcpt);
    const sides = {
      bare: { label: "bare pipeline", port: bare.smtpPort, child: bare.child, path: "/bare", rates: [] as number[], cpu: [] as number[], client: [] as number[] },
      postroom: { label: "postroom", port: postroom.smtpPort, child: postroom.child, path: "/postroom", rates: [] as number[], cpu: [] as number[], client: [] as number[] },
    };

    console.log(`inbound benchmark: N=${opts.messages} messages over C=${opts.connections} connections, warm-up in batches of ${opts.warmup} until the JIT is quiet, ${opts.rounds} round${opts.rounds === 1 ? "" : "s"} (bare, postroom, bare, postroom, ...), message ${message.size} bytes`);
    console.log(`machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`);

    /** The JIT threads' share of the server's CPU in a run, in percent. */
    const jitShare = (r: RunResult) => (r.serverCpuMs > 0 ? (100 * r.jitCpuMs) / r.serverCpuMs : 0).toFixed(0);
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
        `  ${tag}${side.label.padEnd(14)} ${r.rate.toFixed(0).padStart(5)} msg/s  (${count} in ${(r.ms / 1000).toFixed(2)} s; server CPU ${((r.serverCpuMs * 1000) / count).toFixed(0)} µs/msg, JIT ${jitShare(r)}% of it, main thread ${((100 * r.mainThreadCpuMs) / r.ms).toFixed(0)}% busy, client+target+DNS CPU ${((r.clientCpuMs * 1000) / count).toFixed(0)} µs/msg)`,
      );
      if (!warm) {
        side.rates.push(r.rate);
        side.cpu.push(r.serverCpuMs / count);
        side.client.push(r.clientCpuMs / count);
      }
      return r;
    };

    // Warm-up, one server after the other, until each one's compiler is nearly idle.
    const warmedUp = { bare: 0, postroom: 0 };
    if (opts.warmup > 0) {
      for (const key of ["bare", "postroom"] as const) {
        for (let batch = 1; batch <= MAX_WARMUP_BATCHES; batch++) {
          const r = await measure(sides[key], opts.warmup, true);
          warmedUp[key] += opts.warmup;
          if (r.jitCpuMs <= JIT_QUIET_SHARE * r.serverCpuMs) break;
        }
      }
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
    // Each round runs the two back to back; the machine's speed drifts between rounds, so the
    // spread of the per-round ratios says how far one run's ratio can be trusted.
    const perRound = sides.postroom.rates.map((r, i) => r / sides.bare.rates[i]!);
    console.log(`per round:     ${perRound.map((r) => r.toFixed(2)).join(", ")} (postroom / the bare run just before it)`);
    const listQueries = (q: Map<string, number>) => [...q].map(([n, c]) => `${n} x${c} (${dns.zone.has(n) ? "answered" : "NXDOMAIN"})`).join(", ");
    console.log(`warm-up:       bare pipeline ${warmedUp.bare} messages, postroom ${warmedUp.postroom} (batches of ${opts.warmup} until its JIT threads used <= ${100 * JIT_QUIET_SHARE}% of its CPU in one, at most ${MAX_WARMUP_BATCHES})`);
    console.log(`DNS queries (loopback server: SPF TXT for ${SENDER_DOMAIN}, NXDOMAIN for the rest):`);
    console.log(`  warm-up: ${listQueries(warmupQueries) || "none"}`);
    console.log(`  timed runs: ${listQueries(dnsQueries) || "none (answered from Postroom's 60 s cache)"}`);
    if (opts.profileDir) {
      // The profiles are written when the servers exit.
      await bare.child.stop();
      await postroom.child.stop();
      const total = (key: keyof typeof warmedUp) => warmedUp[key] + opts.rounds * opts.messages;
      console.log(cpuProfileReport(opts.profileDir, "bare-pipeline", "bare-pipeline", (file) => summarizeProfile(file, total("bare"))));
      console.log(cpuProfileReport(opts.profileDir, "postroom", "postroom", (file) => summarizeProfile(file, total("postroom"))));
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
