// bench:inbound's runs: one run (C connections sending their share of N, every reply
// checked), the start-up check, the warm-up until each server's JIT is quiet, then the
// rounds, bare then Postroom (then the base); a line per run, every run checked.
import type { Child } from "./child.ts";
import type { InboundOptions } from "./inbound-options.ts";
import type { InboundBench, InboundSide } from "./inbound-setup.ts";
import type { SignedMessage } from "./signed-senders.ts";
import { SmtpConnection } from "./smtp-client.ts";

/** Warm-up ends after a batch in which the JIT threads used at most this share of the server's CPU... */
export const JIT_QUIET_SHARE = 0.05;
/** ...or after this many batches. */
export const MAX_WARMUP_BATCHES = 20;

interface RunResult {
  count: number;
  ms: number;
  rate: number;
  serverCpuMs: number;
  /** The server's main thread (its event loop, which one core bounds): near ms means saturated. */
  mainThreadCpuMs: number;
  /** The server's JIT compiler threads. */
  jitCpuMs: number;
  clientCpuMs: number;
}

/** Sends the `count` messages `next` gives over `connections` connections and checks every reply. */
async function run(
  label: string,
  port: number,
  rcpt: string,
  count: number,
  connections: number,
  server: Child,
  next: () => SignedMessage,
): Promise<RunResult> {
  const conns = await Promise.all(
    Array.from({ length: connections }, () => SmtpConnection.open("127.0.0.1", port, "client.sender.bench.test")),
  );
  const share = (i: number) => Math.floor(count / connections) + (i < count % connections ? 1 : 0);
  const failures: string[] = [];
  let failed = 0;
  const cpu0 = server.cpuMs();
  const main0 = server.mainThreadCpuMs();
  const jit0 = server.jitCpuMs();
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    conns.map(async (conn, i) => {
      for (let k = share(i); k > 0; k--) {
        const m = next();
        const r = await conn.send(m.mailFrom, rcpt, m.data);
        if (r.code !== 250) {
          failed++;
          if (failures.length < 5) failures.push(`${r.code} ${r.text}`);
        }
      }
    }),
  );
  const ms = performance.now() - t0;
  const clientUsage = process.cpuUsage(client0);
  const serverCpuMs = server.cpuMs() - cpu0;
  const mainThreadCpuMs = server.mainThreadCpuMs() - main0;
  const jitCpuMs = server.jitCpuMs() - jit0;
  await Promise.all(conns.map((c) => c.quit()));
  if (failed > 0) throw new Error(`${label}: ${failed} of ${count} messages did not get 250; first replies:\n  ${failures.join("\n  ")}`);
  return {
    count,
    ms,
    rate: (count * 1000) / ms,
    serverCpuMs,
    mainThreadCpuMs,
    jitCpuMs,
    clientCpuMs: (clientUsage.user + clientUsage.system) / 1000,
  };
}

/**
 * Postroom's payload (json+n) must show SPF, DKIM and DMARC "pass" for a message of the set:
 * anything else means the DNS records or the signatures are not what the benchmark means
 * to measure (a misconfigured run would time other work: a temperror, say, is cheap).
 */
function checkAuthentic(payload: string, what: string): void {
  type Result = { result?: string };
  const envelope = (JSON.parse(payload) as { envelope?: { spf?: Result; dkim?: Result; dmarc?: Result } }).envelope;
  const results = { spf: envelope?.spf, dkim: envelope?.dkim, dmarc: envelope?.dmarc };
  if (Object.values(results).some((r) => r?.result !== "pass"))
    throw new Error(`${what} was not found authentic (SPF, DKIM and DMARC must all pass): ${JSON.stringify(results)}`);
}

/** Before anything is timed: the first message through each server, and Postroom must find it authentic. */
export async function startUpCheck(opts: InboundOptions, bench: InboundBench): Promise<void> {
  const { target, sides, postrooms } = bench;
  for (const s of [sides.bare, ...postrooms]) {
    const counter = target.counter(s.path);
    const before = counter.posts;
    await run(`${s.label} (start-up check)`, s.port, s.rcpt, 1, 1, s.child, s.next);
    if (counter.posts - before !== 1)
      throw new Error(`${s.label}: the target received ${counter.posts - before} POSTs for the start-up check's message`);
    if (s !== sides.bare || opts.bareAuth) checkAuthentic(counter.last, `${s.label}: the start-up check's message`);
  }
}

export interface RoundsResult {
  /** Messages each server got in the warm-up batches. */
  warmedUp: { bare: number; postroom: number; base: number };
  /** The DNS queries of the start-up check and the warm-up, by name; bench.dns then holds the timed runs' alone. */
  warmupQueries: Map<string, number>;
}

/** The warm-up, one server after the other, then the timed rounds; each side's figures go into its arrays. */
export async function runRounds(opts: InboundOptions, bench: InboundBench): Promise<RoundsResult> {
  const { dns, target, sides, baseSide } = bench;
  /** The JIT threads' share of the server's CPU in a run, in percent. */
  const jitShare = (r: RunResult) => (r.serverCpuMs > 0 ? (100 * r.jitCpuMs) / r.serverCpuMs : 0).toFixed(0);
  const measure = async (side: InboundSide, count: number, warm: boolean) => {
    const counter = target.counter(side.path);
    const before = counter.posts;
    const dns0 = dns.cpuMs();
    const r = await run(side.label, side.port, side.rcpt, count, opts.connections, side.child, side.next);
    const dnsCpu = dns0 === null ? "" : `, DNS server CPU ${(((dns.cpuMs()! - dns0) * 1000) / count).toFixed(0)} µs/msg`;
    const got = counter.posts - before;
    if (got !== count) throw new Error(`${side.label}: the target received ${got} POSTs for ${count} messages`);
    if (side !== sides.bare || opts.bareAuth) checkAuthentic(counter.last, `${side.label}: the last message of a run`);
    const tag = warm ? "warm-up " : "";
    console.log(
      `  ${tag}${side.label.padEnd(14)} ${r.rate.toFixed(0).padStart(5)} msg/s  (${count} in ${(r.ms / 1000).toFixed(2)} s; server CPU ${((r.serverCpuMs * 1000) / count).toFixed(0)} µs/msg, JIT ${jitShare(r)}% of it, main thread ${((100 * r.mainThreadCpuMs) / r.ms).toFixed(0)}% busy, client+target${dns0 === null ? "+DNS" : ""} CPU ${((r.clientCpuMs * 1000) / count).toFixed(0)} µs/msg${dnsCpu})`,
    );
    if (!warm) {
      side.rates.push(r.rate);
      side.cpu.push(r.serverCpuMs / count);
      side.client.push(r.clientCpuMs / count);
    }
    return r;
  };

  // Warm-up, one server after the other, until each one's compiler is nearly idle.
  const warmedUp = { bare: 0, postroom: 0, base: 0 };
  if (opts.warmup > 0) {
    for (const key of ["bare", "postroom", "base"] as const) {
      const side = key === "base" ? baseSide : sides[key];
      for (let batch = 1; side && batch <= MAX_WARMUP_BATCHES; batch++) {
        const r = await measure(side, opts.warmup, true);
        warmedUp[key] += opts.warmup;
        if (r.jitCpuMs <= JIT_QUIET_SHARE * r.serverCpuMs) break;
      }
    }
  }
  const warmupQueries = dns.takeQueries();
  for (let round = 0; round < opts.rounds; round++) {
    await measure(sides.bare, opts.messages, false);
    await measure(sides.postroom, opts.messages, false);
    if (baseSide) await measure(baseSide, opts.messages, false);
  }
  return { warmedUp, warmupQueries };
}
