// `bun run bench:cluster`: outbound and inbound throughput of Postroom on (a) one node on
// SQLite, (b) one node on PostgreSQL and (c) two nodes on one PostgreSQL, side by side in
// one run, with the CPU time per message of each setup: of its Postroom processes and,
// apart, of its PostgreSQL server. On a 2-core machine two nodes are not expected to be
// faster than one (they share the cores with each other, the database and the client);
// the CPU per message is what tells what a setup costs, and what adding machines scales.
//
//   bun run bench:cluster [--messages N] [--rounds R] [--warmup W] [--clients C]
//                         [--connections K] [--domains D] [--setups sqlite,pg1,pg2]
//   defaults: N=2000, R=3, W=1000 (per setup, each way), C=8 API clients, K=8 SMTP
//   connections, D=100 sender domains, every setup (or BENCH_MESSAGES, BENCH_ROUNDS,
//   BENCH_WARMUP, BENCH_CLIENTS, BENCH_CONNECTIONS, BENCH_DOMAINS, BENCH_SETUPS)
//
// Needs Debian's postfix (its smtp-sink) and, for the PostgreSQL setups, postgresql.
//
// How it is set up, and why:
// - Every setup's nodes are real `bun src/main.ts serve` processes with a TOML config of
//   their own and fixed ports (bench/cluster-nodes.ts); a PostgreSQL setup gets its own
//   server started like the tests' (test/helpers/postgres.ts) but durable (fsync and
//   synchronous_commit on, as SQLite runs with synchronous=FULL), `postroom migrate` run
//   once, `[store] url` and a `[cluster] node_id` per node, the same data_dir/keys on each.
//   All setups are started first, so a setup that cannot start stops the run before
//   anything is measured, with its node's log and stderr.
// - Outbound as bench:outbound measures Postroom (bench/outbound-run.ts): API sends
//   (POST /api/v0.1/{account}/messages, the benchmark message's text and HTML, one
//   recipient each, from a verified sending domain, DKIM-signed by Postroom), C clients
//   with keep-alive, relayed to one smarthost: Postfix's smtp-sink (bench/smtp-sink.ts).
//   With two nodes each gets every other message and half the clients; both nodes'
//   workers claim from the shared queue. "accepted" is sends per second answered 202,
//   "delivered" messages per second until the sink has all N. Checked: every send got 202,
//   the sink received exactly N (no message twice) and the nodes' logs show N deliveries
//   between them and no other outcome or error.
// - Inbound as bench:inbound sends (bench/smtp-client.ts): K SMTP connections with
//   pipelining, the ~4 KB message from D sender domains in turn, each DKIM-signed and
//   publishing SPF, its key and DMARC, to one inbound address that POSTs (json+n) to a real
//   HTTP target in this process (bench/target.ts). With two nodes the connections
//   alternate between them. Checked: every message got 250 and the target got exactly one
//   POST per message. DNS here is the tests' JavaScript server in this process (the
//   sending domain's records are published in it through the API); with D = 100 the
//   senders' answers come from Postroom's caches after the first pass, as the store, not
//   the DNS, is what the setups differ in (bench:inbound measures uncached checks).
// - CPU per message: user + system time from /proc/<pid>/stat of every Postroom node
//   (its threads and any child processes) and of the PostgreSQL server (postmaster and
//   every backend, the ones that exited counted through their parent), over the run; also
//   this process (the clients, the target, the DNS), the sink, and the whole machine.
// - Rounds alternate the setups (sqlite, pg1, pg2, sqlite, ...), each round one outbound
//   and one inbound run per setup, so a change in the machine's load (other work shares
//   it) falls on every setup alike; the table gives the medians. Before the rounds each
//   setup gets W messages each way (warm-up, not counted: its JIT still compiles).
import { dirname } from "node:path";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { apiContent, FROM_HEADER } from "./api-client.ts";
import { dirOption, intOption, parseOptions } from "./args.ts";
import { Cleanup } from "./cleanup.ts";
import { SETUP_KINDS, startSetup, type Setup, type SetupKind } from "./cluster-nodes.ts";
import { runClusterInbound, runClusterOutbound, type ClusterResult } from "./cluster-run.ts";
import { loadAverage, median } from "./measure.ts";
import { buildMessage } from "./message.ts";
import { generateSenderKey, MAX_DOMAINS, publishSenders, signedMessageSet, type SignedMessageSet } from "./signed-senders.ts";
import { SmtpSinkProcess } from "./smtp-sink.ts";
import { startTarget } from "./target.ts";

const DEST_DOMAIN = "dest.bench.test";
/** Messages go to this many recipients of DEST_DOMAIN, in turn. */
const RECIPIENTS = 50;

function options() {
  const values = parseOptions(
    "bun run bench:cluster [--messages N] [--rounds R] [--warmup W] [--clients C] [--connections K] [--domains D] [--setups sqlite,pg1,pg2] [--pg-statements] [--profile DIR]",
    {
      messages: { type: "string", short: "n" },
      rounds: { type: "string" },
      warmup: { type: "string" },
      clients: { type: "string", short: "c" },
      connections: { type: "string" },
      domains: { type: "string" },
      setups: { type: "string" },
      "pg-statements": { type: "boolean" },
      profile: { type: "string" },
    },
  );
  const messages = intOption(values.messages, "BENCH_MESSAGES", 2000, 1);
  const rounds = intOption(values.rounds, "BENCH_ROUNDS", 3, 1);
  const warmup = intOption(values.warmup, "BENCH_WARMUP", 1000, 0);
  const clients = intOption(values.clients, "BENCH_CLIENTS", 8, 1);
  const connections = intOption(values.connections, "BENCH_CONNECTIONS", 8, 1);
  const domains = intOption(values.domains, "BENCH_DOMAINS", 100, 1);
  if (domains > MAX_DOMAINS) throw new Error(`--domains must be at most ${MAX_DOMAINS}, got ${domains}`);
  const setups = (values.setups ?? process.env.BENCH_SETUPS ?? SETUP_KINDS.join(",")).split(",").map((s) => s.trim());
  const unknown = setups.filter((s) => !(SETUP_KINDS as readonly string[]).includes(s));
  if (unknown.length > 0 || setups.length === 0)
    throw new Error(`--setups must list some of ${SETUP_KINDS.join(", ")}, got ${unknown.join(", ") || "none"}`);
  for (const [name, n] of [
    ["clients", clients],
    ["connections", connections],
  ] as const) {
    if (n > messages) throw new Error(`--${name} (${n}) must not exceed --messages (${messages})`);
    if (warmup > 0 && n > warmup) throw new Error(`--${name} (${n}) must not exceed --warmup (${warmup})`);
  }
  return {
    messages,
    rounds,
    warmup,
    clients,
    connections,
    domains,
    setups: [...new Set(setups)] as SetupKind[],
    pgStatements: values["pg-statements"] === true,
    profileDir: dirOption(values.profile, "BENCH_PROFILE"),
  };
}

const cleanup = new Cleanup();
cleanup.onSignals("the Postroom nodes, PostgreSQL and the sink");

interface Side {
  setup: Setup;
  messages: SignedMessageSet;
  inboundSent: number;
  outbound: ClusterResult[];
  inbound: ClusterResult[];
}

const us = (x: number | null) => (x === null ? "-" : x.toFixed(0));
const perNode = (r: ClusterResult) => (r.perNodeUs.length > 1 ? ` (${r.perNodeUs.map((x) => x.toFixed(0)).join(" + ")})` : "");

async function main() {
  const opts = options();
  const workDir = cleanup.tempDir("postroom-bench-cluster-");
  console.log(`load average at the start: ${loadAverage()}`);
  const sink = await SmtpSinkProcess.start();
  cleanup.add(() => sink.stop());
  const dns = await TestDnsServer.start();
  cleanup.add(() => dns.stop());
  const key = generateSenderKey();
  publishSenders(dns, opts.domains, key);
  const target = startTarget();
  cleanup.add(() => target.server.stop(true));

  const message = buildMessage(`rcpt@${DEST_DOMAIN}`);
  const content = await apiContent(message);
  let outboundSent = 0;
  const bodies = (count: number) =>
    Array.from({ length: count }, () =>
      JSON.stringify({ from: FROM_HEADER, to: `r${outboundSent++ % RECIPIENTS}@${DEST_DOMAIN}`, ...content }),
    );

  const sides: Side[] = [];
  for (const kind of opts.setups) {
    const setup = await startSetup(
      kind,
      {
        workDir,
        dns,
        sinkPort: sink.port,
        targetUrl: target.url(`/${kind}`),
        pgStatements: opts.pgStatements,
        profileDir: opts.profileDir,
      },
      console.log,
    );
    cleanup.add(() => setup.stop());
    // Signed for this setup's address (To is signed), before anything is timed.
    sides.push({ setup, messages: await signedMessageSet(setup.rcpt, opts.domains, key), inboundSent: 0, outbound: [], inbound: [] });
  }

  console.log(
    `cluster benchmark: N=${opts.messages} messages each way per run, ${opts.rounds} round${opts.rounds === 1 ? "" : "s"} (${opts.setups.join(", ")} in turn), warm-up ${opts.warmup} each way per setup; ` +
      `outbound: ${opts.clients} API clients, one recipient per message, smarthost smtp-sink; inbound: ${opts.connections} SMTP connections, ${opts.domains} DKIM-signed sender domains, one address POSTing to a local target; message ${message.size} bytes`,
  );
  console.log(
    `machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}; work dir ${workDir} (${dirname(workDir)}); PostgreSQL durable (fsync, synchronous_commit on)`,
  );

  const measure = async (side: Side, count: number, warm: boolean) => {
    const { setup } = side;
    await setup.statements?.reset();
    const out = await runClusterOutbound(setup, sink, bodies(count), opts.clients);
    await Bun.sleep(1000); // the queue runners go idle
    const outStatements = await setup.statements?.report(count, `${setup.label} outbound (and 1 s idle)`);
    const inb = await runClusterInbound(setup, target, count, opts.connections, () => side.messages.message(side.inboundSent++));
    const inStatements = await setup.statements?.report(count, `${setup.label} inbound`);
    const tag = warm ? "warm-up " : "";
    console.log(
      `  ${tag}${setup.label.padEnd(22)} outbound accepted ${out.accepted.toFixed(0).padStart(5)} delivered ${out.delivered.toFixed(0).padStart(5)} msg/s ` +
        `(CPU µs/msg: postroom ${us(out.postroomUs)}${perNode(out)}, postgres ${us(out.postgresUs)}, client ${us(out.clientUs)}, sink ${us(out.sinkUs)}, machine ${us(out.machineUs)}); ` +
        `inbound ${inb.accepted.toFixed(0).padStart(5)} msg/s (CPU µs/msg: postroom ${us(inb.postroomUs)}${perNode(inb)}, postgres ${us(inb.postgresUs)}, client+target+DNS ${us(inb.clientUs)}, machine ${us(inb.machineUs)})`,
    );
    if (outStatements && !warm) console.log(`${outStatements}\n${inStatements}`);
    if (!warm) {
      side.outbound.push(out);
      side.inbound.push(inb);
    }
  };

  if (opts.warmup > 0) for (const side of sides) await measure(side, opts.warmup, true);
  for (let round = 0; round < opts.rounds; round++) for (const side of sides) await measure(side, opts.messages, false);

  const med = (rs: ClusterResult[], pick: (r: ClusterResult) => number | null) => {
    const xs = rs.map(pick);
    return xs.some((x) => x === null) ? null : median(xs as number[]);
  };
  const rows = sides.map(({ setup, outbound: o, inbound: i }) => [
    setup.label,
    us(med(o, (r) => r.accepted)),
    us(med(o, (r) => r.delivered)),
    us(med(o, (r) => r.postroomUs)),
    us(med(o, (r) => r.postgresUs)),
    us(med(i, (r) => r.accepted)),
    us(med(i, (r) => r.postroomUs)),
    us(med(i, (r) => r.postgresUs)),
  ]);
  const head = [
    "setup",
    "out accepted/s",
    "out delivered/s",
    "out CPU µs/msg postroom",
    "postgres",
    "in msg/s",
    "in CPU µs/msg postroom",
    "postgres",
  ];
  console.log("");
  console.log(
    `medians of ${opts.rounds} run${opts.rounds === 1 ? "" : "s"} per setup (CPU: every node's process together; the PostgreSQL server's apart):`,
  );
  console.log(table([head, ...rows]));
  console.log(`load average at the end: ${loadAverage()}`);
}

/** Rows as a Markdown table, columns padded (the first left-aligned, the rest right). */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(" | ")} |`;
  return [
    line(rows[0]!),
    `| ${widths.map((w, c) => (c === 0 ? "-".repeat(w) : `${"-".repeat(w - 1)}:`)).join(" | ")} |`,
    ...rows.slice(1).map(line),
  ].join("\n");
}

try {
  await main();
  await cleanup.run();
  process.exit(0);
} catch (err) {
  console.error(`bench:cluster failed: ${(err as Error).message}`);
  await cleanup.run();
  process.exit(1);
}
