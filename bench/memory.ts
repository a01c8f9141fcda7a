// `bun run bench:memory`: Postroom's memory when large mail arrives at once (issue 15).
//
//   bun run bench:memory [--budget SIZE] [--raised SIZE] [--inbound N] [--inbound-size SIZE]
//                        [--api N] [--api-size SIZE] [--submission N] [--format json+n|multipart+n]
//                        [--phases LIST]
//   defaults: budget 256MB (limits.mail_in_flight), raised 8GB, 50 inbound messages of 25MB
//   (max_message_size), 50 E11 sends of 10MB (outbound.max_size), 50 submissions of 10MB,
//   json+n, phases inbound,api,hostage,senders,controls (add submission to LIST for that phase)
//   (or BENCH_BUDGET, BENCH_RAISED, BENCH_INBOUND, BENCH_INBOUND_SIZE, BENCH_API, BENCH_API_SIZE,
//   BENCH_SUBMISSION, BENCH_FORMAT, BENCH_PHASES)
//
// Each phase starts a fresh Postroom (`bun src/main.ts serve`, bench/postroom.ts) and:
// - inbound: opens N SMTP connections, then sends one message of about the size limit on
//   each, all at once, declaring SIZE=; the address POSTs to a target that reads every body
//   and throws it away (bench/memory-peers.ts);
// - api: N E11 sends at once, each with attachments as large as outbound.max_size lets
//   the composed message be; Postroom relays them to an SMTP sink that discards them;
// - submission: N SMTP submissions at once (AUTH, SIZE=), each a message of outbound.max_size,
//   relayed to the same sink.
// Postroom's VmRSS is sampled every 50 ms from /proc (and VmHWM read at the end). Printed:
// idle and peak RSS, the most messages in flight at once (from the client's side: 354
// given and no final reply yet, or an E11 request not yet answered), the peak's growth per
// message in flight, and how many were accepted, deferred (451 / 503) and delivered.
// - hostage and senders (issue 31, bench/memory-scenarios.ts): three strangers declaring
//   large SIZE= and trickling, beside another sender and E11; 24 senders of 18 MB at once
//   without SIZE=: how many are accepted at the first try, and the peak RSS; two messages of
//   23 MB of control characters (a JSON body six times their size): the peak RSS. These
//   three run with the budget only.
// Phases run with the budget and then with the raised budget. On a tree without the
// budget (the "before" of issue 15: the key is unknown there) the phases run once, with
// nothing limiting them; the same script measures both.
//
// Checks with a budget: peak RSS under the budget plus 200 MB, every message accepted and
// delivered or deferred (none lost), the in-flight gauge back to 0; with the raised budget,
// every message accepted. A failed check exits 1.
import { totalmem } from "node:os";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { Cleanup } from "./cleanup.ts";
import { discardingSink, discardingTarget, mb, MB } from "./memory-peers.ts";
import { memoryOptions } from "./memory-options.ts";
import { budgetSection, HEADROOM, phase, SENDER_DOMAIN, size } from "./memory-phase.ts";
import { checks, report } from "./memory-report.ts";
import { runScenario } from "./memory-scenarios.ts";

async function main() {
  const opts = memoryOptions();
  const cleanup = new Cleanup();
  cleanup.onSignals("Postroom and the peers");
  try {
    const dns = await TestDnsServer.start();
    cleanup.add(() => dns.stop());
    dns.set(SENDER_DOMAIN, [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
    const target = discardingTarget();
    cleanup.add(() => target.stop());
    const sink = await discardingSink();
    cleanup.add(() => sink.stop());
    const peers = { dns, target, sink, cleanup };
    const hasBudget = budgetSection(opts.budget) !== null;
    console.log(
      `memory benchmark: ${navigator.hardwareConcurrency} cores, ${mb(totalmem())} of memory, bun ${Bun.version}; ${hasBudget ? `budget ${opts.budget}, raised ${opts.raised}` : "this tree has no limits.mail_in_flight: no budget"}`,
    );
    const runs: { budget: string | null; raised: boolean }[] = hasBudget
      ? [
          { budget: opts.budget, raised: false },
          { budget: opts.raised, raised: true },
        ]
      : [{ budget: null, raised: false }];
    const failed: string[] = [];
    for (const kind of ["hostage", "senders", "controls"] as const) {
      const section = budgetSection(opts.budget);
      if (!opts.phases[kind] || section === null) continue;
      const r = await runScenario(kind, section, SENDER_DOMAIN, peers, {
        senders: 24,
        sizeBytes: 18 * MB,
        budgetBytes: size(opts.budget),
        headroomBytes: HEADROOM,
      });
      console.log(`\n${kind}, budget ${opts.budget}`);
      for (const l of r.lines) console.log(`  ${l}`);
      failed.push(...r.failed);
    }
    for (const run of runs) {
      for (const kind of ["inbound", "api", "submission"] as const) {
        if (!opts.phases[kind] || opts[kind] === 0) continue;
        const r = await phase(kind, run.budget, opts, peers);
        report(r);
        failed.push(...checks(r, run.budget, run.raised));
      }
    }
    console.log(failed.length === 0 ? "\nall checks passed" : `\nFAILED:\n  ${failed.join("\n  ")}`);
    return failed.length === 0 ? 0 : 1;
  } finally {
    await cleanup.run();
  }
}

try {
  process.exit(await main());
} catch (err) {
  console.error(`bench:memory failed: ${(err as Error).stack ?? err}`);
  process.exit(2);
}
