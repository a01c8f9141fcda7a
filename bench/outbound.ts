// `bun run bench:outbound`: outbound throughput of Postroom against Postfix, measured in
// the same run, alternately (A B A B ...), reporting the median of each and the ratio.
//   (a) accepted: API sends per second, each answered 202 (the message is on disk:
//       SQLite synchronous=FULL and the raw message fsynced);
//   (b) delivered: messages per second from the first send until the sink has received
//       all N, for Postroom (API → queue → sink) and for Postfix (smtp-source → Postfix
//       → sink); the ratio is Postroom's (b) over Postfix's (b).
//
//   bun run bench:outbound [--messages N] [--clients C] [--warmup W] [--rounds R]
//                          [--route smarthost|mx] [--domains D] [--profile DIR]
//   defaults: N=2000, C=8, W=1000 per side, R=3 (rounds of one Postfix run and one
//   Postroom run), route smarthost, D=1 (or BENCH_MESSAGES, BENCH_CLIENTS, BENCH_WARMUP,
//   BENCH_ROUNDS, BENCH_ROUTE, BENCH_DOMAINS, BENCH_PROFILE)
//   --profile runs Postroom under `bun --cpu-prof` and prints where its main thread
//   spends its time (bench/outbound-profile.ts); the profiler slows it down.
//
// Needs root and Debian's postfix package (for the peer, smtp-source and smtp-sink), its
// DKIM signer opendkim and opendkim-tools (opendkim-genkey), openssl, and python3-dkim
// (the start-up check that the peer signs):
//   echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
//   DEBIAN_FRONTEND=noninteractive apt-get install -y postfix opendkim opendkim-tools openssl python3-dkim
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
//   (concurrency 20, domain_concurrency 5); both rate limits are off.
// - Postfix runs privately in a temp dir (bench/postfix.ts), as shipped apart from what a
//   loopback relay needs, with relayhost = the sink. smtp-source (C) feeds it with C
//   sessions that stay connected (-d), distinct recipients (-N), and the same 4 KB message
//   as bench:inbound (bench/message.ts, from a file: -F).
// - Both sides DKIM-sign every message the same way: rsa-sha256 (2048-bit) and
//   ed25519-sha256, relaxed/relaxed, the same header list. Postroom with its own signer
//   (its sending domain is verified, both keys published in the loopback DNS); Postfix
//   through two opendkim milters, one per algorithm (bench/opendkim.ts), whose CPU time
//   counts as Postfix's. Before any run, one message through Postfix goes to a capture
//   sink and its signatures are verified with python3-dkim (bench/postfix-dkim-check.ts);
//   the benchmark stops if they are missing or invalid.
// - Postroom gets the same content through the API: the plain text, HTML and subject of
//   that message as {from, to, subject, plain, html}, which Postroom composes into its
//   own MIME message (about the same size). This process is the API client: C workers,
//   each POSTing its next message as soon as the previous one got its 202 (keep-alive).
//   Bodies are built before the clock starts.
// - With 2 cores, the client, the sink and the server share the CPU; each one's CPU time
//   per message is printed (Postfix: its master and every daemon it ran) with the
//   machine's total, so the share each side leaves to the others can be seen.
// - Correctness is checked on every run, warm-up included: every POST must get 202 with
//   an id, smtp-source must exit 0 (it aborts on any refusal), the sink must receive
//   exactly N, and the sides' own logs must show N deliveries and no other outcome.
//   Anything else aborts with exit code 1.
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { SmtpSink } from "../test/helpers/sink.ts";
import { apiContent, FROM_HEADER } from "./api-client.ts";
import { dirOption, intOption, parseOptions } from "./args.ts";
import { cpuProfileArgs, cpuProfileReport } from "./child.ts";
import { Cleanup } from "./cleanup.ts";
import { DeliveryTally } from "./delivery-tally.ts";
import { countQueries, loadAverage, median } from "./measure.ts";
import { buildMessage, MAIL_FROM, SENDER_DOMAIN } from "./message.ts";
import { describeSigning, PrivateOpendkim } from "./opendkim.ts";
import { summarizeOutboundProfile } from "./outbound-profile.ts";
import { runPostfix, runPostroom, type PostfixSide, type PostroomSide, type RunResult } from "./outbound-run.ts";
import { checkPostfixSigns, DKIM_CHECK_DOMAIN } from "./postfix-dkim-check.ts";
import { PrivatePostfix } from "./postfix.ts";
import { startPostroom, verifiedSendingDomain } from "./postroom.ts";
import { SmtpSinkProcess } from "./smtp-sink.ts";

const DEST = (n: number) => `dest${n}.bench.test`;

// ---------------------------------------------------------------- options

function options() {
  const values = parseOptions("bun run bench:outbound [--messages N] [--clients C] [--warmup W] [--rounds R] [--route smarthost|mx] [--domains D] [--profile DIR]", {
    messages: { type: "string", short: "n" },
    clients: { type: "string", short: "c" },
    warmup: { type: "string" },
    rounds: { type: "string" },
    route: { type: "string" },
    domains: { type: "string" },
    profile: { type: "string" },
  });
  const messages = intOption(values.messages, "BENCH_MESSAGES", 2000, 1);
  const clients = intOption(values.clients, "BENCH_CLIENTS", 8, 1);
  const warmup = intOption(values.warmup, "BENCH_WARMUP", 1000, 0);
  const rounds = intOption(values.rounds, "BENCH_ROUNDS", 3, 1);
  const domains = intOption(values.domains, "BENCH_DOMAINS", 1, 1);
  const route = values.route ?? process.env.BENCH_ROUTE ?? "smarthost";
  if (route !== "smarthost" && route !== "mx") throw new Error(`--route must be smarthost or mx, got ${route}`);
  if (clients > messages) throw new Error(`--clients (${clients}) must not exceed --messages (${messages})`);
  if (warmup > 0 && clients > warmup) throw new Error(`--clients (${clients}) must not exceed --warmup (${warmup})`);
  return { messages, clients, warmup, rounds, domains, route: route as "smarthost" | "mx", profileDir: dirOption(values.profile, "BENCH_PROFILE") };
}

// ---------------------------------------------------------------- Postroom

/** How Postroom reaches the sink: as its smarthost, or as the MX of every recipient domain (answered by the loopback DNS). */
const relay = (route: "smarthost" | "mx", sinkPort: number) => (route === "smarthost" ? `smarthost = "smtp://127.0.0.1:${sinkPort}"` : `mx_port = ${sinkPort}\nallow_private_mx = true`);

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
    writeFileSync(messageFile, wire.slice(0, -3).replace(/(^|\r\n)\.\./g, "$1.").replace(/\r\n/g, "\n"), "latin1");
    // What Postroom gets through the API: the same text, HTML and subject.
    const content = await apiContent(message);

    const sink = await SmtpSinkProcess.start();
    cleanup.add(() => sink.stop());

    const dns = await TestDnsServer.start();
    cleanup.add(() => dns.stop());
    for (let d = 1; d <= opts.domains; d++) dns.set(DEST(d), [{ type: "MX", exchange: "mx.sink.bench.test", priority: 10 }]);
    dns.set("mx.sink.bench.test", [{ type: "A", address: "127.0.0.1" }]);
    const dnsQueries = countQueries(dns);

    // The capture sink of the check that Postfix signs; only the check's message goes there.
    const capture = await SmtpSink.start();
    cleanup.add(() => capture.stop());
    const postfix = await PrivatePostfix.start(sink.port, { signingDomain: SENDER_DOMAIN, checkRoute: { domain: DKIM_CHECK_DOMAIN, port: capture.port } });
    cleanup.add(() => postfix.stop());
    const postfixSigned = await checkPostfixSigns(postfix, capture, messageFile, MAIL_FROM);

    const postroom = await startPostroom(workDir, dns.address, { relay: relay(opts.route, sink.port) }, cpuProfileArgs(opts.profileDir, "postroom-outbound"));
    cleanup.add(() => postroom.child.stop());
    const tally = new DeliveryTally(postroom.child);
    postroom.child.ready();
    await verifiedSendingDomain(postroom.httpPort, dns, SENDER_DOMAIN);

    let seq = 0;

    const postroomSide: PostroomSide = { httpPort: postroom.httpPort, postroom: postroom.child, sink, tally, clients: opts.clients };
    const postfixSide: PostfixSide = { postfix, sink, clients: opts.clients, messageFile, rcpt: `rcpt@${DEST(1)}` };
    /** The next `count` API bodies, each to a recipient of its own, spread over the domains. */
    const nextBodies = (count: number) =>
      Array.from({ length: count }, () => {
        const n = seq++;
        return JSON.stringify({ from: FROM_HEADER, to: `r${n}@${DEST((n % opts.domains) + 1)}`, ...content });
      });
    const runPostroomSide = (count: number) => runPostroom(postroomSide, nextBodies(count));
    const runPostfixSide = (count: number) => runPostfix(postfixSide, count);

    const sides = {
      postfix: { label: "postfix", run: runPostfixSide, server: "postfix+opendkim", client: "smtp-source", results: [] as RunResult[] },
      postroom: { label: "postroom", run: runPostroomSide, server: "postroom", client: "API client", results: [] as RunResult[] },
    };
    type Side = (typeof sides)["postfix"];

    console.log(
      `outbound benchmark: N=${opts.messages} messages over C=${opts.clients} clients, ${opts.warmup} warm-up, ${opts.rounds} round${opts.rounds === 1 ? "" : "s"} (postfix, postroom, ...), ` +
        `message ${message.size} bytes, ${opts.domains} recipient domain${opts.domains === 1 ? "" : "s"}, Postroom route: ${opts.route === "smarthost" ? "smarthost (the sink)" : "MX lookup (loopback DNS) to the sink"}`,
    );
    console.log(`machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}, postfix ${PrivatePostfix.version()}, opendkim ${PrivateOpendkim.version()}; sink: smtp-sink on 127.0.0.1:${sink.port}; load average ${loadAverage()}`);
    console.log(`DKIM, both sides: ${describeSigning(postfix.signers.map((s) => s.algorithm))}`);
    console.log(`  postroom: its own signer (src/domains/dkim.ts), the sending domain's RSA and Ed25519 keys (both published and verified)`);
    console.log(`  postfix:  ${postfix.signers.length} opendkim milters in turn, one per algorithm; checked before the runs: ${postfixSigned}`);

    const measure = async (side: Side, count: number, warm: boolean) => {
      const sess0 = sink.sessions;
      const r = await side.run(count);
      // Let the queue runners go idle; Postfix closes cached connections after 2 s idle,
      // and only then does the sink count the sessions as ended.
      await Bun.sleep(2500);
      const sessions = sink.sessions - sess0;
      const tag = warm ? "warm-up " : "";
      console.log(
        `  ${tag}${side.label.padEnd(9)} accepted ${r.accepted.toFixed(0).padStart(5)} msg/s  delivered ${r.delivered.toFixed(0).padStart(5)} msg/s  ` +
          `(${count} in ${(r.acceptMs / 1000).toFixed(2)} s / ${(r.deliverMs / 1000).toFixed(2)} s; CPU µs/msg: ${side.server} ${r.serverCpuUs.toFixed(0)}, ${side.client} ${r.clientCpuUs.toFixed(0)}, ` +
          `sink ${r.sinkCpuUs.toFixed(0)}, machine ${r.machineCpuUs.toFixed(0)}; ${sessions} SMTP sessions to the sink)`,
      );
      if (!warm) side.results.push(r);
    };

    if (opts.warmup > 0) {
      await measure(sides.postfix, opts.warmup, true);
      await measure(sides.postroom, opts.warmup, true);
    }
    const warmupQueries = new Map(dnsQueries);
    dnsQueries.clear();
    for (let round = 0; round < opts.rounds; round++) {
      await measure(sides.postfix, opts.messages, false);
      await measure(sides.postroom, opts.messages, false);
    }

    const med = (side: Side, key: keyof RunResult) => median(side.results.map((r) => r[key]));
    const pr = { accepted: med(sides.postroom, "accepted"), delivered: med(sides.postroom, "delivered") };
    const pf = { accepted: med(sides.postfix, "accepted"), delivered: med(sides.postfix, "delivered") };
    const cpuLine = (side: Side) =>
      `${side.server} ${med(side, "serverCpuUs").toFixed(0)}, ${side.client} ${med(side, "clientCpuUs").toFixed(0)}, sink ${med(side, "sinkCpuUs").toFixed(0)}, machine ${med(side, "machineCpuUs").toFixed(0)}`;
    console.log("");
    console.log(`medians of ${opts.rounds} run${opts.rounds === 1 ? "" : "s"} each:`);
    console.log(`postroom accepted:   ${pr.accepted.toFixed(0)} msg/s (202, durable)`);
    console.log(`postroom delivered:  ${pr.delivered.toFixed(0)} msg/s`);
    console.log(`postfix delivered:   ${pf.delivered.toFixed(0)} msg/s  (accepted ${pf.accepted.toFixed(0)} msg/s)`);
    console.log(`ratio delivered:     ${(pr.delivered / pf.delivered).toFixed(2)}`);
    console.log(`ratio accepted:      ${(pr.accepted / pf.accepted).toFixed(2)}  (Postroom API 202s / Postfix SMTP 250s)`);
    console.log(`CPU µs per message, median ("machine": every process on it, other users' too):`);
    console.log(`  postroom side: ${cpuLine(sides.postroom)}`);
    console.log(`  postfix side:  ${cpuLine(sides.postfix)}`);
    console.log(`load average at the end: ${loadAverage()}`);
    // What each side relayed: Postroom's queued file (the message it composed from the API
    // body; DKIM signatures are added to it on the way out) and the size Postfix's queue
    // manager logged (the client's message plus Postfix's Received header; it leaves out the
    // DKIM-Signature headers the milters add: the start-up check prints the signed size).
    const messagesDir = join(workDir, "data", "messages");
    const shard = existsSync(messagesDir) ? readdirSync(messagesDir).find((d) => !d.startsWith(".")) : undefined;
    const blob = shard ? readdirSync(join(messagesDir, shard)).find((f) => f.endsWith(".eml")) : undefined;
    const postroomSize = shard && blob ? statSync(join(messagesDir, shard, blob)).size : null;
    console.log(`message as relayed: postroom ${postroomSize ?? "?"} bytes (its queued file, composed from the API body), postfix ${postfix.lastQueuedSize() ?? "?"} bytes (smtp-source's ${message.size}-byte message as queued, without the milters' signatures)`);
    const listQueries = (q: Map<string, number>) => [...q].map(([n, c]) => `${n} x${c}`).join(", ");
    console.log(`DNS queries from Postroom: warm-up: ${listQueries(warmupQueries) || "none"}; timed runs: ${listQueries(dnsQueries) || "none"}`);

    if (opts.profileDir) {
      // The profile is written when Postroom exits.
      await postroom.child.stop();
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
