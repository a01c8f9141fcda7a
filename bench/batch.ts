// `bun run bench:batch`: what POST /messages/batch (issue 34) buys a client that sends many
// messages at once. The same N messages (bench:outbound's ~4 KB newsletter, one recipient
// each, composed from subject, text and HTML) are accepted by the same Postroom in the same
// run, either as ONE batch call or as N single E11 calls (C clients at once, keep-alive,
// each sending its next call as soon as the previous one is answered: bench/api-client.ts).
// Target: the batch accepts at least 3 times as many messages per second.
//
//   bun run bench:batch [--messages N] [--clients C] [--rounds R]
//   defaults: N=500 (outbound.batch_max_messages), C=8 (bench:outbound's), R=6 (3 per side)
//   (or BENCH_MESSAGES, BENCH_CLIENTS, BENCH_ROUNDS)
//
// How, and why:
// - Postroom runs as in production (bench/postroom.ts: `serve` as a child process, SQLite,
//   the default config), its sending domain verified as a customer does it.
// - Every message is sent with test_mode: accepted, checked, composed, stored and answered
//   exactly as any other (one transaction per commit window, before the answer), but never
//   delivered, so delivery work does not run during the next round and blur it.
// - Rounds alternate in an order fixed before the first (batch, single, single, batch, ...:
//   each side as often first as second), after an untimed warm-up round of each. Bodies are
//   built before the clock starts; each round's messages go to new addresses.
// - The figure per round is accepted messages per second of wall clock (from the first
//   request to the last answer), with Postroom's CPU time per message beside it (its
//   process's user + system time over the round, /proc). Per side, the median of its
//   rounds; ratio = batch / single.
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { apiContent, FROM_HEADER, sendAll } from "./api-client.ts";
import { intOption, parseOptions } from "./args.ts";
import { processCpuMs } from "./child.ts";
import { Cleanup } from "./cleanup.ts";
import { loadAverage, median } from "./measure.ts";
import { buildMessage, SENDER_DOMAIN } from "./message.ts";
import { ACCOUNT, startPostroom, verifiedSendingDomain } from "./postroom.ts";

const TARGET_RATIO = 3;

type Side = "batch" | "single";

function options() {
  const values = parseOptions("bun run bench:batch [--messages N] [--clients C] [--rounds R]", {
    messages: { type: "string" },
    clients: { type: "string" },
    rounds: { type: "string" },
  });
  return {
    messages: intOption(values.messages, "BENCH_MESSAGES", 500, 1),
    clients: intOption(values.clients, "BENCH_CLIENTS", 8, 1),
    rounds: intOption(values.rounds, "BENCH_ROUNDS", 6, 2),
  };
}

/** batch, single, single, batch, batch, single, ...: each side as often first as second. */
const orderOf = (rounds: number): Side[] =>
  Array.from({ length: rounds }, (_, i) => (Math.floor((i + 1) / 2) % 2 === 0 ? "batch" : "single"));

async function batchRound(httpPort: number, body: string, count: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.outboundId}/messages/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT.smtpKey}`, "content-type": "application/json" },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`the batch answered ${res.status}: ${text.slice(0, 300)}`);
  const results = (JSON.parse(text) as { results: { status: number }[] }).results;
  const accepted = results.filter((r) => r.status === 202).length;
  if (accepted !== count) throw new Error(`the batch accepted ${accepted} of ${count}: ${text.slice(0, 300)}`);
}

async function main(): Promise<void> {
  const { messages, clients, rounds } = options();
  const cleanup = new Cleanup();
  try {
    const work = cleanup.tempDir("postroom-bench-batch-");
    const dns = await TestDnsServer.start();
    cleanup.add(() => dns.stop());
    const { child, httpPort } = await startPostroom(
      work,
      dns.address,
      {
        // The sending IP its SPF record names (verification needs it); nothing is delivered (test_mode).
        relay: `batch_max_messages = ${Math.max(500, messages)}`,
      },
      [],
    );
    cleanup.add(() => child.stop());
    child.ready();
    await verifiedSendingDomain(httpPort, dns, SENDER_DOMAIN);
    const content = await apiContent(buildMessage("rcpt@dest-1.bench.test"));
    const bodyOf = (round: number, i: number) => ({
      from: FROM_HEADER,
      to: `r${round}-${i}@dest-1.bench.test`,
      ...content,
      test_mode: true,
    });
    const order = orderOf(rounds);
    console.log(
      `batch benchmark: ${messages} messages of ~4 KB (bench:outbound's newsletter, test_mode), as one POST /messages/batch or as ${messages} E11 calls from ${clients} clients; ${rounds} rounds in the order ${order.join(", ")}, after a warm-up round of each`,
    );
    console.log(`machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}; load average ${loadAverage()}`);
    const figures: Record<Side, { perSecond: number; cpuUs: number }[]> = { batch: [], single: [] };
    for (const [round, side] of [["warm-up", "batch"], ["warm-up", "single"], ...order.map((s, i) => [i + 1, s])] as [
      number | "warm-up",
      Side,
    ][]) {
      const tag = round === "warm-up" ? `w${side}` : round;
      const bodies = Array.from({ length: messages }, (_, i) => bodyOf(tag as never, i));
      const batchBody = JSON.stringify({ messages: bodies });
      const singleBodies = bodies.map((b) => JSON.stringify(b));
      Bun.gc(true);
      const cpu0 = processCpuMs(child.proc.pid);
      const t0 = performance.now();
      if (side === "batch") await batchRound(httpPort, batchBody, messages);
      else {
        const { failed, failures } = await sendAll(httpPort, singleBodies, clients);
        if (failed > 0) throw new Error(`${failed} single sends failed: ${failures.join(" | ")}`);
      }
      const wallMs = performance.now() - t0;
      const cpuUs = ((processCpuMs(child.proc.pid) - cpu0) * 1000) / messages;
      const perSecond = messages / (wallMs / 1000);
      if (round !== "warm-up") figures[side].push({ perSecond, cpuUs });
      console.log(
        `round ${String(round).padEnd(7)} ${side.padEnd(6)} ${perSecond.toFixed(0).padStart(6)} accepted/s   wall ${wallMs.toFixed(0).padStart(5)} ms   Postroom CPU ${cpuUs.toFixed(0).padStart(5)} µs/msg`,
      );
    }
    const med = (side: Side, key: "perSecond" | "cpuUs") => median(figures[side].map((f) => f[key]));
    const ratio = med("batch", "perSecond") / med("single", "perSecond");
    console.log(
      `median accepted/s: batch ${med("batch", "perSecond").toFixed(0)}, single E11 calls ${med("single", "perSecond").toFixed(0)}`,
    );
    console.log(
      `median Postroom CPU µs per message: batch ${med("batch", "cpuUs").toFixed(0)}, single ${med("single", "cpuUs").toFixed(0)}`,
    );
    console.log(
      `ratio: ${ratio.toFixed(2)} (batch / single, accepted messages per second; target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? "met" : "NOT met"}); load average ${loadAverage()}`,
    );
    if (ratio < TARGET_RATIO) process.exitCode = 1;
  } finally {
    await cleanup.run();
  }
}

await main();
