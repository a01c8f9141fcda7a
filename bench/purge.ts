// `bun run bench:purge`: does the retention purge slow inbound mail down? Postroom's
// inbound SMTP latency (per message, from MAIL FROM to the 250 after DATA) at its 99th
// percentile while the purge deletes 1,000,000 incoming statuses, against the same without
// a purge, measured in the same run, interleaved. Target: p99 during the purge <= 1.10 x
// p99 without.
//
//   bun run bench:purge [--rows N] [--slices S] [--messages M] [--connections C] [--rate R] [--warmup W] [--batch-size B] [--batch-pause MS]
//   defaults: N=1000000, S=10, M=3000 per baseline slice, C=8, R=500 msg/s (0 = each connection
//   as fast as it can), W=20000, B and MS = the [retention] defaults
//   (or BENCH_ROWS, BENCH_SLICES, BENCH_MESSAGES, BENCH_CONNECTIONS, BENCH_RATE, BENCH_WARMUP,
//   BENCH_BATCH_SIZE, BENCH_BATCH_PAUSE)
//
// How it is set up, and why:
// - The store is filled before Postroom starts: N incoming statuses 90 to 90 - S days old (the
//   oldest first, as they arrive; in S bands), spread over 100 addresses, through the statuses
//   repository's own grouped insert (journaledStore), in transactions of 50,000. Postroom
//   then runs as in bench:inbound (the real `serve` as a child process, bench/postroom.ts;
//   the same message, client, target and DNS server) with incoming_statuses = "91d" and
//   the purge every second: nothing is old enough, so each run reads one window and stops,
//   as an idle purge does.
// - Warm-up (W messages as fast as the connections go), then baseline and purge slices in
//   turn: M messages without a purge; then the config is rewritten with a retention that
//   takes the next band and Postroom reloaded (SIGHUP), as an operator does, and its next
//   run deletes those N/S statuses while mail goes on, until the run's log line
//   comes (messages sent before the run started, its duration_ms before the line, are left
//   out); then M messages without a purge again; and so on, S times. The shared 2-core
//   machine drifts (other processes, the JIT, the page cache) on a scale of seconds to
//   minutes: interleaved, the drift falls on both sides alike; with S=1 the whole million
//   goes in one run between two baselines.
// - Mail goes at R msg/s in all, each connection on its own schedule (a reply that comes
//   late delays that connection's next message; it is never sent on top of it). R is a busy
//   server's steady traffic, well under what it can take (bench:inbound: ~1,500-2,000 msg/s
//   on 2 cores), so the figure is what a sender waits, not how long a queue of our own
//   making is; with R=0 every message is sent as soon as the last one is answered, the
//   server is saturated, and any CPU the purge takes shows as latency in full.
// - Correctness is checked: every message must get 250, the target must get one POST per
//   message, and the runs must have deleted the N statuses between them.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { intOption, parseOptions } from "./args.ts";
import { loadAverage, median } from "./measure.ts";
import { buildMessage, SENDER_DOMAIN } from "./message.ts";
import { inboundAddress, postroomConfig, startPostroom } from "./postroom.ts";
import { BAND_MS, DAY_MS, fillStatuses, OLDEST_DAYS } from "./purge-fill.ts";
import { cpuShare, describe, percentile, type Sample, sendPhase } from "./purge-send.ts";
import { SmtpConnection } from "./smtp-client.ts";
import { startTarget } from "./target.ts";

const TARGET_RATIO = 1.1;

function options() {
  const values = parseOptions(
    "bun run bench:purge [--rows N] [--slices S] [--messages M] [--connections C] [--rate R] [--warmup W] [--batch-size B] [--batch-pause MS]",
    {
      rows: { type: "string" },
      slices: { type: "string" },
      messages: { type: "string", short: "n" },
      connections: { type: "string", short: "c" },
      rate: { type: "string" },
      warmup: { type: "string" },
      "batch-size": { type: "string" },
      "batch-pause": { type: "string" },
    },
  );
  const batchSize = values["batch-size"] ?? process.env.BENCH_BATCH_SIZE;
  const batchPause = values["batch-pause"] ?? process.env.BENCH_BATCH_PAUSE;
  return {
    rows: intOption(values.rows, "BENCH_ROWS", 1_000_000, 1),
    slices: intOption(values.slices, "BENCH_SLICES", 10, 1),
    messages: intOption(values.messages, "BENCH_MESSAGES", 3000, 1),
    connections: intOption(values.connections, "BENCH_CONNECTIONS", 8, 1),
    rate: intOption(values.rate, "BENCH_RATE", 500, 0),
    warmup: intOption(values.warmup, "BENCH_WARMUP", 20_000, 0),
    batchSize: batchSize === undefined ? null : intOption(batchSize, "BENCH_BATCH_SIZE", 0, 1),
    batchPauseMs: batchPause === undefined ? null : intOption(batchPause, "BENCH_BATCH_PAUSE", 0, 0),
  };
}

interface PurgeRun {
  atMs: number;
  durationMs: number;
  deleted: number;
  windows: number;
}

async function main() {
  const opts = options();
  const workDir = mkdtempSync(join(tmpdir(), "postroom-bench-purge-"));
  const cleanup: (() => Promise<unknown> | unknown)[] = [() => rmSync(workDir, { recursive: true, force: true })];
  try {
    console.log(
      `purge benchmark: ${opts.rows} incoming statuses purged in ${opts.slices} run${opts.slices === 1 ? "" : "s"}; inbound latency over C=${opts.connections} connections at ${opts.rate > 0 ? `${opts.rate} msg/s` : "full speed"}, baseline slices of ${opts.messages} messages, warm-up ${opts.warmup}`,
    );
    console.log(`machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}, load average ${loadAverage()}`);
    const fillMs = fillStatuses(join(workDir, "data"), opts.rows, opts.slices);
    console.log(
      `store filled: ${opts.rows} statuses ${OLDEST_DAYS} to ${OLDEST_DAYS - opts.slices + 0.5} days old in ${opts.slices} band${opts.slices === 1 ? "" : "s"}, in ${(fillMs / 1000).toFixed(1)} s`,
    );

    const dns = await TestDnsServer.start();
    cleanup.unshift(() => dns.stop());
    dns.set(SENDER_DOMAIN, [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
    const target = startTarget();
    cleanup.unshift(() => target.server.stop(true));

    const tuning = `${opts.batchSize === null ? "" : `batch_size = ${opts.batchSize}\n`}${opts.batchPauseMs === null ? "" : `batch_pause = "${opts.batchPauseMs}ms"\n`}`;
    const parts = (keep: string) => ({
      inboundListen: "127.0.0.1:0",
      inbound: "allow_private_targets = true",
      sections: `[retention]\nincoming_statuses = "${keep}"\ninterval = "1s"\n${tuning}`,
    });
    const { child, httpPort } = await startPostroom(workDir, dns.address, parts(`${OLDEST_DAYS + 1}d`), []);
    cleanup.unshift(() => child.stop());
    const smtpPort = (await child.waitFor((l) => l.msg === "inbound smtp listening")).port as number;
    const rcpt = await inboundAddress(httpPort, target.url("/in"));
    child.ready();
    let reloads = 0;
    let deletedInAll = 0;
    // Set from the log (a callback), so read through a function rather than narrowed.
    let purgeRun: PurgeRun | null = null;
    const finished = (): PurgeRun | null => purgeRun;
    child.onLine = (text) => {
      if (text.includes('"config reloaded"')) reloads++;
      if (!text.includes('"retention purge"')) return;
      const line = JSON.parse(text) as { deleted: { incoming_statuses: number }; duration_ms: number; windows: number };
      deletedInAll += line.deleted.incoming_statuses;
      if (line.deleted.incoming_statuses > 0)
        purgeRun = {
          atMs: performance.now(),
          durationMs: line.duration_ms,
          deleted: line.deleted.incoming_statuses,
          windows: line.windows,
        };
    };
    const reload = async (keep: string) => {
      const before = reloads;
      writeFileSync(join(workDir, "postroom.toml"), postroomConfig(join(workDir, "data"), dns.address, parts(keep)));
      child.proc.kill("SIGHUP");
      const deadline = Date.now() + 10_000;
      while (reloads === before && Date.now() < deadline) await Bun.sleep(10);
      if (reloads === before) throw new Error("postroom did not log the config reload");
    };

    const cpu = () => ({ all: child.cpuMs(), main: child.mainThreadCpuMs(), atMs: performance.now() });
    const message = buildMessage(rcpt);
    const conns = await Promise.all(
      Array.from({ length: opts.connections }, () => SmtpConnection.open("127.0.0.1", smtpPort, "client.sender.bench.test")),
    );
    let sent = 0;
    if (opts.warmup > 0) {
      const w = await sendPhase(conns, rcpt, message, 0, opts.warmup);
      sent += w.length;
      console.log(describe("warm-up (full speed)", w));
    }
    const baselines: Sample[][] = [];
    const purging: Sample[][] = [];
    const runs: PurgeRun[] = [];
    const baseline = async (k: number) => {
      const cpu0 = cpu();
      const b = await sendPhase(conns, rcpt, message, opts.rate, opts.messages);
      sent += b.length;
      baselines.push(b);
      console.log(`${describe(`baseline ${k}`, b)}  ${cpuShare(cpu0, cpu())}`);
    };
    await baseline(0);
    for (let k = 1; k <= opts.slices; k++) {
      // The k-th band becomes old enough: the retention falls in the gap after it.
      const keepMinutes = (OLDEST_DAYS * DAY_MS - (k - 1) * DAY_MS - BAND_MS - BAND_MS / 2) / 60_000;
      purgeRun = null;
      await reload(`${keepMinutes}m`);
      const cpu0 = cpu();
      const deadline = Date.now() + 30 * 60_000;
      const during = await sendPhase(conns, rcpt, message, opts.rate, Infinity, () => finished() !== null || Date.now() > deadline);
      sent += during.length;
      const run = finished();
      if (!run) throw new Error(`purge run ${k} did not finish within 30 minutes`);
      runs.push(run);
      // Only the messages sent while the run was under way (its line may be held 100 ms).
      const startMs = run.atMs - run.durationMs - 100;
      const inRun = during.filter((s) => s.atMs >= startMs);
      purging.push(inRun);
      console.log(
        `${describe(`purge ${k}`, inRun, run.durationMs + 100)}  ${cpuShare(cpu0, cpu())}  ${run.deleted} rows in ${(run.durationMs / 1000).toFixed(1)} s`,
      );
      await baseline(k);
    }
    await Promise.all(conns.map((c) => c.quit()));
    await Bun.sleep(200);
    const posts = target.counter("/in").posts;
    if (posts !== sent) throw new Error(`the target received ${posts} POSTs for ${sent} messages`);
    const deleted = runs.reduce((n, r) => n + r.deleted, 0);
    if (deleted !== opts.rows || deletedInAll !== deleted)
      throw new Error(`the purge runs deleted ${deleted} statuses (${deletedInAll} in all runs), not ${opts.rows}`);

    const allBase = baselines.flat();
    const allPurge = purging.flat();
    const p99Base = percentile(allBase, 99);
    const p99Purge = percentile(allPurge, 99);
    const ratio = p99Purge / p99Base;
    // Each purge slice against the two baselines around it.
    const perSlice = purging.map((p, i) => percentile(p, 99) / percentile([...baselines[i]!, ...baselines[i + 1]!], 99));
    const purgeMs = runs.reduce((n, r) => n + r.durationMs, 0);
    console.log("");
    console.log(
      `purge:         ${deleted} statuses in ${(purgeMs / 1000).toFixed(1)} s of runs (${runs.reduce((n, r) => n + r.windows, 0)} windows, ${((deleted * 1000) / purgeMs).toFixed(0)} rows/s)`,
    );
    console.log(
      `p99 without:   ${p99Base.toFixed(2)} ms (${allBase.length} messages in ${baselines.length} slices; p50 ${percentile(allBase, 50).toFixed(2)} ms)`,
    );
    console.log(
      `p99 purging:   ${p99Purge.toFixed(2)} ms (${allPurge.length} messages in ${purging.length} slices; p50 ${percentile(allPurge, 50).toFixed(2)} ms)`,
    );
    console.log(
      `ratio:         ${ratio.toFixed(2)} (target <= ${TARGET_RATIO.toFixed(2)})${ratio <= TARGET_RATIO ? "" : "  ABOVE TARGET"}`,
    );
    if (perSlice.length > 1)
      console.log(
        `per slice:     ${perSlice.map((r) => r.toFixed(2)).join(", ")} (median ${median(perSlice).toFixed(2)}; each against the baselines before and after it)`,
      );
    console.log(`load average:  ${loadAverage()} (at the end)`);
  } finally {
    for (const step of cleanup) await step();
  }
}

try {
  await main();
  process.exit(0);
} catch (err) {
  console.error(`bench:purge failed: ${(err as Error).message}`);
  process.exit(1);
}
