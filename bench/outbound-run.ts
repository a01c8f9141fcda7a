// One measured run of each side of bench:outbound (bench/outbound.ts says what it
// measures): each side fed by this process's SMTP feed (bench/smtp-feed.ts), or (--feed
// http) Postroom through its API and Postfix through smtp-source; each waits until the
// sink has every message, checks the sender's own log, and gives the figures.
import { readFileSync } from "node:fs";
import type { Child } from "./child.ts";
import type { DeliveryTally } from "./delivery-tally.ts";
import { machineBusyMs, runTimeoutMs, until } from "./measure.ts";
import { MAIL_FROM } from "./message.ts";
import type { PrivatePostfix } from "./postfix.ts";
import type { SmtpSinkProcess } from "./smtp-sink.ts";

/**
 * How one side's CPU time is read: `enter()` puts every process it has now into its own
 * cgroup (processes it forks later are born there), `ms()` is the CPU time of all of them
 * since (bench/cgroup.ts); without a cgroup, the sum over its processes from /proc.
 */
export interface SideCpu {
  enter(): void;
  ms(): number;
}

/**
 * A run's load from this process (its CPU is counted as the client's): sends every
 * message it was prepared with (before the clock starts) and says how many were refused.
 */
export type Feed = () => Promise<{ failed: number; failures: string[] }>;

export interface PostroomSide {
  cpu: SideCpu;
  postroom: Child;
  sink: SmtpSinkProcess;
  tally: DeliveryTally;
  clients: number;
}

export interface PostfixSide {
  cpu: SideCpu;
  postfix: PrivatePostfix;
  sink: SmtpSinkProcess;
  clients: number;
  /** The file smtp-source sends (-F). */
  messageFile: string;
  /**
   * One recipient per destination domain. smtp-source sends to one recipient (-N makes
   * each message's distinct by a number in front), so D domains take D smtp-source
   * processes at once, each with its share of the messages and of the sessions (at least one).
   */
  rcpts: string[];
}

/** How `count` messages and `clients` sessions are shared by one smtp-source per recipient: as evenly as they go, at least one session each. */
export function sourceShares(count: number, clients: number, rcpts: number): { messages: number; sessions: number }[] {
  return Array.from({ length: rcpts }, (_, i) => ({
    messages: Math.floor(count / rcpts) + (i < count % rcpts ? 1 : 0),
    sessions: Math.max(1, Math.floor(clients / rcpts) + (i < clients % rcpts ? 1 : 0)),
  })).filter((s) => s.messages > 0);
}

export interface RunResult {
  accepted: number;
  delivered: number;
  acceptMs: number;
  deliverMs: number;
  serverCpuUs: number;
  clientCpuUs: number;
  sinkCpuUs: number;
  machineCpuUs: number;
  /** Postroom only: CPU µs per message of its threads, by name (main, Worker: signing and others, JITWorker...). */
  threadsUs?: Map<string, number>;
  /**
   * Postroom only: how its main thread spent the run (first send to last delivery), in % of
   * that time, from /proc/<pid>/task/<pid>/schedstat: running, runnable but waiting for a
   * core (the machine's other threads had it), and neither (idle, or blocked in I/O).
   */
  mainThread?: { runPct: number; waitPct: number; offPct: number };
}

/** The main thread's time on a core and waiting for one (ns, /proc schedstat), or null. */
function schedstat(pid: number): { runNs: number; waitNs: number } | null {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ");
    return { runNs: Number(run), waitNs: Number(wait) };
  } catch {
    return null;
  }
}

/** After the sink has its N, wait this long for anything extra (duplicates) before checking the count. */
const SETTLE_MS = 500;

/** Postroom: `count` messages sent by `feed` (its API or its submission port), then wait for the sink to have them all. */
export async function runPostroom(ctx: PostroomSide, count: number, feed: Feed): Promise<RunResult> {
  const { sink, tally } = ctx;
  const sink0 = sink.count;
  const tally0 = { delivered: tally.delivered, other: tally.other.length, errors: tally.errors.length };
  ctx.cpu.enter();
  const threads0 = ctx.postroom.threadCpuMs();
  const sched0 = schedstat(ctx.postroom.proc.pid);
  const cpu0 = { server: ctx.cpu.ms(), client: process.cpuUsage(), sink: sink.cpuMs(), machine: machineBusyMs() };
  const t0 = performance.now();
  const delivered = sink.reach(sink0 + count, runTimeoutMs(count), "postroom");
  delivered.catch(() => undefined);
  const { failed, failures } = await feed();
  const tAccepted = performance.now();
  if (failed > 0) throw new Error(`postroom: ${failed} of ${count} sends were not accepted; first answers:\n  ${failures.join("\n  ")}`);
  const tDelivered = await delivered.catch((err: Error) => {
    throw new Error(
      `${err.message}; Postroom logged ${tally.delivered - tally0.delivered} deliveries, other outcomes:\n  ${tally.other.slice(tally0.other, tally0.other + 5).join("\n  ")}\nerrors:\n  ${tally.errors.slice(tally0.errors, tally0.errors + 5).join("\n  ")}`,
    );
  });
  const sched1 = schedstat(ctx.postroom.proc.pid);
  const wallNs = (tDelivered - t0) * 1e6;
  const mainThread =
    sched0 && sched1
      ? {
          runPct: (100 * (sched1.runNs - sched0.runNs)) / wallNs,
          waitPct: (100 * (sched1.waitNs - sched0.waitNs)) / wallNs,
          offPct: 100 - (100 * (sched1.runNs - sched0.runNs + sched1.waitNs - sched0.waitNs)) / wallNs,
        }
      : undefined;
  const client = process.cpuUsage(cpu0.client);
  const cpu = {
    server: 0,
    client: (client.user + client.system) / 1000,
    sink: sink.cpuMs() - cpu0.sink,
    machine: machineBusyMs() - cpu0.machine,
  };
  // Postroom's own record: N delivery lines (each written just before the group commit of its outcome).
  await until(() => tally.delivered - tally0.delivered >= count, 10_000);
  await Bun.sleep(SETTLE_MS);
  // The side's CPU once it has recorded every outcome and settled: its bookkeeping after the last delivery counts too.
  cpu.server = ctx.cpu.ms() - cpu0.server;
  const threadsUs = new Map([...ctx.postroom.threadCpuMs()].map(([name, ms]) => [name, ((ms - (threads0.get(name) ?? 0)) * 1000) / count]));
  const logged = tally.delivered - tally0.delivered;
  const other = tally.other.slice(tally0.other);
  const errors = tally.errors.slice(tally0.errors);
  if (sink.count - sink0 !== count || logged !== count || other.length > 0 || errors.length > 0) {
    throw new Error(
      `postroom: ${count} sends accepted, but the sink received ${sink.count - sink0} and Postroom logged ${logged} deliveries, ${other.length} other outcomes, ${errors.length} errors:\n  ${[...other, ...errors].slice(0, 5).join("\n  ")}`,
    );
  }
  return { ...result(count, t0, tAccepted, tDelivered, cpu), threadsUs, mainThread };
}

/** Postfix: `feed` (this process's SMTP feed), or else smtp-source, sends `count` over C sessions, then wait for the sink to have them all. */
export async function runPostfix(ctx: PostfixSide, count: number, feed?: Feed): Promise<RunResult> {
  const { postfix, sink } = ctx;
  const sink0 = sink.count;
  const log0 = postfix.logCounts();
  const shares = sourceShares(count, ctx.clients, ctx.rcpts.length);
  const cmd = (share: { messages: number; sessions: number }, rcpt: string) => [
    "smtp-source",
    "-4",
    "-s",
    String(share.sessions),
    "-m",
    String(share.messages),
    "-d",
    "-N",
    "-F",
    ctx.messageFile,
    "-M",
    "client.sender.bench.test",
    "-f",
    MAIL_FROM,
    "-t",
    rcpt,
    `127.0.0.1:${postfix.port}`,
  ];
  ctx.cpu.enter();
  const cpu0 = { server: ctx.cpu.ms(), client: process.cpuUsage(), sink: sink.cpuMs(), machine: machineBusyMs() };
  const t0 = performance.now();
  const delivered = sink.reach(sink0 + count, runTimeoutMs(count), "postfix");
  delivered.catch(() => undefined);
  const fed = feed ? await feed() : null;
  if (fed && fed.failed > 0)
    throw new Error(`postfix: ${fed.failed} of ${count} sends were not accepted; first answers:\n  ${fed.failures.join("\n  ")}`);
  const sources = (fed ? [] : shares).map((share, i) =>
    Bun.spawn(cmd(share, ctx.rcpts[i]!), {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, PATH: `${process.env.PATH ?? ""}:/usr/sbin` },
    }),
  );
  const codes = await Promise.all(sources.map((source) => source.exited));
  const tAccepted = performance.now();
  let sourceCpuMs = 0;
  for (const [i, source] of sources.entries()) {
    const out = (await new Response(source.stdout).text()) + (await new Response(source.stderr).text());
    if (codes[i] !== 0 || out.trim() !== "")
      throw new Error(`postfix: smtp-source to ${ctx.rcpts[i]} exited with ${codes[i]} (it stops at the first refusal):\n${out}`);
    const usage = source.resourceUsage();
    sourceCpuMs += usage ? (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1000 : 0;
  }
  const tDelivered = await delivered.catch((err: Error) => {
    const log = postfix.logCounts();
    throw new Error(
      `${err.message}; Postfix logged ${log.sent - log0.sent} sent, ${log.deferred - log0.deferred} deferred, ${log.bounced - log0.bounced} bounced (log: ${postfix.logFile})`,
    );
  });
  // The client: smtp-source's processes, or this process while it fed and waited (as Postroom's is counted).
  const feedCpu = process.cpuUsage(cpu0.client);
  const cpu = {
    server: 0,
    client: fed ? (feedCpu.user + feedCpu.system) / 1000 : sourceCpuMs,
    sink: sink.cpuMs() - cpu0.sink,
    machine: machineBusyMs() - cpu0.machine,
  };
  // Postfix's own record: N status=sent lines (postlogd writes them a moment later).
  await until(() => postfix.logCounts().sent - log0.sent >= count, 10_000);
  await Bun.sleep(SETTLE_MS);
  cpu.server = ctx.cpu.ms() - cpu0.server;
  const log = postfix.logCounts();
  const d = {
    sent: log.sent - log0.sent,
    deferred: log.deferred - log0.deferred,
    bounced: log.bounced - log0.bounced,
    rejected: log.rejected - log0.rejected,
  };
  if (sink.count - sink0 !== count || d.sent !== count || d.deferred + d.bounced + d.rejected > 0) {
    throw new Error(
      `postfix: smtp-source sent ${count}, but the sink received ${sink.count - sink0} and Postfix logged ${JSON.stringify(d)} (log: ${postfix.logFile})`,
    );
  }
  return result(count, t0, tAccepted, tDelivered, cpu);
}

function result(
  count: number,
  t0: number,
  tAccepted: number,
  tDelivered: number,
  cpu: { server: number; client: number; sink: number; machine: number },
): RunResult {
  return {
    accepted: (count * 1000) / (tAccepted - t0),
    delivered: (count * 1000) / (tDelivered - t0),
    acceptMs: tAccepted - t0,
    deliverMs: tDelivered - t0,
    serverCpuUs: (cpu.server * 1000) / count,
    clientCpuUs: (cpu.client * 1000) / count,
    sinkCpuUs: (cpu.sink * 1000) / count,
    machineCpuUs: (cpu.machine * 1000) / count,
  };
}
