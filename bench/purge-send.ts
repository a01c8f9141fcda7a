// bench:purge's mail: messages over the connections at a given rate, the latency of each
// (MAIL FROM to the 250 after DATA), and the lines that describe a slice of them.
import { MAIL_FROM, type BenchMessage } from "./message.ts";
import type { SmtpConnection } from "./smtp-client.ts";

export interface Sample {
  /** When the message's MAIL FROM was written (performance.now()). */
  atMs: number;
  ms: number;
}

let nextMessage = 0;

/**
 * Sends over every connection until `count` messages have gone (or `stop()` says so), at
 * `rate` msg/s in all (0: each connection back to back); the latency of each.
 */
export async function sendPhase(
  conns: SmtpConnection[],
  rcpt: string,
  message: BenchMessage,
  rate: number,
  count: number,
  stop: () => boolean = () => false,
): Promise<Sample[]> {
  const samples: Sample[] = [];
  const failures: string[] = [];
  let started = 0;
  const gapMs = rate > 0 ? (conns.length * 1000) / rate : 0;
  const t0 = performance.now();
  await Promise.all(
    conns.map(async (conn, i) => {
      // Each connection on its own schedule, the connections evenly staggered.
      let dueMs = t0 + (i * gapMs) / conns.length;
      while (started < count && !stop()) {
        const waitMs = dueMs - performance.now();
        if (waitMs > 0) await Bun.sleep(waitMs);
        if (stop()) break;
        started++;
        const atMs = performance.now();
        const r = await conn.send(MAIL_FROM, rcpt, message.data(nextMessage++));
        samples.push({ atMs, ms: performance.now() - atMs });
        if (r.code !== 250 && failures.length < 5) failures.push(`${r.code} ${r.text}`);
        dueMs += gapMs;
      }
    }),
  );
  if (failures.length > 0) throw new Error(`messages did not get 250; first replies:\n  ${failures.join("\n  ")}`);
  return samples;
}

export const percentile = (samples: readonly Sample[], p: number): number => {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};
const spanOf = (samples: readonly Sample[]) =>
  Math.max(1, Math.max(...samples.map((s) => s.atMs + s.ms)) - Math.min(...samples.map((s) => s.atMs)));
export const describe = (label: string, samples: readonly Sample[], spanMs = spanOf(samples)) =>
  `  ${label.padEnd(20)} ${String(samples.length).padStart(6)} messages  p50 ${percentile(samples, 50).toFixed(2).padStart(6)} ms  p99 ${percentile(samples, 99).toFixed(2).padStart(6)} ms  max ${percentile(samples, 100).toFixed(1).padStart(6)} ms  (${((samples.length * 1000) / spanMs).toFixed(0)} msg/s)`;
/** Postroom's CPU (all threads, and its main thread alone) over a phase, as shares of one core. */
export const cpuShare = (before: { all: number; main: number; atMs: number }, after: { all: number; main: number; atMs: number }) =>
  `postroom CPU ${((100 * (after.all - before.all)) / (after.atMs - before.atMs)).toFixed(0)}% (main thread ${((100 * (after.main - before.main)) / (after.atMs - before.atMs)).toFixed(0)}%)`;
