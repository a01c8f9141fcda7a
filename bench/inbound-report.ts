// bench:inbound's report: what the run compares (before the runs), and the medians, the
// ratio to the bare pipeline, the base's CPU per message and the DNS queries (after them).
import type { InboundOptions } from "./inbound-options.ts";
import { JIT_QUIET_SHARE, MAX_WARMUP_BATCHES, type RoundsResult } from "./inbound-rounds.ts";
import type { InboundBench, InboundSide } from "./inbound-setup.ts";
import { median } from "./measure.ts";
import { DKIM_SELECTOR, SIGNED_HEADERS, senderDomain, tallyQueries } from "./signed-senders.ts";

const TARGET_RATIO = 1.0;

/** The lines before the runs: what is compared, with which messages, on what machine. */
export function printSetup(opts: InboundOptions, bench: InboundBench): void {
  const { messages, signingMs } = bench;
  const { min, max } = messages.size;
  console.log(
    `inbound benchmark: N=${opts.messages} messages over C=${opts.connections} connections, warm-up in batches of ${opts.warmup} until the JIT is quiet, ${opts.rounds} round${opts.rounds === 1 ? "" : "s"} (bare, postroom, bare, postroom, ...), message ${min === max ? min : `${min}-${max}`} bytes`,
  );
  console.log(
    `messages: from ${opts.domains} sender domain${opts.domains === 1 ? "" : "s"} in turn (${senderDomain(0)}${opts.domains > 1 ? ` to ${senderDomain(opts.domains - 1)}` : ""}; each publishes SPF, its DKIM key and DMARC, p=none${opts.domains > 1 ? " or p=reject" : ""}), 100% DKIM-signed (rsa-sha256, RSA-2048, s=${DKIM_SELECTOR}, h=${SIGNED_HEADERS.join(":")}; the ${messages.signatureBytes}-byte signature of each domain made once at start-up, in ${(signingMs / 1000).toFixed(1)} s); each server's i-th message is the same`,
  );
  console.log(`machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}`);
}

/** The DNS queries of a phase, by sender record, and per Postroom message of the phase. */
function describeQueries(queries: Map<string, number>, postroomMessages: number, has: (name: string) => boolean): string {
  const { kinds, other } = tallyQueries(queries);
  const total = kinds.spf.queries + kinds.dkim.queries + kinds.dmarc.queries;
  const kind = (label: string, k: keyof typeof kinds) => `${label} ${kinds[k].queries} (${kinds[k].names} names)`;
  const others = other.map(([n, c]) => `${n} x${c} (${has(n) ? "answered" : "NXDOMAIN"})`).join(", ") || "none";
  return `${kind("SPF", "spf")}, ${kind("DKIM key", "dkim")}, ${kind("DMARC", "dmarc")}: ${(total / postroomMessages).toFixed(2)} per Postroom message (3 if none of them came from its caches); other names: ${others}`;
}

/** The lines after the runs: each side's median, the ratio (its median and per round), the base's, the warm-up and the DNS queries. */
export function printSummary(opts: InboundOptions, bench: InboundBench, rounds: RoundsResult): void {
  const { dns, target, sides, baseSide } = bench;
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
  console.log(`ratio:         ${ratio.toFixed(2)} (target >= ${TARGET_RATIO.toFixed(2)})${ratio >= TARGET_RATIO ? "" : "  BELOW TARGET"}`);
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
}
