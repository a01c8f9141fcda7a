// bench:outbound's run loop: the warm-up (--start warm), then the rounds, Postfix then
// Postroom, each run followed by a measurement of the signing floor; a line per run.
import { measureSigningFloor, type SigningFloor } from "./signing-floor.ts";
import type { OutboundOptions } from "./outbound-options.ts";
import type { BenchSide, OutboundBench } from "./outbound-setup.ts";

export interface RoundsResult {
  /** The signing floor measured after each timed run, in order (Postfix's run, Postroom's, ...). */
  floors: SigningFloor[];
  /** Postroom's DNS queries during the warm-up, by name; bench.dnsQueries then holds the timed runs' alone. */
  warmupQueries: Map<string, number>;
}

export async function runRounds(opts: OutboundOptions, bench: OutboundBench): Promise<RoundsResult> {
  const { message, sink, sides, dnsQueries, postfixDns } = bench;
  const floors: SigningFloor[] = [];
  const rawMessage = Buffer.from(message.data(0)).toString("latin1");
  measureSigningFloor(rawMessage, 20); // warm the code paths up
  const measure = async (side: BenchSide, count: number, warm: boolean) => {
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
  return { floors, warmupQueries };
}
