// `bun run bench:inbound`: inbound SMTP throughput of Postroom against a bare pipeline
// (bench/bare-pipeline.ts: smtp-server + mailparser + one JSON POST, and, by default, the
// same SPF, DKIM and DMARC checks as Postroom: mailauth against the same DNS server),
// measured in the same run, alternately (A B A B ...), reporting the median of each and
// the ratio. Target: Postroom >= 1.0 of the bare pipeline (issue 38: the bare pipeline
// authenticates every message as Postroom does; it was 0.80 while it did not).
//
//   bun run bench:inbound [--messages N] [--connections C] [--warmup W] [--rounds R] [--domains D] [--dns unbound|js]
//                         [--bare-auth on|off] [--profile DIR] [--base DIR]
//   defaults: N=4000, C=8, W=2000 per warm-up batch, R=5 (rounds of one bare run and one Postroom run),
//   D=12000 sender domains, --dns unbound, --bare-auth on (issue 38: the bare pipeline
//   authenticates every message too, and must find each one authentic as Postroom must;
//   off: it does no SPF/DKIM/DMARC, the comparison before issue 38)
//   (or BENCH_MESSAGES, BENCH_CONNECTIONS, BENCH_WARMUP, BENCH_ROUNDS, BENCH_DOMAINS, BENCH_DNS, BENCH_BARE_AUTH, BENCH_PROFILE)
//   Needs Debian's unbound (apt-get install unbound; only its binary is used, as a child
//   process with a config of the bench's own) unless --dns js.
//   --profile runs both servers under `bun --cpu-prof` and prints where their main
//   threads spend their time (bench/profile-summary.ts); the profiler slows them down.
//   --base DIR: a third server, Postroom from another tree (DIR, e.g. `git archive` of
//   the commit before a change, with its node_modules installed), run in turn with the
//   other two (bare, postroom, base, ...) on the same messages, DNS and target: the
//   before/after of a change measured in one run, and its CPU per message compared.
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
//   sequentially) and the target (one Bun.serve on loopback answering 200 at once). A DNS
//   server on loopback answers the sender domains' records and NXDOMAIN for everything
//   else, so Postroom's SPF/DKIM/DMARC checks cost what they cost against a fast resolver,
//   not timeouts: Debian's unbound in a child process (bench/unbound.ts; queries counted
//   from its query log), as the JavaScript server of the tests (test/helpers/dns-server.ts,
//   still there with --dns js) cost this process about 900 µs of CPU per Postroom message.
//   Before anything is sent, the first and last sender's records are read back through
//   Postroom's own resolver and must be exactly what was configured. With 2 cores the
//   client side and the DNS server still compete with the server for CPU; their cost per
//   message is printed so it can be seen that they are not the bottleneck.
// - The messages (bench/signed-senders.ts): the ~4 KB message of bench/message.ts from D
//   sender domains in turn, every one DKIM-signed (RSA-2048, one signature per domain made
//   at start-up, before anything is timed), each domain publishing SPF (the client's
//   address), its DKIM key and DMARC (p=none or p=reject; SPF and DKIM align, so DMARC
//   passes). Each server's i-th message is the same (from domain i mod D, Message-ID i).
//   Postroom keeps DNS answers and SPF and DMARC verdicts for 60 s, at most 10,000 of
//   each, the oldest dropped first (src/lib/dns.ts, src/inbound/parse/auth-checks.ts): a domain
//   comes back after D-1 others, so with D over 10,000 its answers are gone by then and
//   every message costs Postroom its three lookups and a DKIM verification, as mail from
//   many senders does (DMARC's tree walk also asks for _dmarc.test, one name for all
//   domains, mostly from the cache). The DNS report at the end says how many lookups it
//   made per message. Until 2026-11-24 all messages came from one domain, unsigned: after the first
//   message every check was a cache hit and no DKIM was verified (bench/RESULTS.md).
// - Each server is warmed up before the timed rounds, in batches of W messages, until its
//   JIT compiler is nearly idle (its threads used at most 5% of the server's CPU during
//   a batch; at most 20 batches): the figure wanted is the speed a server keeps for days,
//   and JavaScriptCore keeps compiling (and recompiling) hot code for a while, on a core
//   the server and the client also need. With a single batch of 2,000 (the warm-up this
//   benchmark had before), the compiler still took 9-23% of Postroom's CPU through the
//   next 12,000 messages and 8-20% of the bare pipeline's: the timed rounds measured
//   both, Postroom the more, while they were still compiling. Each needs 16,000-22,000.
// - Correctness is checked on every run: every message must get 250, the target must get
//   exactly one POST per message (per server), and Postroom's payload of the last message
//   must show SPF, DKIM and DMARC "pass" (proof that the DNS server answered and the
//   signatures verify). Before the warm-up, the first message goes through each server and
//   Postroom must report the same for it. Anything else aborts with exit code 1.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuProfileReport } from "./child.ts";
import { inboundOptions } from "./inbound-options.ts";
import { JIT_QUIET_SHARE, MAX_WARMUP_BATCHES, runRounds, startUpCheck } from "./inbound-rounds.ts";
import { type CleanupSteps, type InboundSide, setUpInbound } from "./inbound-setup.ts";
import { loadAverage, median } from "./measure.ts";
import { summarizeProfile } from "./profile-summary.ts";
import { DKIM_SELECTOR, senderDomain, SIGNED_HEADERS, tallyQueries } from "./signed-senders.ts";

const TARGET_RATIO = 1.0;

// ---------------------------------------------------------------- the report

/** The DNS queries of a phase, by sender record, and per Postroom message of the phase. */
function describeQueries(queries: Map<string, number>, postroomMessages: number, has: (name: string) => boolean): string {
  const { kinds, other } = tallyQueries(queries);
  const total = kinds.spf.queries + kinds.dkim.queries + kinds.dmarc.queries;
  const kind = (label: string, k: keyof typeof kinds) => `${label} ${kinds[k].queries} (${kinds[k].names} names)`;
  const others = other.map(([n, c]) => `${n} x${c} (${has(n) ? "answered" : "NXDOMAIN"})`).join(", ") || "none";
  return `${kind("SPF", "spf")}, ${kind("DKIM key", "dkim")}, ${kind("DMARC", "dmarc")}: ${(total / postroomMessages).toFixed(2)} per Postroom message (3 if none of them came from its caches); other names: ${others}`;
}

// ---------------------------------------------------------------- main

async function main() {
  const opts = inboundOptions();
  const workDir = mkdtempSync(join(tmpdir(), "postroom-bench-"));
  const cleanup: CleanupSteps = [() => rmSync(workDir, { recursive: true, force: true })];
  try {
    console.log(`load average at the start: ${loadAverage()}`);
    const bench = await setUpInbound(opts, workDir, cleanup);
    const { dns, target, bare, postroom, base, messages, signingMs, sides, baseSide } = bench;

    const { min, max } = messages.size;
    console.log(
      `inbound benchmark: N=${opts.messages} messages over C=${opts.connections} connections, warm-up in batches of ${opts.warmup} until the JIT is quiet, ${opts.rounds} round${opts.rounds === 1 ? "" : "s"} (bare, postroom, bare, postroom, ...), message ${min === max ? min : `${min}-${max}`} bytes`,
    );
    console.log(
      `messages: from ${opts.domains} sender domain${opts.domains === 1 ? "" : "s"} in turn (${senderDomain(0)}${opts.domains > 1 ? ` to ${senderDomain(opts.domains - 1)}` : ""}; each publishes SPF, its DKIM key and DMARC, p=none${opts.domains > 1 ? " or p=reject" : ""}), 100% DKIM-signed (rsa-sha256, RSA-2048, s=${DKIM_SELECTOR}, h=${SIGNED_HEADERS.join(":")}; the ${messages.signatureBytes}-byte signature of each domain made once at start-up, in ${(signingMs / 1000).toFixed(1)} s); each server's i-th message is the same`,
    );
    console.log(`machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`);

    await startUpCheck(opts, bench);
    const rounds = await runRounds(opts, bench);
    const { warmedUp, warmupQueries } = rounds;

    const bareRate = median(sides.bare.rates);
    const postroomRate = median(sides.postroom.rates);
    const ratio = postroomRate / bareRate;
    const bodyBytes = (side: InboundSide) => target.counter(side.path).last.length;
    console.log("");
    console.log(
      `bare pipeline: ${bareRate.toFixed(0)} msg/s  (median of ${sides.bare.rates.length}; server CPU ${(median(sides.bare.cpu) * 1000).toFixed(0)} µs/msg; POST body ${bodyBytes(sides.bare)} B)`,
    );
    console.log(
      `postroom:      ${postroomRate.toFixed(0)} msg/s  (median of ${sides.postroom.rates.length}; server CPU ${(median(sides.postroom.cpu) * 1000).toFixed(0)} µs/msg; POST body ${bodyBytes(sides.postroom)} B)`,
    );
    console.log(
      `ratio:         ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(2)})${ratio >= TARGET_RATIO ? "" : "  BELOW TARGET"}`,
    );
    // Each round runs the two back to back; the machine's speed drifts between rounds, so the
    // spread of the per-round ratios says how far one run's ratio can be trusted.
    const perRound = sides.postroom.rates.map((r, i) => r / sides.bare.rates[i]!);
    console.log(`per round:     ${perRound.map((r) => r.toFixed(2)).join(", ")} (postroom / the bare run just before it)`);
    if (baseSide) {
      // CPU per message is the figure to compare: throughput moves with whatever else the machine runs.
      const cpuRatio = median(sides.postroom.cpu.map((c, i) => c / baseSide.cpu[i]!));
      console.log(
        `base (${opts.baseDir}): ${median(baseSide.rates).toFixed(0)} msg/s (ratio ${(median(baseSide.rates) / bareRate).toFixed(2)}; server CPU ${(median(baseSide.cpu) * 1000).toFixed(0)} µs/msg; POST body ${bodyBytes(baseSide)} B)`,
      );
      console.log(
        `postroom / base CPU per message: ${cpuRatio.toFixed(3)} (median of the rounds'; per round ${sides.postroom.cpu.map((c, i) => (c / baseSide.cpu[i]!).toFixed(3)).join(", ")})`,
      );
    }
    console.log(
      `warm-up:       bare pipeline ${warmedUp.bare} messages, postroom ${warmedUp.postroom} (batches of ${opts.warmup} until its JIT threads used <= ${100 * JIT_QUIET_SHARE}% of its CPU in one, at most ${MAX_WARMUP_BATCHES})`,
    );
    const dnsQueries = dns.takeQueries();
    console.log(
      `DNS queries (${dns.kind === "unbound" ? "unbound in a child process, counted from its query log" : "the JavaScript server in this process"}: the ${opts.domains} sender domains' SPF, DKIM key and DMARC TXT records, NXDOMAIN for the rest):`,
    );
    // With --bare-auth on both servers ask: the figures per message are then over both sides' messages.
    const both = (opts.bareAuth ? 2 : 1) + (baseSide ? 1 : 0);
    if (both > 1) console.log("  (every server asks the DNS server: each figure per message counts the messages of all)");
    const warmedUpAsking = warmedUp.postroom + 1 + (opts.bareAuth ? warmedUp.bare + 1 : 0) + (baseSide ? warmedUp.base + 1 : 0);
    console.log(`  start-up and warm-up: ${describeQueries(warmupQueries, warmedUpAsking, dns.has)}`);
    console.log(`  timed runs: ${describeQueries(dnsQueries, both * opts.rounds * opts.messages, dns.has)}`);
    if (opts.profileDir) {
      // The profiles are written when the servers exit.
      await bare.child.stop();
      await postroom.child.stop();
      await base?.child.stop();
      // (+ 1: the start-up check's message.)
      const total = (key: keyof typeof warmedUp) => warmedUp[key] + 1 + opts.rounds * opts.messages;
      console.log(cpuProfileReport(opts.profileDir, "bare-pipeline", "bare-pipeline", (file) => summarizeProfile(file, total("bare"))));
      console.log(cpuProfileReport(opts.profileDir, "postroom", "postroom", (file) => summarizeProfile(file, total("postroom"))));
      if (base)
        console.log(cpuProfileReport(opts.profileDir, "postroom-base", "postroom base", (file) => summarizeProfile(file, total("base"))));
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
