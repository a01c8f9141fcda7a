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
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createResolver } from "../src/lib/dns.ts";
import { DATABASE_FILE } from "../src/store/store.ts";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { SmtpSink } from "../test/helpers/sink.ts";
import { makeSelfSignedCert } from "../test/helpers/certs.ts";
import { apiContent, FROM_HEADER } from "./api-client.ts";
import { dirOption, intOption, parseOptions } from "./args.ts";
import { cpuProfileArgs, cpuProfileReport } from "./child.ts";
import { CpuCgroup, processTree } from "./cgroup.ts";
import { Cleanup } from "./cleanup.ts";
import { DeliveryTally } from "./delivery-tally.ts";
import { countQueries, loadAverage, median } from "./measure.ts";
import { buildMessage, MAIL_FROM, SENDER_DOMAIN } from "./message.ts";
import { describeSigning, PrivateOpendkim } from "./opendkim.ts";
import { DEST, type FeedKind, outboundFeeds, RECIPIENTS_PER_DOMAIN } from "./outbound-feed.ts";
import { summarizeOutboundProfile } from "./outbound-profile.ts";
import {
  runPostfix,
  runPostroom,
  sourceShares,
  type PostfixSide,
  type PostroomSide,
  type RunResult,
  type SideCpu,
} from "./outbound-run.ts";
import { checkPostfixSigns, DKIM_CHECK_DOMAIN } from "./postfix-dkim-check.ts";
import { PrivatePostfix } from "./postfix.ts";
import { ACCOUNT, startPostroom, verifiedSendingDomain } from "./postroom.ts";
import { type SigningFloor, measureSigningFloor } from "./signing-floor.ts";
import type { FeedTarget } from "./smtp-feed.ts";
import { checkPostroomSigns } from "./postroom-dkim-check.ts";
import { freePort, SmtpSinkProcess, waitForGreeting } from "./smtp-sink.ts";
import { UnboundServer } from "./unbound.ts";

/** Every destination domain's MX host. */
const MX_HOST = "mx.sink.bench.test";
const MX_SINK_HOST = "127.0.0.2";
/** Postfix's nameserver (port 53), through MX. */
const POSTFIX_DNS_HOST = "127.0.0.153";

// ---------------------------------------------------------------- options

function options() {
  const values = parseOptions(
    "bun run bench:outbound [--messages N] [--clients C] [--warmup W] [--rounds R] [--route smarthost|mx] [--domains D] [--profile DIR] [--start warm|cold] [--postfix-dkim off|on] [--feed smtp|http]",
    {
      messages: { type: "string", short: "n" },
      clients: { type: "string", short: "c" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      route: { type: "string" },
      domains: { type: "string" },
      profile: { type: "string" },
      start: { type: "string" },
      "postfix-dkim": { type: "string" },
      feed: { type: "string" },
    },
  );
  const messages = intOption(values.messages, "BENCH_MESSAGES", 2000, 1);
  const clients = intOption(values.clients, "BENCH_CLIENTS", 8, 1);
  const warmup = intOption(values.warmup, "BENCH_WARMUP", 1000, 0);
  const rounds = intOption(values.rounds, "BENCH_ROUNDS", 3, 1);
  const domains = intOption(values.domains, "BENCH_DOMAINS", 1, 1);
  const route = values.route ?? process.env.BENCH_ROUTE ?? "smarthost";
  if (route !== "smarthost" && route !== "mx") throw new Error(`--route must be smarthost or mx, got ${route}`);
  const start = values.start ?? process.env.BENCH_START ?? "warm";
  if (start !== "warm" && start !== "cold") throw new Error(`--start must be warm or cold, got ${start}`);
  if (clients > messages) throw new Error(`--clients (${clients}) must not exceed --messages (${messages})`);
  if (start === "warm" && warmup > 0 && clients > warmup) throw new Error(`--clients (${clients}) must not exceed --warmup (${warmup})`);
  const postfixDkim = values["postfix-dkim"] ?? process.env.BENCH_POSTFIX_DKIM ?? "off";
  if (postfixDkim !== "off" && postfixDkim !== "on") throw new Error(`--postfix-dkim must be off or on, got ${postfixDkim}`);
  const feed = values.feed ?? process.env.BENCH_FEED ?? "smtp";
  if (feed !== "smtp" && feed !== "http") throw new Error(`--feed must be smtp or http, got ${feed}`);
  const profileDir = dirOption(values.profile, "BENCH_PROFILE");
  if (start === "cold" && profileDir) throw new Error("--profile needs --start warm (a cold run starts a new Postroom each round)");
  // Cold: every round starts both sides afresh and sends at once, so there is no warm-up.
  return {
    messages,
    clients,
    warmup: start === "cold" ? 0 : warmup,
    rounds,
    domains,
    start: start as "warm" | "cold",
    route: route as "smarthost" | "mx",
    profileDir,
    postfixSigns: postfixDkim === "on",
    feed: feed as FeedKind,
  };
}

/** A side's CPU time: its own cgroup if one can be made (bench/cgroup.ts), else the sum over its processes from /proc. */
function sideCpu(group: CpuCgroup | null, pids: () => number[], procMs: () => number): SideCpu {
  return group ? { enter: () => group.adopt(pids()), ms: () => group.usageUs() / 1000 } : { enter: () => undefined, ms: procMs };
}

// ---------------------------------------------------------------- Postroom

/** How Postroom reaches the sink: as its smarthost, or as the MX of every recipient domain (answered by the loopback DNS). */
const relay = (route: "smarthost" | "mx", sinkPort: number) =>
  route === "smarthost" ? `smarthost = "smtp://127.0.0.1:${sinkPort}"` : `mx_port = ${sinkPort}\nallow_private_mx = true`;

/** The size of a message Postroom holds in its store (outbound_message_bodies), or null. */
function queuedSize(dataDir: string): number | null {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    return (db.query("SELECT length(raw) AS bytes FROM outbound_message_bodies LIMIT 1").get() as { bytes: number } | null)?.bytes ?? null;
  } finally {
    db.close();
  }
}

/**
 * unbound on POSTFIX_DNS_HOST:53 with each destination's MX and the MX host's address, as
 * the tests' DNS server answers Postroom. Ready once it answers the first domain's MX.
 */
async function startPostfixDns(workDir: string, domains: number, sinkHost: string): Promise<UnboundServer> {
  const dir = join(workDir, "postfix-dns");
  mkdirSync(dir);
  const rrs = [...Array.from({ length: domains }, (_, d) => `${DEST(d + 1)}. 60 IN MX 10 ${MX_HOST}.`), `${MX_HOST}. 60 IN A ${sinkHost}`];
  const ready = (address: string) => createResolver({ servers: [address], timeoutMs: 500, cacheMaxEntries: 1 }).resolveMx(DEST(1));
  return UnboundServer.start(dir, [], ready, { host: POSTFIX_DNS_HOST, port: 53, rrs });
}

// Ctrl-C must not leave a private Postfix running or /etc/postfix/main.cf changed.
const cleanup = new Cleanup();
cleanup.onSignals("Postroom, Postfix and the sink");

async function main() {
  const opts = options();
  if (process.getuid?.() !== 0) throw new Error("run as root: the Postfix peer needs `postfix start`");
  const workDir = cleanup.tempDir("postroom-bench-outbound-");
  try {
    const message = buildMessage(`rcpt@${DEST(1)}`);
    // The file smtp-source sends (-F): the wire form without the final dot and without
    // dot-stuffing (smtp-source adds it back, and CRLF after each line).
    const wire = Buffer.from(message.data(0)).toString("latin1");
    const messageFile = join(workDir, "message.eml");
    writeFileSync(
      messageFile,
      wire
        .slice(0, -3)
        .replace(/(^|\r\n)\.\./g, "$1.")
        .replace(/\r\n/g, "\n"),
      "latin1",
    );
    // What Postroom gets through the API: the same text, HTML and subject.
    const content = await apiContent(message);

    // Through MX, the sink is on 127.0.0.2: Postfix refuses an MX host that is one of its
    // own addresses (127.0.0.1, where it listens) as mail looping back to itself.
    const sink = await SmtpSinkProcess.start(opts.route === "mx" ? MX_SINK_HOST : "127.0.0.1");
    cleanup.add(() => sink.stop());

    // Postroom's DNS: the tests' server, answering its MX lookups and the sending domain's
    // records it publishes through the API (verifiedSendingDomain).
    const dns = await TestDnsServer.start();
    cleanup.add(() => dns.stop());
    for (let d = 1; d <= opts.domains; d++) dns.set(DEST(d), [{ type: "MX", exchange: MX_HOST, priority: 10 }]);
    dns.set(MX_HOST, [{ type: "A", address: sink.host }]);
    const dnsQueries = countQueries(dns);
    // Postfix's DNS, through MX: the same MX and A records from unbound on port 53 of its
    // own loopback address (Postfix's resolver takes only an address from resolv.conf).
    const postfixDns = opts.route === "mx" ? await startPostfixDns(workDir, opts.domains, sink.host) : null;
    if (postfixDns) cleanup.add(() => postfixDns.stop());

    // The capture sink of the check that Postfix signs; only the check's message goes there.
    const capture = await SmtpSink.start();
    cleanup.add(() => capture.stop());
    const postfix = await PrivatePostfix.start(sink.port, {
      signingDomain: opts.postfixSigns ? SENDER_DOMAIN : null,
      checkRoute: { domain: DKIM_CHECK_DOMAIN, port: capture.port },
      mx: postfixDns ? { nameserver: postfixDns.host, port: sink.port } : undefined,
      submission: opts.feed === "smtp",
    });
    cleanup.add(() => postfix.stop());
    const postfixSigned = opts.postfixSigns ? await checkPostfixSigns(postfix, capture, messageFile, MAIL_FROM) : "unsigned";
    // Each side's processes in a cgroup of its own: the load generators (this process,
    // smtp-source) and the sink stay outside both.
    const groups = { postroom: CpuCgroup.create("postroom"), postfix: CpuCgroup.create("postfix") };
    cleanup.add(() => {
      groups.postroom?.remove();
      groups.postfix?.remove();
    });

    // The SMTP feed: Postroom's submission port, with STARTTLS (a self-signed certificate) and AUTH as in production.
    const submissionPort = opts.feed === "smtp" ? await freePort() : 0;
    const submissionTls = opts.feed === "smtp" ? makeSelfSignedCert(workDir, "mx.postroom.bench") : undefined;
    /** Postroom as a fresh process on the run's data dir: the first start, and each cold round's (`relayTo`: the DKIM check's). */
    const startSide = async (relayTo?: string): Promise<PostroomSide & { httpPort: number; stop: () => Promise<void> }> => {
      const started = await startPostroom(
        workDir,
        dns.address,
        {
          relay: relayTo ?? relay(opts.route, sink.port),
          ...(submissionTls ? { submissionListen: `127.0.0.1:${submissionPort}`, tls: submissionTls } : {}),
        },
        relayTo ? [] : cpuProfileArgs(opts.profileDir, "postroom-outbound"),
      );
      if (submissionTls) await waitForGreeting(submissionPort, 15_000, "Postroom's submission port");
      const tally = new DeliveryTally(started.child);
      started.child.ready();
      return {
        cpu: sideCpu(
          groups.postroom,
          () => processTree(started.child.proc.pid),
          () => started.child.cpuMs(),
        ),
        httpPort: started.httpPort,
        postroom: started.child,
        sink,
        tally,
        clients: opts.clients,
        stop: async () => void (await started.child.stop()),
      };
    };
    const postroomTarget: FeedTarget = {
      host: "127.0.0.1",
      port: submissionPort,
      setup: { startTls: true, auth: { user: ACCOUNT.outboundId, password: ACCOUNT.smtpKey } },
    };
    // With the SMTP feed, first a Postroom relaying to the capture sink: the sending domain
    // is verified through it and one submitted message checked for its two signatures; the
    // runs' Postroom then starts on the same data dir.
    let postroomSigned = "not checked (--feed http)";
    if (opts.feed === "smtp") {
      const check = await startSide(`smarthost = "smtp://127.0.0.1:${capture.port}"`);
      try {
        await verifiedSendingDomain(check.httpPort, dns, SENDER_DOMAIN);
        postroomSigned = await checkPostroomSigns(postroomTarget, capture, dns);
      } finally {
        await check.stop();
      }
    }
    let postroomSide = await startSide();
    cleanup.add(() => postroomSide.stop());
    if (opts.feed !== "smtp") await verifiedSendingDomain(postroomSide.httpPort, dns, SENDER_DOMAIN);

    const postfixSide: PostfixSide = {
      cpu: sideCpu(
        groups.postfix,
        () => postfix.processIds(),
        () => postfix.cpuMs(),
      ),
      postfix,
      sink,
      clients: opts.clients,
      messageFile,
      rcpts: Array.from({ length: opts.domains }, (_, d) => `rcpt@${DEST(d + 1)}`),
    };
    const feeds = outboundFeeds({
      kind: opts.feed,
      domains: opts.domains,
      clients: opts.clients,
      http: { port: () => postroomSide.httpPort, content, fromHeader: FROM_HEADER },
      smtp: postfix.submission
        ? {
            postroom: () => postroomTarget,
            postfix: {
              host: "127.0.0.1",
              port: postfix.submission.port,
              setup: { startTls: true, auth: { user: postfix.submission.user, password: postfix.submission.password } },
            },
          }
        : undefined,
    });
    const runPostroomSide = async (count: number) => {
      if (opts.start === "cold") {
        await postroomSide.stop();
        postroomSide = await startSide();
      }
      return runPostroom(postroomSide, count, feeds.postroom(count));
    };
    const runPostfixSide = async (count: number) => {
      if (opts.start === "cold") await postfix.restart();
      return runPostfix(postfixSide, count, feeds.postfix(count));
    };

    const sides = {
      postfix: {
        label: "postfix",
        run: runPostfixSide,
        server: opts.postfixSigns ? "postfix+opendkim" : "postfix",
        client: opts.feed === "smtp" ? "SMTP feed" : "smtp-source",
        results: [] as RunResult[],
      },
      postroom: {
        label: "postroom",
        run: runPostroomSide,
        server: "postroom",
        client: opts.feed === "smtp" ? "SMTP feed" : "API client",
        results: [] as RunResult[],
      },
    };
    type Side = (typeof sides)["postfix"];

    const routeText =
      opts.route === "smarthost"
        ? "smarthost: Postroom's `smarthost` and Postfix's `relayhost` are the sink"
        : `MX lookup: each domain's MX is the sink (${sink.host}); Postroom asks the loopback DNS server and connects to mx_port, Postfix asks unbound on ${postfixDns?.host}:53 and connects to smtp_tcp_port`;
    console.log(
      `outbound benchmark: N=${opts.messages} messages over C=${opts.clients} clients, ${opts.start === "cold" ? "cold (both sides restarted before each of their runs, no warm-up)" : `warm (${opts.warmup} warm-up per side, then the runs on the same processes)`}, ${opts.rounds} round${opts.rounds === 1 ? "" : "s"} (postfix, postroom, ...), ` +
        `message ${message.size} bytes, ${opts.domains} recipient domain${opts.domains === 1 ? "" : "s"} ${opts.feed === "smtp" ? `(both sides: ${RECIPIENTS_PER_DOMAIN} recipients each, in turn)` : `(Postroom: ${RECIPIENTS_PER_DOMAIN} recipients each, in turn; Postfix: smtp-source's numbered recipients, ${sourceShares(opts.messages, opts.clients, opts.domains).length} smtp-source process${opts.domains === 1 ? "" : "es"})`}, route ${routeText}`,
    );
    console.log(`feed: ${feeds.describe}`);
    console.log(
      `machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}, postfix ${PrivatePostfix.version()}, opendkim ${PrivateOpendkim.version()}; sink: smtp-sink on ${sink.host}:${sink.port}; load average ${loadAverage()}`,
    );
    console.log(
      opts.postfixSigns
        ? `DKIM, both sides: ${describeSigning(postfix.signers.map((s) => s.algorithm))}`
        : `DKIM: Postroom signs (rsa-sha256 and ed25519-sha256); Postfix relays unsigned (--postfix-dkim on: two opendkim milters), and the signing floor (two signatures per message, bench/signing-floor.ts) is measured after each run`,
    );
    console.log(
      `CPU per side: ${groups.postroom && groups.postfix ? `a cgroup each (${groups.postroom.dir}, ${groups.postfix.dir}): every process of the side, exited daemons included` : "no writable cgroup: the sum of /proc/<pid>/stat over each side's processes, reaped children included"}; the load generators and the sink are outside both`,
    );
    console.log(
      `  postroom: its own signer (src/domains/dkim.ts), the sending domain's RSA and Ed25519 keys (both published and verified); checked before the runs: ${postroomSigned}`,
    );
    if (opts.postfixSigns)
      console.log(
        `  postfix:  ${postfix.signers.length} opendkim milters in turn, one per algorithm; checked before the runs: ${postfixSigned}`,
      );

    const floors: SigningFloor[] = [];
    const rawMessage = Buffer.from(message.data(0)).toString("latin1");
    measureSigningFloor(rawMessage, 20); // warm the code paths up
    const measure = async (side: Side, count: number, warm: boolean) => {
      const sess0 = sink.sessions;
      const r = await side.run(count);
      const floor = measureSigningFloor(rawMessage);
      if (!warm) floors.push(floor);
      // Let the queue runners go idle; Postfix closes cached connections after 2 s idle,
      // and only then does the sink count the sessions as ended.
      await Bun.sleep(2500);
      const sessions = sink.sessions - sess0;
      const tag = warm ? "warm-up " : "";
      console.log(
        `  ${tag}${side.label.padEnd(9)} accepted ${r.accepted.toFixed(0).padStart(5)} msg/s  delivered ${r.delivered.toFixed(0).padStart(5)} msg/s  ` +
          `(${count} in ${(r.acceptMs / 1000).toFixed(2)} s / ${(r.deliverMs / 1000).toFixed(2)} s; CPU µs/msg: ${side.server} ${r.serverCpuUs.toFixed(0)}, ${side.client} ${r.clientCpuUs.toFixed(0)}, ` +
          `sink ${r.sinkCpuUs.toFixed(0)}, machine ${r.machineCpuUs.toFixed(0)}; ${sessions} SMTP sessions to the sink; signing floor after it ${floor.totalUs.toFixed(0)})`,
      );
      if (r.mainThread)
        console.log(
          `            postroom main thread, % of the run (schedstat): running ${r.mainThread.runPct.toFixed(0)}, waiting for a core ${r.mainThread.waitPct.toFixed(0)}, idle or blocked ${r.mainThread.offPct.toFixed(0)}`,
        );
      if (r.threadsUs)
        console.log(
          `            postroom threads, CPU µs/msg (/proc, ±1 tick): ${[...r.threadsUs]
            .sort((a, b) => b[1] - a[1])
            .filter(([, us]) => us >= 1)
            .map(([name, us]) => `${name} ${us.toFixed(0)}`)
            .join(", ")}`,
        );
      if (!warm) side.results.push(r);
    };

    if (opts.warmup > 0) {
      await measure(sides.postfix, opts.warmup, true);
      await measure(sides.postroom, opts.warmup, true);
    }
    const warmupQueries = new Map(dnsQueries);
    dnsQueries.clear();
    postfixDns?.queries();
    for (let round = 0; round < opts.rounds; round++) {
      await measure(sides.postfix, opts.messages, false);
      await measure(sides.postroom, opts.messages, false);
    }

    const med = (side: Side, key: Exclude<keyof RunResult, "threadsUs" | "mainThread">) => median(side.results.map((r) => r[key]));
    const pr = { accepted: med(sides.postroom, "accepted"), delivered: med(sides.postroom, "delivered") };
    const pf = { accepted: med(sides.postfix, "accepted"), delivered: med(sides.postfix, "delivered") };
    const cpuLine = (side: Side) =>
      `${side.server} ${med(side, "serverCpuUs").toFixed(0)}, ${side.client} ${med(side, "clientCpuUs").toFixed(0)}, sink ${med(side, "sinkCpuUs").toFixed(0)}, machine ${med(side, "machineCpuUs").toFixed(0)}`;
    console.log("");
    console.log(`medians of ${opts.rounds} run${opts.rounds === 1 ? "" : "s"} each:`);
    console.log(
      `postroom accepted:   ${pr.accepted.toFixed(0)} msg/s (${opts.feed === "smtp" ? "250 at the end of DATA" : "202"}, durable)`,
    );
    console.log(`postroom delivered:  ${pr.delivered.toFixed(0)} msg/s`);
    console.log(`postfix delivered:   ${pf.delivered.toFixed(0)} msg/s  (accepted ${pf.accepted.toFixed(0)} msg/s)`);
    console.log(`ratio delivered:     ${(pr.delivered / pf.delivered).toFixed(2)}`);
    console.log(
      `ratio accepted:      ${(pr.accepted / pf.accepted).toFixed(2)}  (${opts.feed === "smtp" ? "both: 250s at the end of DATA on the submission port" : "Postroom API 202s / Postfix SMTP 250s"})`,
    );
    console.log(`CPU µs per message, median ("machine": every process on it, other users' too):`);
    console.log(`  postroom side: ${cpuLine(sides.postroom)}`);
    console.log(`  postfix side:  ${cpuLine(sides.postfix)}`);
    const floor = median(floors.map((f) => f.totalUs));
    console.log(
      `  signing floor:  ${floor.toFixed(0)} (body hash ${median(floors.map((f) => f.bodyHashUs)).toFixed(0)} + RSA-2048 ${median(floors.map((f) => f.rsaUs)).toFixed(0)} + Ed25519 ${median(floors.map((f) => f.ed25519Us)).toFixed(0)}; node:crypto CPU time, ${floors.length} measurements)`,
    );
    // Per round: Postroom's run against the Postfix run just before it and the floors measured after each.
    const perRound = sides.postroom.results.map((r, i) => {
      const pfUs = sides.postfix.results[i]!.serverCpuUs;
      const floorUs = opts.postfixSigns ? 0 : (floors[2 * i]!.totalUs + floors[2 * i + 1]!.totalUs) / 2;
      return r.serverCpuUs / (pfUs + floorUs);
    });
    const pfCpu = med(sides.postfix, "serverCpuUs");
    const prCpu = med(sides.postroom, "serverCpuUs");
    console.log(
      opts.postfixSigns
        ? `CPU ratio: postroom ${prCpu.toFixed(0)} ÷ signed postfix ${pfCpu.toFixed(0)} = ${(prCpu / pfCpu).toFixed(2)}; per round ${perRound.map((x) => x.toFixed(2)).join(" ")}`
        : `CPU ratio: postroom ${prCpu.toFixed(0)} ÷ (postfix ${pfCpu.toFixed(0)} + signing floor ${floor.toFixed(0)}) = ${(prCpu / (pfCpu + floor)).toFixed(2)}; per round ${perRound.map((x) => x.toFixed(2)).join(" ")} (target ≤ 1.00)`,
    );
    const mains = sides.postroom.results.flatMap((r) => (r.mainThread ? [r.mainThread] : []));
    if (mains.length > 0)
      console.log(
        `postroom main thread, median % of its runs (schedstat): running ${median(mains.map((m) => m.runPct)).toFixed(0)}, waiting for a core ${median(mains.map((m) => m.waitPct)).toFixed(0)}, idle or blocked ${median(mains.map((m) => m.offPct)).toFixed(0)}`,
      );
    console.log(`load average at the end: ${loadAverage()}`);
    // What each side relayed: a message Postroom queued (composed from the API body; DKIM
    // signatures are added to it on the way out), read from its store after the runs, and
    // the size Postfix's queue manager logged (the client's message plus Postfix's Received
    // header; it leaves out the DKIM-Signature headers the milters add: the start-up check
    // prints the signed size).
    console.log(
      `message as relayed: postroom ${queuedSize(join(workDir, "data")) ?? "?"} bytes (a message it queued, ${opts.feed === "smtp" ? "as submitted" : "composed from the API body"}, without its signatures), postfix ${postfix.lastQueuedSize() ?? "?"} bytes (the ${message.size}-byte message as queued, without the milters' signatures)`,
    );
    const listQueries = (q: Map<string, number>) => [...q].map(([n, c]) => `${n} x${c}`).join(", ");
    console.log(
      `DNS queries from Postroom: warm-up: ${listQueries(warmupQueries) || "none"}; timed runs: ${listQueries(dnsQueries) || "none"}`,
    );
    if (postfixDns) console.log(`DNS queries from Postfix, timed runs: ${listQueries(postfixDns.queries()) || "none"}`);

    if (opts.profileDir) {
      // The profile is written when Postroom exits.
      await postroomSide.stop();
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
