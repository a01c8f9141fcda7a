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
//   D=12000 sender domains per parse worker of Postroom's (12,000 on 2 cores: bench/inbound-options.ts), --dns unbound, --bare-auth on (issue 38: the bare pipeline
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
//   every message costs Postroom its three lookups (each parse worker has caches of its
//   own and sees 1/W of the messages: hence 12,000 domains per worker by default) and a DKIM verification, as mail from
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
import { printSetup, printSummary } from "./inbound-report.ts";
import { runRounds, startUpCheck } from "./inbound-rounds.ts";
import { type CleanupSteps, setUpInbound } from "./inbound-setup.ts";
import { loadAverage } from "./measure.ts";
import { summarizeProfile } from "./profile-summary.ts";

// The code: options (bench/inbound-options.ts), set-up (bench/inbound-setup.ts), the runs
// (bench/inbound-rounds.ts), the report (bench/inbound-report.ts).

async function main() {
  const opts = inboundOptions();
  const workDir = mkdtempSync(join(tmpdir(), "postroom-bench-"));
  const cleanup: CleanupSteps = [() => rmSync(workDir, { recursive: true, force: true })];
  try {
    console.log(`load average at the start: ${loadAverage()}`);
    const bench = await setUpInbound(opts, workDir, cleanup);
    printSetup(opts, bench);
    await startUpCheck(opts, bench);
    const rounds = await runRounds(opts, bench);
    printSummary(opts, bench, rounds);
    if (opts.profileDir) {
      const { bare, postroom, base } = bench;
      const { warmedUp } = rounds;
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
