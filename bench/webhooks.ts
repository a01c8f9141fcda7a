// `bun run bench:webhooks`: how fast Postroom's message events reach a webhook receiver
// while it is sending, next to how fast it produces them.
//
// This is not a comparison with another system: no peer delivers the same events, so
// nothing here says whether another design (say, a plain queue-and-POST loop with the
// same durability) would do better or worse. The ratio it prints is delivered/produced
// within Postroom: how far event delivery keeps up with Postroom's own sending.
//
//   produced:  events Postroom records (registration on the 202; dispatch, stamped before
//              the SMTP attempt, and delivery, committed together after it: 3 per message
//              of one recipient) per second, from the first API send until Postroom has
//              recorded the last of the 3×N events (the moment its log shows the N-th
//              "outbound attempt" line with verdict "delivered", which it writes just
//              before the group commit of that dispatch and delivery: ~1 ms early);
//   delivered: events the receiver accepted (signature verified, 200) per second: both
//              over the same window as "produced" and until the receiver has all 3×N;
//   lag:       from the last 202 (and from the last event produced) until the receiver
//              has all 3×N events;
//   batches:   events per webhook POST (mean, max) and POSTs per run.
//
//   bun run bench:webhooks [--messages N] [--clients C] [--warmup W] [--rounds R]
//                          [--receiver-delay MS] [--hold] [--receiver-down [--slice S]]
//                          [--profile DIR]
//   defaults: N=2000, C=8, W=500, R=3 (median of the rounds), receiver delay 0, slice
//   10 s (or BENCH_MESSAGES, BENCH_CLIENTS, BENCH_WARMUP, BENCH_ROUNDS,
//   BENCH_RECEIVER_DELAY, BENCH_HOLD=1, BENCH_RECEIVER_DOWN=1, BENCH_SLICE, BENCH_PROFILE)
//   --receiver-delay makes the receiver answer each POST MS ms after it has read it (a
//   receiver across the Internet, or a slow one): the dispatcher keeps one batch in
//   flight per outbound account, so this bounds what it can deliver.
//   --hold (BENCH_HOLD=1) measures how fast the dispatcher drains a backlog: the
//   receiver holds its answer to each run's first POST until Postroom has produced all
//   3×N events (at most 8 s: the webhook timeout is 10 s), so they pile up in the outbox,
//   then answers everything at once; "drain" is the events received after the release
//   per second until the last one.
//   --receiver-down (BENCH_RECEIVER_DOWN=1) asks whether a receiver outage slows sending
//   down (bench/webhooks-outage.ts): after the warm-up (receiver up, checked as usual),
//   one run of N messages during which the receiver answers 503 to every POST, so the
//   events pile up pending and the dispatcher retries on its backoff schedule. It prints
//   the 202s and the sink's deliveries per second and the events pending (Postroom's
//   /metrics) per slice of S seconds, then the first slice's send rate against the last.
//   The checks that every event reached the receiver give way to: none did, and exactly
//   3N are pending at the end. Use a large N (30,000: a backlog of 90,000 events).
//   --profile runs Postroom under `bun --cpu-prof` and prints where its main thread
//   spends its time (bench/outbound-profile.ts); the profiler slows it down.
//
// Needs Postfix's `smtp-sink` (Debian package postfix; see bench/outbound.ts) as the sink.
//
// How it is set up:
// - Postroom runs as `bun src/main.ts serve` with a generated config in a temp dir:
//   HTTP on an ephemeral loopback port, no SMTP listeners, `[outbound] smarthost` = the
//   sink (bench/smtp-sink.ts: one smtp-sink child process on loopback), both rate limits
//   off, and the account's `webhook = { url, token, signing_secret }` pointing at the
//   receiver. `[webhooks] allow_private = true`, because the receiver is on loopback (the
//   dispatcher refuses private targets otherwise); everything else about webhooks is
//   the default (batch_size 100, timeout 10 s).
// - A loopback DNS server (test/helpers/dns-server.ts) holds the records of the sending
//   domain, which is created, published and verified through the API as a customer does
//   it (mail is only accepted from a verified domain, and DKIM-signed with its keys).
// - The receiver is a Bun.serve in this process. It verifies every POST with the
//   `standardwebhooks` package (Webhook(secret).verify(body, headers)) and the Bearer
//   token, then checks every event: its id never seen before, its message one this run
//   sent (checked at the end of the run: a registration can arrive before its 202), and
//   the message's events in the order registration, dispatch, delivery.
//   It answers 200 (after --receiver-delay ms, if set).
// - This process is also the API client: C workers, each POSTing its next message
//   (bench/message.ts's subject, text and HTML, one distinct recipient) as soon as the
//   previous one got its 202 (keep-alive), as bench:outbound does.
// - Every run is checked, warm-up included: every send got 202 with an id, the sink got
//   exactly N messages, Postroom logged N deliveries and nothing else, no error and no
//   webhook warning, and the receiver got exactly the 3×N events of the run's messages
//   (nothing more in the 1.5 s after the last one: longer than the dispatcher's 1 s idle
//   poll), every signature valid, in order, no event twice. Anything else aborts with
//   exit code 1. With --receiver-down the measured run is checked as
//   bench/webhooks-outage.ts says.
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { apiContent, FROM_HEADER } from "./api-client.ts";
import { dirOption, intOption, parseOptions } from "./args.ts";
import { cpuProfileArgs, cpuProfileReport } from "./child.ts";
import { Cleanup } from "./cleanup.ts";
import { DeliveryTally } from "./delivery-tally.ts";
import { loadAverage, median } from "./measure.ts";
import { buildMessage, SENDER_DOMAIN } from "./message.ts";
import { summarizeOutboundProfile } from "./outbound-profile.ts";
import { METRICS_CONFIG, startPostroom, verifiedSendingDomain } from "./postroom.ts";
import { SmtpSinkProcess } from "./smtp-sink.ts";
import { EVENTS_PER_MESSAGE, KINDS, Receiver } from "./webhook-receiver.ts";
import { runReceiverDown } from "./webhooks-outage.ts";
import { measureRun, type RunContext, type RunResult } from "./webhooks-run.ts";

const DEST = "dest1.bench.test";

// ---------------------------------------------------------------- options

function options() {
  const values = parseOptions(
    "bun run bench:webhooks [--messages N] [--clients C] [--warmup W] [--rounds R] [--receiver-delay MS] [--hold] [--receiver-down [--slice S]] [--profile DIR]",
    {
      messages: { type: "string", short: "n" },
      clients: { type: "string", short: "c" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      profile: { type: "string" },
      "receiver-delay": { type: "string" },
      hold: { type: "boolean" },
      "receiver-down": { type: "boolean" },
      slice: { type: "string" },
    },
  );
  const receiverDown = values["receiver-down"] === true || process.env.BENCH_RECEIVER_DOWN === "1";
  const messages = intOption(values.messages, "BENCH_MESSAGES", 2000, 1);
  const clients = intOption(values.clients, "BENCH_CLIENTS", 8, 1);
  const warmup = intOption(values.warmup, "BENCH_WARMUP", 500, 0);
  // Down, the backlog is what is measured: one long run, which a next round would start on top of.
  const rounds = intOption(values.rounds, "BENCH_ROUNDS", receiverDown ? 1 : 3, 1);
  if (receiverDown && rounds !== 1) throw new Error("--receiver-down makes one long run: --rounds must be 1");
  const sliceMs = 1000 * intOption(values.slice, "BENCH_SLICE", 10, 1);
  if (!receiverDown && values.slice !== undefined) throw new Error("--slice only applies to --receiver-down");
  const receiverDelayMs = intOption(values["receiver-delay"], "BENCH_RECEIVER_DELAY", 0, 0);
  if (receiverDelayMs >= 9000) throw new Error("--receiver-delay must stay below Postroom's 10 s webhook timeout");
  if (clients > messages) throw new Error(`--clients (${clients}) must not exceed --messages (${messages})`);
  if (warmup > 0 && clients > warmup) throw new Error(`--clients (${clients}) must not exceed --warmup (${warmup})`);
  const hold = values.hold === true || process.env.BENCH_HOLD === "1";
  if (receiverDown && (hold || receiverDelayMs > 0))
    throw new Error("--receiver-down answers every POST 503 at once: it does not go with --hold or --receiver-delay");
  return {
    messages,
    clients,
    warmup,
    rounds,
    receiverDelayMs,
    hold,
    receiverDown,
    sliceMs,
    profileDir: dirOption(values.profile, "BENCH_PROFILE"),
  };
}

// ---------------------------------------------------------------- Postroom

/** Postroom's config for this benchmark: relaying to the sink, the account's webhook pointing at the receiver; /metrics on if `metrics` (the pending count). */
const webhookConfig = (sinkPort: number, receiver: Receiver, metrics: boolean) => ({
  http: metrics ? METRICS_CONFIG : "",
  relay: `smarthost = "smtp://127.0.0.1:${sinkPort}"`,
  sections: "[webhooks]\n# The receiver is on loopback.\nallow_private = true",
  account: `webhook = { url = "${receiver.url}", token = "${receiver.token}", signing_secret = "${receiver.secret}" }`,
});

// Stops the children and removes the temp dir however the run ends, Ctrl-C included.
const cleanup = new Cleanup();
cleanup.onSignals("Postroom, the sink, the DNS server and the receiver");

async function main() {
  const opts = options();
  const workDir = cleanup.tempDir("postroom-bench-webhooks-");
  try {
    const message = buildMessage(`rcpt@${DEST}`);
    const content = await apiContent(message);

    const sink = await SmtpSinkProcess.start();
    cleanup.add(() => sink.stop());
    const dns = await TestDnsServer.start();
    cleanup.add(() => dns.stop());
    const receiver = new Receiver(opts.receiverDelayMs);
    cleanup.add(() => receiver.stop());

    const postroom = await startPostroom(
      workDir,
      dns.address,
      webhookConfig(sink.port, receiver, opts.receiverDown),
      cpuProfileArgs(opts.profileDir, "postroom-webhooks"),
    );
    cleanup.add(() => postroom.child.stop());
    const tally = new DeliveryTally(postroom.child);
    postroom.child.ready();
    await verifiedSendingDomain(postroom.httpPort, dns, SENDER_DOMAIN);

    let seq = 0;
    const runContext: RunContext = {
      httpPort: postroom.httpPort,
      postroom: postroom.child,
      sink,
      tally,
      receiver,
      clients: opts.clients,
      hold: opts.hold,
      sent: new Set(),
    };

    /** The next `count` sends, each to a recipient of its own. */
    const nextBodies = (count: number) =>
      Array.from({ length: count }, () => JSON.stringify({ from: FROM_HEADER, to: `r${seq++}@${DEST}`, ...content }));

    const run = (count: number): Promise<RunResult> => measureRun(runContext, nextBodies(count));

    console.log(
      `webhooks benchmark: N=${opts.messages} messages (1 recipient each, ${EVENTS_PER_MESSAGE} events each: ${KINDS.join(", ")}) over C=${opts.clients} API clients, ${opts.warmup} warm-up, ${opts.receiverDown ? "then one run with the receiver down" : `${opts.rounds} round${opts.rounds === 1 ? "" : "s"}`}`,
    );
    console.log(
      `machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}; sink: smtp-sink on 127.0.0.1:${sink.port} (smarthost); receiver: ${receiver.url} (Bun.serve in this process, standardwebhooks verify${opts.receiverDelayMs ? `, answers ${opts.receiverDelayMs} ms after reading each POST` : ""}${opts.hold ? ", holds its first answer of each run until all events are produced (at most 8 s)" : ""}${opts.receiverDown ? ", up for the warm-up, then answers 503 to every POST" : ""}); load average ${loadAverage()}`,
    );
    console.log(
      `"produced" = 3N events recorded by Postroom over first send → its log's N-th delivery line (written just before the group commit of the last delivery event, ~1 ms)`,
    );
    console.log(
      `not a comparison: no other system delivers these events here; every figure and ratio below is Postroom against itself (events delivered against events produced)`,
    );

    const results: RunResult[] = [];
    const show = (r: RunResult, tag: string) =>
      console.log(
        `  ${tag.padEnd(8)} produced ${r.producedPerS.toFixed(0).padStart(4)} ev/s  delivered ${r.deliveredPerS.toFixed(0).padStart(4)} ev/s (${r.deliveredInWindowPerS.toFixed(0)} in the same window)  ` +
          `accepted ${r.acceptedPerS.toFixed(0)} msg/s; ${r.events} events: last 202 ${(r.acceptMs / 1000).toFixed(2)} s, last produced ${(r.producedMs / 1000).toFixed(2)} s, all received ${(r.receivedMs / 1000).toFixed(2)} s; ` +
          `lag ${r.lagAfterLastAcceptMs.toFixed(0)} ms after last 202; ${r.posts} POSTs, ${r.meanBatch.toFixed(1)} ev/POST (max ${r.maxBatch}, ${r.fullBatches} full), max backlog ${r.maxBacklog}${opts.hold ? `, drain after release ${r.drainPerS.toFixed(0)} ev/s` : ""}; ` +
          `CPU µs/event: postroom ${r.serverCpuUsPerEvent.toFixed(0)}, bench ${r.benchCpuUsPerEvent.toFixed(0)}, machine ${r.machineCpuUsPerEvent.toFixed(0)}`,
      );
    if (opts.warmup > 0) show(await run(opts.warmup), "warm-up");
    if (opts.receiverDown) {
      const setup = {
        httpPort: postroom.httpPort,
        postroom: postroom.child,
        sink,
        tally,
        receiver,
        clients: opts.clients,
        sliceMs: opts.sliceMs,
      };
      await runReceiverDown(setup, nextBodies(opts.messages));
    } else {
      for (let round = 1; round <= opts.rounds; round++) {
        const r = await run(opts.messages);
        show(r, `run ${round}`);
        results.push(r);
      }

      const med = (key: keyof RunResult) => median(results.map((r) => r[key]));
      const fmtMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
      console.log("");
      console.log(
        `medians of ${opts.rounds} run${opts.rounds === 1 ? "" : "s"} of N=${opts.messages} (${EVENTS_PER_MESSAGE * opts.messages} events each):`,
      );
      console.log(
        `events produced:     ${med("producedPerS").toFixed(0)} events/s  (recorded by Postroom, first send → last event; API accepted ${med("acceptedPerS").toFixed(0)} msg/s)`,
      );
      console.log(
        `events delivered:    ${med("deliveredPerS").toFixed(0)} events/s  (verified by the receiver, first send → all received; ${med("deliveredInWindowPerS").toFixed(0)} events/s within the produced window)`,
      );
      console.log(
        `ratio delivered/produced (within Postroom, not against a peer): ${(med("deliveredPerS") / med("producedPerS")).toFixed(2)}  (within the produced window: ${(med("deliveredInWindowPerS") / med("producedPerS")).toFixed(2)}; received by the last event produced: ${(100 * med("receivedAtProducedEnd")).toFixed(1)}%)`,
      );
      console.log(
        `lag after last send: ${fmtMs(med("lagAfterLastAcceptMs"))} from the last 202 until the receiver had all events (${fmtMs(med("lagAfterLastProducedMs"))} after the last event was produced); max backlog ${med("maxBacklog").toFixed(0)} events`,
      );
      if (opts.hold)
        console.log(
          `drain (--hold):      ${med("drainPerS").toFixed(0)} events/s  (events received after the receiver released its first answer, until the last)`,
        );
      console.log(
        `webhook batches:     ${med("posts").toFixed(0)} POSTs per run, mean ${med("meanBatch").toFixed(1)} events/POST, max ${med("maxBatch").toFixed(0)}, ${med("fullBatches").toFixed(0)} full (100)`,
      );
      console.log(
        `CPU µs per event:    postroom ${med("serverCpuUsPerEvent").toFixed(0)}, bench process (API client + receiver) ${med("benchCpuUsPerEvent").toFixed(0)}, machine ${med("machineCpuUsPerEvent").toFixed(0)}`,
      );
      console.log(
        `checked: every signature valid, every event once, each message's events in order (${KINDS.join(" → ")}), exactly ${EVENTS_PER_MESSAGE}×N per run, N at the sink`,
      );
    }
    console.log(`load average at the end: ${loadAverage()}`);

    if (opts.profileDir) {
      await postroom.child.stop();
      const total = opts.warmup + opts.rounds * opts.messages;
      console.log(cpuProfileReport(opts.profileDir, "postroom-webhooks", "postroom", (file) => summarizeOutboundProfile(file, total)));
    }
  } finally {
    await cleanup.run();
  }
}

try {
  await main();
  await cleanup.run();
  process.exit(cleanup.interrupted ? 130 : 0);
} catch (err) {
  if (!cleanup.interrupted) console.error(`bench:webhooks failed: ${(err as Error).message}`);
  await cleanup.run();
  process.exit(cleanup.interrupted ? 130 : 1);
}
