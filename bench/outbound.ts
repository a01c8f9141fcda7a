// `bun run bench:outbound`: outbound throughput of Postroom against Postfix, measured in
// the same run, alternately (A B A B ...), reporting the median of each and the ratio.
//   (a) accepted: messages per second each side took, each answered 250 at the end of
//       DATA (--feed http: Postroom's 202) once it is on disk (Postroom: SQLite
//       synchronous=FULL and the raw message fsynced);
//   (b) delivered: messages per second from the first send until the sink has received
//       all N, for Postroom (feed → submission or API → queue → sink) and for Postfix
//       (feed → Postfix → sink); the ratio is Postroom's (b) over Postfix's (b).
//
//   bun run bench:outbound [--messages N] [--clients C] [--warmup W] [--rounds R]
//                          [--route smarthost|mx] [--domains D] [--start warm|cold]
//                          [--profile DIR] [--feed smtp|http]
//   defaults: N=2000, C=8, W=1000 per side, R=3 (rounds of one Postfix run and one
//   Postroom run), route smarthost, D=1, start warm, feed smtp (or BENCH_MESSAGES,
//   BENCH_CLIENTS, BENCH_WARMUP, BENCH_ROUNDS, BENCH_ROUTE, BENCH_DOMAINS, BENCH_START,
//   BENCH_PROFILE, BENCH_FEED)
//   --start warm: W messages through each side first, then the rounds on the same
//   processes. --start cold: no warm-up; each side is restarted just before each of its
//   runs (Postroom a new process on the same data dir, as after `systemctl restart`;
//   Postfix `postfix stop` and `start`, which empties its connection cache and puts every
//   destination back at its initial concurrency), so each run includes the first
//   seconds after a start.
//   --profile runs Postroom under `bun --cpu-prof` and prints where its main thread
//   spends its time (bench/outbound-profile.ts); the profiler slows it down.
//   POSTROOM_BINARY=dist/postroom (after `bun run build`) runs the built binary (bytecode,
//   minified), as users do, instead of `bun src/main.ts` (every benchmark that starts
//   Postroom through bench/postroom.ts; not with --profile).
//
// Needs root and Debian's postfix package (for the peer, smtp-source and smtp-sink), its
// DKIM signer opendkim and opendkim-tools (opendkim-genkey), openssl, python3-dkim (the
// start-up checks that both sides sign), and sasl2-bin (saslpasswd2, for the peer's
// submission port; the Cyrus SASL modules come with postfix):
//   echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
//   DEBIAN_FRONTEND=noninteractive apt-get install -y postfix opendkim opendkim-tools openssl python3-dkim sasl2-bin
//
// How the sides are fed (--feed), and why. Delivered throughput compares like with like
// only if both sides get the same load: a server that must read the message off an SMTP
// session does other work than one that gets it as JSON, and the client's own CPU comes
// out of the same two cores.
// - smtp (the default): both sides get the same SMTP load from the same code in this
//   process (bench/smtp-feed.ts, on bench/smtp-client.ts): C sessions, opened at the start
//   of each run, each EHLO, STARTTLS, EHLO and AUTH PLAIN once, then one transaction after
//   another (MAIL FROM, RCPT TO, DATA pipelined, then the message) until every message had
//   its 250. The messages are the 4 KB benchmark message (bench/message.ts) with To set to
//   its recipient (50 per domain, the D domains in turn) and a Message-ID of its own,
//   built before the clock starts; both sides get the same recipients in the same order.
//   Postroom takes them on its submission port (`[smtp] submission_listen`, `[tls]` mode
//   files with a self-signed certificate, AUTH as the outbound account with one of its
//   keys, allow_insecure_auth off: as in production), Postfix on a second smtpd service
//   made like Debian's submission example (bench/postfix-submission.ts):
//   smtpd_tls_security_level=encrypt, Cyrus SASL (sasldb), and only authenticated clients
//   may send. Each side's TLS and AUTH work is its own (in its cgroup); the feed's is
//   this process's. Before the runs, one message submitted to a Postroom that relays to a
//   capture sink must carry valid rsa-sha256 and ed25519-sha256 signatures
//   (bench/postroom-dkim-check.ts, python3-dkim), or the benchmark stops.
// - http (the feed before issue 38): Postroom through its API, {from, to, subject, plain,
//   html} JSON it composes into MIME, from this process; Postfix through smtp-source (C)
//   on its open port (no TLS, no AUTH). The sides' CPU still compares (the feeds are in
//   neither cgroup), their throughput less so.
//
// How it is set up, and why:
// - One sink for both: Postfix's `smtp-sink` (C, accepts and discards every message), a
//   child process on loopback (bench/smtp-sink.ts). Deliveries are counted from its
//   running counter, read as it changes: the time the N-th message arrived is the end of
//   the delivered measurement. Afterwards the count must be exactly N, and each side's
//   own record must agree: N `status=sent` lines in Postfix's log, N "outbound attempt"
//   lines with verdict "delivered" in Postroom's log (why Postroom runs at log level
//   "info", its default: one such line per recipient, as in production).
// - Postroom runs as `bun src/main.ts serve` with a generated config, relaying through
//   `[outbound] smarthost = "smtp://127.0.0.1:<sink>"` (default; Postfix's `relayhost` is
//   the same idea, so both sides make the same hop) or, with --route mx, through MX
//   lookups answered by a loopback DNS server (test/helpers/dns-server.ts) with
//   `mx_port = <sink>` and `allow_private_mx = true`. Delivery limits are the defaults
//   (outbound.concurrency 100, domain_concurrency 20 reached by slow start from
//   initial_domain_concurrency 5, as Postfix's); both rate limits are off.
// - With --route mx Postfix looks up MX too, instead of using its relayhost: no relayhost,
//   smtp_tcp_port = the sink's port, and a resolv.conf naming unbound (bench/unbound.ts)
//   on 127.0.0.153:53, which serves the same MX and A records. The sink then listens on
//   127.0.0.2 (the MX host's address): Postfix refuses an MX that is one of its own
//   addresses. So with D domains each side has D destinations, each with its own
//   concurrency window (Postfix: default_destination_concurrency_limit 20, 100 processes).
// - D recipient domains: the messages go to the domains in turn, and to 50 recipients of
//   each in turn (one recipient per message). With --feed http, smtp-source sends to one
//   recipient only, so Postfix is fed by D smtp-source processes at once, one per domain,
//   each with its share of the messages and of the C sessions (at least one each).
// - Postfix runs privately in a temp dir (bench/postfix.ts), as shipped apart from what a
//   loopback relay needs, with relayhost = the sink. --feed http: smtp-source (C) feeds it
//   with C sessions that stay connected (-d), distinct recipients (-N), and the same 4 KB message
//   as bench:inbound (bench/message.ts, from a file: -F).
// - Postroom DKIM-signs every message: rsa-sha256 (2048-bit) and ed25519-sha256,
//   relaxed/relaxed (its sending domain is verified, both keys published in the loopback
//   DNS). Postfix relays unsigned by default, and the cost floor Postroom is held to is
//   "Postfix's CPU per message + the two signatures": the signing floor (body hash,
//   RSA-2048 and Ed25519 signatures of one message with node:crypto, bench/signing-floor.ts)
//   is measured after every run, on the machine as busy as the runs had it. The ratio
//   "Postroom CPU/msg ÷ (Postfix CPU/msg + floor)" is printed, its median and per round.
//   --postfix-dkim on: Postfix signs the same way through two opendkim milters, one per
//   algorithm (bench/opendkim.ts), whose CPU time counts as Postfix's; before any run, one
//   message through Postfix goes to a capture sink and its signatures are verified with
//   python3-dkim (bench/postfix-dkim-check.ts); the benchmark stops if they are missing or
//   invalid. The ratio is then Postroom's CPU over signed Postfix's.
// - Each side's CPU is that of every one of its processes, in a cgroup of its own
//   (bench/cgroup.ts: cgroup v1 cpuacct or v2 cpu.stat; /proc sums where neither is
//   writable): Postroom's process with its worker threads; Postfix's master and every
//   daemon (smtpd, cleanup, qmgr, smtp, trivial-rewrite, postlogd..., exited ones too) and
//   its milters. The load generators (this process's SMTP feed or API client, smtp-source)
//   and the sink are in neither, so the sides' CPU figures compare like with like even
//   with --feed http, whose feeds differ; the side's CPU is read after it has logged every outcome and settled, so its
//   bookkeeping after the last delivery counts.
// - --feed http: Postroom gets the same content through the API: the plain text, HTML and
//   subject of that message as {from, to, subject, plain, html}, which Postroom composes into its
//   own MIME message (about the same size). This process is the API client: C workers,
//   each POSTing its next message as soon as the previous one got its 202 (keep-alive).
//   Bodies are built before the clock starts.
// - With 2 cores, the client, the sink and the server share the CPU; each one's CPU time
//   per message is printed (Postfix: its master and every daemon it ran) with the
//   machine's total, so the share each side leaves to the others can be seen. Postroom's
//   main thread's time in each run is split (/proc schedstat) into running, waiting for a
//   core, and neither: on a machine other users keep busy, Postroom's one busy thread
//   waits for a core where Postfix's dozens of processes each get their own share, and
//   its delivered throughput then says more about the machine than about Postroom.
// - Correctness is checked on every run, warm-up included: every POST must get 202 with
//   an id (--feed smtp: every transaction must end in 250), smtp-source must exit 0 (it
//   aborts on any refusal), the sink must receive exactly N, and the sides' own logs must show N deliveries and no other outcome.
//   Anything else aborts with exit code 1.
import { Cleanup } from "./cleanup.ts";
import { cpuProfileReport } from "./child.ts";
import { outboundOptions } from "./outbound-options.ts";
import { summarizeOutboundProfile } from "./outbound-profile.ts";
import { printSetup, printSummary } from "./outbound-report.ts";
import { runRounds } from "./outbound-rounds.ts";
import { setUpOutbound } from "./outbound-setup.ts";

// The code: options (bench/outbound-options.ts), set-up (bench/outbound-setup.ts), the
// runs (bench/outbound-rounds.ts, on bench/outbound-run.ts), the report (bench/outbound-report.ts).

// Ctrl-C must not leave a private Postfix running or /etc/postfix/main.cf changed.
const cleanup = new Cleanup();
cleanup.onSignals("Postroom, Postfix and the sink");

async function main() {
  const opts = outboundOptions();
  if (process.getuid?.() !== 0) throw new Error("run as root: the Postfix peer needs `postfix start`");
  const workDir = cleanup.tempDir("postroom-bench-outbound-");
  try {
    const bench = await setUpOutbound(opts, cleanup, workDir);
    printSetup(opts, bench);
    const rounds = await runRounds(opts, bench);
    printSummary(opts, bench, rounds, workDir);

    if (opts.profileDir) {
      // The profile is written when Postroom exits.
      await bench.postroom().stop();
      const total = opts.warmup + opts.rounds * opts.messages;
      console.log(cpuProfileReport(opts.profileDir, "postroom-outbound", "postroom", (file) => summarizeOutboundProfile(file, total)));
    }
  } finally {
    await cleanup.run();
  }
}

try {
  await main();
  process.exit(0);
} catch (err) {
  console.error(`bench:outbound failed: ${(err as Error).message}`);
  process.exit(1);
}
