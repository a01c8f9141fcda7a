// One measured run of bench:webhooks (bench/webhooks.ts says what it measures): send the
// bodies through the API, wait until Postroom logged every delivery and the receiver has
// every event, check everything, and give the figures.
import { sendAll } from "./api-client.ts";
import type { Child } from "./child.ts";
import type { DeliveryTally } from "./delivery-tally.ts";
import { machineBusyMs, runTimeoutMs, until } from "./measure.ts";
import type { SmtpSinkProcess } from "./smtp-sink.ts";
import { EVENTS_PER_MESSAGE, type Receiver } from "./webhook-receiver.ts";

/** What every run of bench:webhooks works with: Postroom, the sink, the tally of its log, the receiver. */
export interface WebhookBench {
  httpPort: number;
  postroom: Child;
  sink: SmtpSinkProcess;
  tally: DeliveryTally;
  receiver: Receiver;
  clients: number;
}

export interface RunContext extends WebhookBench {
  /** --hold: the receiver holds its first answer until every event is produced (at most 8 s). */
  hold: boolean;
  /** Ids of every message sent (202), all runs: events of any other message are a failure. */
  sent: Set<string>;
}

export interface RunResult {
  messages: number;
  events: number;
  acceptedPerS: number;
  /** Events recorded per second: 3N over first send → N-th delivery logged. */
  producedPerS: number;
  /** Events received per second over the same window as producedPerS. */
  deliveredInWindowPerS: number;
  /** 3N over first send → the receiver has all 3N. */
  deliveredPerS: number;
  /** Receiver's share of the events by the time the last one was produced. */
  receivedAtProducedEnd: number;
  lagAfterLastAcceptMs: number;
  lagAfterLastProducedMs: number;
  /** Largest gap between produced (estimated: 202s + 2 × deliveries logged) and received, sampled every 20 ms. */
  maxBacklog: number;
  /** --hold: events received after the release, per second until the last one. */
  drainPerS: number;
  posts: number;
  meanBatch: number;
  maxBatch: number;
  fullBatches: number;
  acceptMs: number;
  producedMs: number;
  receivedMs: number;
  serverCpuUsPerEvent: number;
  benchCpuUsPerEvent: number;
  machineCpuUsPerEvent: number;
}

/** After the receiver has everything, wait this long for anything extra: longer than the dispatcher's 1 s idle poll. */
const SETTLE_MS = 1500;

/** Sends `bodies` (one message each), waits for every event, checks the run; its figures. */
export async function measureRun(ctx: RunContext, bodies: string[]): Promise<RunResult> {
  const count = bodies.length;
  const runIds: string[] = [];
  const sink0 = ctx.sink.count;
  const tally0 = {
    delivered: ctx.tally.delivered,
    other: ctx.tally.other.length,
    errors: ctx.tally.errors.length,
    warnings: ctx.tally.webhookWarnings.length,
  };
  const ev0 = ctx.receiver.events;
  const posts0 = ctx.receiver.posts.length;
  const problems0 = ctx.receiver.problems.length;
  const target = ev0 + EVENTS_PER_MESSAGE * count;
  let accepted = 0;
  const cpu0 = { server: ctx.postroom.cpuMs(), bench: process.cpuUsage(), machine: machineBusyMs() };
  // Backlog sampling: produced so far (registrations committed before each 202, plus a
  // dispatch and a delivery per delivery logged) against events received.
  let maxBacklog = 0;
  const sampler = setInterval(() => {
    const produced = accepted + 2 * (ctx.tally.delivered - tally0.delivered);
    maxBacklog = Math.max(maxBacklog, produced - (ctx.receiver.events - ev0));
  }, 20);
  let release = () => {};
  let released: { atMs: number; events: number } | null = null;
  if (ctx.hold) {
    ctx.receiver.gate = new Promise<void>((r) => {
      release = () => {
        if (released) return;
        released = { atMs: performance.now(), events: ctx.receiver.events };
        ctx.receiver.gate = null;
        r();
      };
    });
  }
  const holdTimer = ctx.hold ? setTimeout(() => release(), 8000) : null;
  const t0 = performance.now();
  const received = ctx.receiver.reach(target, runTimeoutMs(count));
  received.catch(() => undefined);
  // (The registration event is committed before the 202, so the receiver may see it
  // before we see the 202: events of messages we did not send are looked for at the
  // end of the run.)
  const { failed, failures } = await sendAll(ctx.httpPort, bodies, ctx.clients, (id) => {
    runIds.push(id);
    accepted++;
  });
  const tAccepted = performance.now();
  const fail = (text: string): never => {
    clearInterval(sampler);
    if (holdTimer) clearTimeout(holdTimer);
    release();
    throw new Error(text);
  };
  if (failed > 0) fail(`${failed} of ${count} sends did not get 202; first answers:\n  ${failures.join("\n  ")}`);
  const produced = await until(
    () => ctx.tally.delivered - tally0.delivered >= count || ctx.receiver.problems.length > problems0,
    runTimeoutMs(count),
  );
  if (ctx.receiver.problems.length > problems0)
    fail(`the receiver refused a webhook POST:\n  ${ctx.receiver.problems.slice(problems0).join("\n  ")}`);
  if (!produced)
    fail(
      `Postroom logged ${ctx.tally.delivered - tally0.delivered} deliveries of ${count} within ${runTimeoutMs(count) / 1000} s; other outcomes:\n  ${ctx.tally.other.slice(tally0.other, tally0.other + 5).join("\n  ")}`,
    );
  const tProduced = ctx.tally.deliveredAt[tally0.delivered + count - 1]!;
  if (holdTimer) clearTimeout(holdTimer);
  release();
  // Events the receiver had when the last one was produced.
  const receivedByProducedEnd = ctx.receiver.posts.slice(posts0).reduce((n, p) => (p.atMs <= tProduced ? n + p.events : n), 0);
  let tReceived: number;
  try {
    tReceived = await Promise.race([
      received,
      until(() => ctx.receiver.problems.length > problems0, runTimeoutMs(count)).then(() => {
        throw new Error("the receiver refused a webhook POST");
      }),
    ]);
  } catch (err) {
    const missing = runIds.filter((id) => (ctx.receiver.stage.get(id) ?? 0) < EVENTS_PER_MESSAGE);
    const example = missing.slice(0, 5).map((id) => `${id}: ${ctx.receiver.stage.get(id) ?? 0} of 3 events`);
    return fail(
      `${(err as Error).message}; ${missing.length} messages lack events (${example.join(", ")}); problems:\n  ${ctx.receiver.problems.slice(problems0).join("\n  ")}\nPostroom webhook warnings:\n  ${ctx.tally.webhookWarnings.slice(tally0.warnings, tally0.warnings + 5).join("\n  ")}`,
    );
  }
  clearInterval(sampler);
  const bench = process.cpuUsage(cpu0.bench);
  const cpu = {
    server: ctx.postroom.cpuMs() - cpu0.server,
    bench: (bench.user + bench.system) / 1000,
    machine: machineBusyMs() - cpu0.machine,
  };
  await Bun.sleep(SETTLE_MS);

  // Everything checked: exactly 3N events, each message's three, nothing refused or
  // logged wrong, exactly N deliveries at the sink.
  const events = ctx.receiver.events - ev0;
  const incomplete = runIds.filter((id) => ctx.receiver.stage.get(id) !== EVENTS_PER_MESSAGE);
  for (const id of runIds) ctx.sent.add(id);
  const strangers = [...ctx.receiver.stage.keys()].filter((id) => !ctx.sent.has(id));
  if (strangers.length > 0)
    fail(`the receiver got events of ${strangers.length} messages this benchmark did not send, e.g. ${strangers.slice(0, 3).join(", ")}`);
  const other = ctx.tally.other.slice(tally0.other);
  const errors = ctx.tally.errors.slice(tally0.errors);
  const warnings = ctx.tally.webhookWarnings.slice(tally0.warnings);
  const problems = ctx.receiver.problems.slice(problems0);
  if (events !== EVENTS_PER_MESSAGE * count || incomplete.length > 0 || problems.length > 0 || ctx.receiver.repostedBatches > 0) {
    fail(
      `the receiver got ${events} events for ${count} messages (expected ${EVENTS_PER_MESSAGE * count}), ${incomplete.length} messages without all three, ${ctx.receiver.repostedBatches} batches posted again; problems:\n  ${problems.join("\n  ")}`,
    );
  }
  if (
    ctx.sink.count - sink0 !== count ||
    ctx.tally.delivered - tally0.delivered !== count ||
    other.length + errors.length + warnings.length > 0
  ) {
    fail(
      `the sink received ${ctx.sink.count - sink0} of ${count}; Postroom logged ${ctx.tally.delivered - tally0.delivered} deliveries, ${other.length} other outcomes, ${errors.length} errors, ${warnings.length} webhook warnings:\n  ${[...other, ...errors, ...warnings].slice(0, 5).join("\n  ")}`,
    );
  }
  const posts = ctx.receiver.posts.slice(posts0);
  const total = EVENTS_PER_MESSAGE * count;
  return {
    messages: count,
    events: total,
    acceptedPerS: (count * 1000) / (tAccepted - t0),
    producedPerS: (total * 1000) / (tProduced - t0),
    deliveredInWindowPerS: (receivedByProducedEnd * 1000) / (tProduced - t0),
    deliveredPerS: (total * 1000) / (tReceived - t0),
    receivedAtProducedEnd: receivedByProducedEnd / total,
    lagAfterLastAcceptMs: tReceived - tAccepted,
    lagAfterLastProducedMs: tReceived - tProduced,
    maxBacklog,
    drainPerS: released
      ? ((target - (released as { events: number }).events) * 1000) / (tReceived - (released as { atMs: number }).atMs)
      : 0,
    posts: posts.length,
    meanBatch: total / posts.length,
    maxBatch: Math.max(...posts.map((p) => p.events)),
    fullBatches: posts.filter((p) => p.events >= 100).length,
    acceptMs: tAccepted - t0,
    producedMs: tProduced - t0,
    receivedMs: tReceived - t0,
    serverCpuUsPerEvent: (cpu.server * 1000) / total,
    benchCpuUsPerEvent: (cpu.bench * 1000) / total,
    machineCpuUsPerEvent: (cpu.machine * 1000) / total,
  };
}
