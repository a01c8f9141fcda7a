// `bun run bench:webhooks --receiver-down`: does Postroom keep sending at the same rate
// while its webhook receiver is down? The receiver answers 503 to every POST for the
// whole run, so every event of the run stays pending in the outbox (kept for
// webhooks.max_age, 3 days) and the dispatcher posts its first batch again on its backoff
// schedule (about 10 s, 1 min, 5 min...): the backlog grows by 3 events per message.
// Before commit 9e41647 each wake-up of the dispatcher scanned that backlog, and the send
// rate fell as it grew (bench/RESULTS.md, "Bug: dispatcher work per event grows with the
// backlog"); this run shows whether it stays flat. Like the rest of bench:webhooks it
// compares Postroom with itself (its send rate early and late in the outage), not with
// another system.
//
// The run is cut into time slices (--slice, 10 s). Each gives the API's 202s per second,
// the sink's deliveries per second, the events pending at its end (Postroom's own count,
// postroom_webhook_events_pending on /metrics: one scrape per slice), Postroom's CPU (all
// threads, and its main thread, where the dispatcher runs next to the API and the queue)
// and the load average. A slice also ends at the last 202, so the send phase's last slice is
// shorter, and the deliveries still queued then get slices of their own ("tail").
//
// Checked, besides what every run checks at the sink and in the log (every send got 202,
// exactly N at the sink, N deliveries logged and no other outcome or error; the only
// webhook warnings are the dispatcher's "will retry" after a 503): the receiver took no
// event, every POST it refused was signed right and was the same batch (one batch in
// flight per outbound account, posted again until acknowledged), and at the end exactly
// 3N more events are pending than before the run (none lost, expired or dropped).
import { sendAll } from "./api-client.ts";
import { loadAverage, machineBusyMs, runTimeoutMs, until } from "./measure.ts";
import { readMetric } from "./postroom.ts";
import { EVENTS_PER_MESSAGE } from "./webhook-receiver.ts";
import type { WebhookBench } from "./webhooks-run.ts";

const PENDING_METRIC = "postroom_webhook_events_pending";
/** The dispatcher's log line for a POST that failed (src/events/dispatcher.ts); with status 503 it is this run's expected warning. */
const RETRY_WARNING = '"msg":"webhook post failed; will retry"';
/** How long the last events may take to be committed after the N-th delivery line (one group commit, normally ~1 ms). */
const PENDING_SETTLE_MS = 5000;

export interface OutageSetup extends WebhookBench {
  sliceMs: number;
}

interface Slice {
  /** "send" until the last 202, "tail" while deliveries catch up after it. */
  phase: "send" | "tail";
  /** ms after the first send. */
  fromMs: number;
  toMs: number;
  sent: number;
  sunk: number;
  postroomCpuMs: number;
  mainThreadCpuMs: number;
  /** All cores' busy time: well above Postroom's plus ours means someone else was busy. */
  machineBusyMs: number;
  /** Events pending when the slice ended (read just after). */
  pending: number;
  load1min: string;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
const perS = (n: number, ms: number) => (ms > 0 ? (n * 1000) / ms : 0);
const COLUMNS = [
  "slice",
  "seconds",
  "sent 202/s",
  "sink msg/s",
  "pending events",
  "postroom CPU",
  "main thread",
  "machine CPU",
  "load 1 min",
];
const WIDTHS = [7, 15, 11, 11, 15, 13, 12, 12, 11];
const row = (cells: string[]) => cells.map((c, i) => c.padStart(WIDTHS[i]!)).join(" ");

/** Sends `bodies` with the receiver down, printing a line per slice as it ends and a summary; throws if a check fails. */
export async function runReceiverDown(setup: OutageSetup, bodies: string[]): Promise<void> {
  const { httpPort, postroom, sink, tally, receiver } = setup;
  const count = bodies.length;
  // The warm-up's events were acknowledged (its run checked that), so this is normally 0.
  const pending0 = await readMetric(httpPort, PENDING_METRIC);
  const sink0 = sink.count;
  const tally0 = {
    delivered: tally.delivered,
    other: tally.other.length,
    errors: tally.errors.length,
    warnings: tally.webhookWarnings.length,
  };
  const events0 = receiver.events;
  const refused0 = receiver.refused.length;
  const problems0 = receiver.problems.length;

  console.log(
    `receiver down: every POST answered 503 once verified; a slice every ${setup.sliceMs / 1000} s and at the last 202; "pending" = ${PENDING_METRIC} on /metrics just after each slice ends (${pending0} before the run); CPU in % of one core (the machine has ${navigator.hardwareConcurrency})`,
  );
  console.log(row(COLUMNS));
  const slices: Slice[] = [];
  let sent = 0;
  let phase: Slice["phase"] = "send";
  receiver.down = true;
  const t0 = performance.now();
  let mark = { atMs: t0, sent: 0, sunk: sink0, cpuMs: postroom.cpuMs(), mainMs: postroom.mainThreadCpuMs(), machineMs: machineBusyMs() };
  // Lines are printed in order as each slice's scrape answers; a failed scrape fails the run at the end.
  let printed = Promise.resolve();
  const closeSlice = () => {
    const now = {
      atMs: performance.now(),
      sent,
      sunk: sink.count,
      cpuMs: postroom.cpuMs(),
      mainMs: postroom.mainThreadCpuMs(),
      machineMs: machineBusyMs(),
    };
    const slice: Slice = {
      phase,
      fromMs: mark.atMs - t0,
      toMs: now.atMs - t0,
      sent: now.sent - mark.sent,
      sunk: now.sunk - mark.sunk,
      postroomCpuMs: now.cpuMs - mark.cpuMs,
      mainThreadCpuMs: now.mainMs - mark.mainMs,
      machineBusyMs: now.machineMs - mark.machineMs,
      pending: 0,
      load1min: loadAverage().split(" ")[0]!,
    };
    mark = now;
    const pending = readMetric(httpPort, PENDING_METRIC);
    printed = printed.then(async () => {
      slice.pending = await pending;
      slices.push(slice);
      const ms = slice.toMs - slice.fromMs;
      const cpu = (cpuMs: number) => `${((100 * cpuMs) / Math.max(ms, 1)).toFixed(0)}%`;
      console.log(
        row([
          slice.phase === "send" ? String(slices.length) : "tail",
          `${(slice.fromMs / 1000).toFixed(1)} → ${(slice.toMs / 1000).toFixed(1)}`,
          perS(slice.sent, ms).toFixed(0),
          perS(slice.sunk, ms).toFixed(0),
          slice.pending.toLocaleString("en-US"),
          cpu(slice.postroomCpuMs),
          cpu(slice.mainThreadCpuMs),
          cpu(slice.machineBusyMs),
          slice.load1min,
        ]),
      );
    });
    printed.catch(() => undefined);
  };

  let timer = setInterval(closeSlice, setup.sliceMs);
  const { failed, failures } = await sendAll(httpPort, bodies, setup.clients, () => sent++);
  const tSent = performance.now();
  clearInterval(timer);
  closeSlice();
  phase = "tail";
  timer = setInterval(closeSlice, setup.sliceMs);
  const delivered = await until(() => tally.delivered - tally0.delivered >= count && sink.count - sink0 >= count, runTimeoutMs(count));
  clearInterval(timer);
  const tDelivered = performance.now();
  // The tail's last slice (maybe empty) also gives the pending count at the end.
  closeSlice();
  await printed;

  // The checks: everything about the mail as in every run, nothing taken by the receiver.
  const fail = (text: string): never => {
    throw new Error(text);
  };
  if (failed > 0) fail(`${failed} of ${count} sends did not get 202; first answers:\n  ${failures.join("\n  ")}`);
  const other = tally.other.slice(tally0.other);
  const errors = tally.errors.slice(tally0.errors);
  const warnings = tally.webhookWarnings.slice(tally0.warnings);
  const unexpected = warnings.filter((w) => !(w.includes(RETRY_WARNING) && w.includes('"status":503')));
  if (
    !delivered ||
    sink.count - sink0 !== count ||
    tally.delivered - tally0.delivered !== count ||
    other.length + errors.length + unexpected.length > 0
  ) {
    fail(
      `the sink received ${sink.count - sink0} of ${count}; Postroom logged ${tally.delivered - tally0.delivered} deliveries, ${other.length} other outcomes, ${errors.length} errors, ${unexpected.length} webhook warnings other than a 503 retry:\n  ${[...other, ...errors, ...unexpected].slice(0, 5).join("\n  ")}`,
    );
  }
  const problems = receiver.problems.slice(problems0);
  if (receiver.events !== events0 || problems.length > 0)
    fail(`the receiver, though down, took ${receiver.events - events0} events or refused a POST as wrong:\n  ${problems.join("\n  ")}`);
  const refused = receiver.refused.slice(refused0);
  const batches = new Set(refused.map((p) => p.batchId));
  if (refused.length === 0 || batches.size !== 1)
    fail(
      `the receiver was posted ${refused.length} times, ${batches.size} different batches (expected one batch, posted again on each retry)`,
    );
  // Postroom logs an "outbound attempt" just before the group commit that records its
  // dispatch and delivery events (src/outbound/worker.ts settle), so the last few may land
  // a moment after the N-th line, later still when its event loop is busy: read again.
  let pending = slices.at(-1)!.pending;
  const settleEnd = performance.now() + PENDING_SETTLE_MS;
  while (pending - pending0 < EVENTS_PER_MESSAGE * count && performance.now() < settleEnd) {
    await Bun.sleep(100);
    pending = await readMetric(httpPort, PENDING_METRIC);
  }
  if (pending - pending0 !== EVENTS_PER_MESSAGE * count) {
    fail(
      `${pending - pending0} events more were pending ${PENDING_SETTLE_MS / 1000} s after the run than before it, not ${EVENTS_PER_MESSAGE}×${count} = ${EVENTS_PER_MESSAGE * count}`,
    );
  }

  const send = slices.filter((s) => s.phase === "send");
  // The last slice of the send phase is cut short by the last 202; compare whole slices.
  const whole = send.filter((s) => s.toMs - s.fromMs >= setup.sliceMs * 0.99);
  const rate = (s: Slice) => perS(s.sent, s.toMs - s.fromMs);
  const first = whole[0] ?? send[0]!;
  const last = whole.at(-1) ?? send.at(-1)!;
  const sendMs = tSent - t0;
  const cpuMs = send.reduce((n, s) => n + s.postroomCpuMs, 0);
  const mainMs = send.reduce((n, s) => n + s.mainThreadCpuMs, 0);
  const machineMs = send.reduce((n, s) => n + s.machineBusyMs, 0);
  const at = (p: { atMs: number }) => `${((p.atMs - t0) / 1000).toFixed(1)} s`;
  console.log("");
  console.log(
    `send rate (202/s): first slice ${rate(first).toFixed(0)}, last whole slice ${rate(last).toFixed(0)} (slice ${send.indexOf(last) + 1}, ${(rate(last) / rate(first)).toFixed(2)} of the first); ` +
      `${perS(count, sendMs).toFixed(0)} msg/s over the send phase (${(sendMs / 1000).toFixed(1)} s)`,
  );
  console.log(
    `sink: ${count} messages, ${perS(count, tDelivered - t0).toFixed(0)} msg/s from the first send to the last delivery (${((tDelivered - tSent) / 1000).toFixed(2)} s after the last 202)`,
  );
  console.log(
    `webhook backlog: ${pending.toLocaleString("en-US")} events pending at the end (${PENDING_METRIC}; ${pending0} before the run + 3N = ${(EVENTS_PER_MESSAGE * count).toLocaleString("en-US")})`,
  );
  console.log(
    `receiver: ${plural(refused.length, "POST")} answered 503, all the same batch of ${refused[0]!.events} events (webhook-id ${refused[0]!.batchId}), at ${refused.map(at).join(", ")} after the first send; ` +
      `Postroom logged ${plural(warnings.length, '"will retry" warning')}`,
  );
  console.log(
    `postroom CPU over the send phase: ${((100 * cpuMs) / sendMs).toFixed(0)}% of a core, all threads; main thread ${((100 * mainMs) / sendMs).toFixed(0)}%; machine ${((100 * machineMs) / sendMs).toFixed(0)}% (Postroom, this process, the sink and anyone else)`,
  );
  console.log(
    `checked: every send 202, exactly N at the sink, N deliveries logged and nothing else but 503 retries, every refused POST signed right, no event taken, 3N more events pending`,
  );
}
