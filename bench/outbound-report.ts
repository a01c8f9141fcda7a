// bench:outbound's report: what the run compares and how (before the runs), and the
// medians, the CPU ratio to Postroom's cost floor and what each side relayed (after them).
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { DATABASE_FILE } from "../src/store/store.ts";
import { loadAverage, median } from "./measure.ts";
import { describeSigning, PrivateOpendkim } from "./opendkim.ts";
import { RECIPIENTS_PER_DOMAIN } from "./outbound-feed.ts";
import type { OutboundOptions } from "./outbound-options.ts";
import type { RoundsResult } from "./outbound-rounds.ts";
import { sourceShares, type RunResult } from "./outbound-run.ts";
import type { BenchSide, OutboundBench } from "./outbound-setup.ts";
import { PrivatePostfix } from "./postfix.ts";

/** The size of a message Postroom holds in its store (outbound_message_bodies), or null. */
function queuedSize(dataDir: string): number | null {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    return (db.query("SELECT length(raw) AS bytes FROM outbound_message_bodies LIMIT 1").get() as { bytes: number } | null)?.bytes ?? null;
  } finally {
    db.close();
  }
}

/** The lines before the runs: what is compared, on what machine, and how each side signs and is measured. */
export function printSetup(opts: OutboundOptions, bench: OutboundBench): void {
  const { message, sink, postfixDns, feeds, postfix, groups, postroomSigned, postfixSigned } = bench;
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
}

/** The lines after the runs: medians, CPU per message and its ratio, and what each side relayed and looked up. */
export function printSummary(opts: OutboundOptions, bench: OutboundBench, rounds: RoundsResult, workDir: string): void {
  const { message, sides, postfix, dnsQueries, postfixDns } = bench;
  const { floors, warmupQueries } = rounds;
  const med = (side: BenchSide, key: Exclude<keyof RunResult, "threadsUs" | "mainThread">) => median(side.results.map((r) => r[key]));
  const pr = { accepted: med(sides.postroom, "accepted"), delivered: med(sides.postroom, "delivered") };
  const pf = { accepted: med(sides.postfix, "accepted"), delivered: med(sides.postfix, "delivered") };
  const cpuLine = (side: BenchSide) =>
    `${side.server} ${med(side, "serverCpuUs").toFixed(0)}, ${side.client} ${med(side, "clientCpuUs").toFixed(0)}, sink ${med(side, "sinkCpuUs").toFixed(0)}, machine ${med(side, "machineCpuUs").toFixed(0)}`;
  console.log("");
  console.log(`medians of ${opts.rounds} run${opts.rounds === 1 ? "" : "s"} each:`);
  console.log(`postroom accepted:   ${pr.accepted.toFixed(0)} msg/s (${opts.feed === "smtp" ? "250 at the end of DATA" : "202"}, durable)`);
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
}
