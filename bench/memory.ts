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
import { parseConfigText } from "../src/config/load.ts";
import { parseSizeBytes } from "../src/config/units.ts";
import { TestDnsServer } from "../test/helpers/dns-server.ts";
import { intOption, parseOptions } from "./args.ts";
import { Cleanup } from "./cleanup.ts";
import { until } from "./measure.ts";
import { discardingSink, discardingTarget, largeMessage, mb, memoryOf, rssSampler, sendOne, MB } from "./memory-peers.ts";
import { runScenario } from "./memory-scenarios.ts";
import { ACCOUNT, METRICS_CONFIG, postroomConfig, startPostroom, verifiedSendingDomain } from "./postroom.ts";

/** A size as the config writes it ("25MB", binary units), in bytes. */
function size(text: string): number {
  const bytes = parseSizeBytes(text);
  if (bytes === null) throw new Error(`not a size: ${text}`);
  return bytes;
}

const SENDER_DOMAIN = "sender.bench.test";
const FROM = `reports@${SENDER_DOMAIN}`;
const HEADROOM = 200 * MB;
const GAUGE = "postroom_mail_in_flight_bytes";

function options() {
  const values = parseOptions(
    "bun run bench:memory [--budget SIZE] [--raised SIZE] [--inbound N] [--inbound-size SIZE] [--api N] [--api-size SIZE] [--submission N] [--format json+n|multipart+n] [--phases inbound,api,submission,hostage,senders,controls]",
    {
      budget: { type: "string" },
      raised: { type: "string" },
      inbound: { type: "string" },
      "inbound-size": { type: "string" },
      api: { type: "string" },
      "api-size": { type: "string" },
      submission: { type: "string" },
      format: { type: "string" },
      phases: { type: "string" },
    },
  );
  const text = (flag: string | undefined, env: string, dflt: string) => flag ?? process.env[env] ?? dflt;
  const format = text(values.format, "BENCH_FORMAT", "json+n");
  if (format !== "json+n" && format !== "multipart+n") throw new Error(`--format must be json+n or multipart+n, got ${format}`);
  const phases = text(values.phases, "BENCH_PHASES", "inbound,api,hostage,senders,controls").split(",");
  return {
    budget: text(values.budget, "BENCH_BUDGET", "256MB"),
    raised: text(values.raised, "BENCH_RAISED", "8GB"),
    inbound: intOption(values.inbound, "BENCH_INBOUND", 50, 0),
    inboundSize: text(values["inbound-size"], "BENCH_INBOUND_SIZE", "25MB"),
    api: intOption(values.api, "BENCH_API", 50, 0),
    apiSize: text(values["api-size"], "BENCH_API_SIZE", "10MB"),
    submission: intOption(values.submission, "BENCH_SUBMISSION", 50, 0),
    format,
    phases: {
      inbound: phases.includes("inbound"),
      api: phases.includes("api"),
      submission: phases.includes("submission"),
      hostage: phases.includes("hostage"),
      senders: phases.includes("senders"),
      controls: phases.includes("controls"),
    },
  };
}

type Options = ReturnType<typeof options>;

/** The budget's config lines, or null on a tree that has no such key (before issue 15). */
function budgetSection(budget: string): string | null {
  const section = `[limits]\nmail_in_flight = "${budget}"`;
  return parseConfigText(postroomConfig("/tmp/x", "127.0.0.1:53", { sections: section })).ok ? section : null;
}

async function metric(httpPort: number, name: string): Promise<number | null> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`, { headers: { authorization: "Bearer pr_bench_metrics_token" } });
  const text = await res.text();
  const lines = text.split("\n").filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return lines.length === 0 ? null : lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

interface PhaseResult {
  label: string;
  idle: number;
  peak: number;
  hwm: number;
  maxInFlight: number;
  sent: number;
  accepted: number;
  deferred: number;
  other: string[];
  delivered: number;
  gaugeAfter: number | null;
  refusals: number | null;
  seconds: number;
}

interface Peers {
  dns: TestDnsServer;
  target: ReturnType<typeof discardingTarget>;
  sink: Awaited<ReturnType<typeof discardingSink>>;
  cleanup: Cleanup;
}

type Kind = "inbound" | "api" | "submission";

async function phase(kind: Kind, budget: string | null, opts: Options, peers: Peers): Promise<PhaseResult> {
  const workDir = peers.cleanup.tempDir(`postroom-memory-${kind}-`);
  const section = budget === null ? null : budgetSection(budget);
  const { child, httpPort } = await startPostroom(
    workDir,
    peers.dns.address,
    {
      http: METRICS_CONFIG,
      inboundListen: kind === "inbound" ? "127.0.0.1:0" : "",
      submissionListen: kind === "submission" ? "127.0.0.1:0" : "",
      inbound: "allow_private_targets = true",
      relay: `smarthost = "smtp://127.0.0.1:${peers.sink.port}"`,
      sections: section ?? undefined,
    },
    [],
  );
  peers.cleanup.add(() => child.stop());
  const listening = kind === "inbound" ? "inbound smtp listening" : kind === "submission" ? "submission smtp listening" : null;
  const smtpPort = listening ? ((await child.waitFor((l) => l.msg === listening)).port as number) : 0;
  const pid = child.proc.pid;
  let rcpt = "";
  if (kind === "inbound") {
    const res = await fetch(`http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.id}/addresses`, {
      method: "POST",
      headers: { authorization: `Bearer ${ACCOUNT.token}`, "content-type": "application/json" },
      body: JSON.stringify({ target: peers.target.url, target_format: opts.format }),
    });
    rcpt = ((await res.json()) as { email: string }).email;
  } else {
    await verifiedSendingDomain(httpPort, peers.dns, SENDER_DOMAIN);
  }
  child.ready();
  await Bun.sleep(1000);
  const idle = memoryOf(pid).rss;
  const what = {
    inbound: `inbound ${opts.inbound} x ${opts.inboundSize} (${opts.format})`,
    api: `E11 ${opts.api} x ${opts.apiSize}`,
    submission: `submission ${opts.submission} x ${opts.apiSize}`,
  }[kind];
  const label = `${what}, ${budget === null ? "no budget" : `budget ${budget}`}`;

  let inFlight = 0;
  let maxInFlight = 0;
  const track = (up: boolean) => {
    inFlight += up ? 1 : -1;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
  };
  const outcomes: { code: number; text: string }[] = [];
  const delivered0 = kind === "inbound" ? peers.target.counts.posts : peers.sink.counts.messages;
  const sampler = rssSampler(pid);
  const t0 = performance.now();
  if (kind === "inbound") {
    const msg = largeMessage(size(opts.inboundSize), FROM, rcpt);
    outcomes.push(
      ...(await Promise.all(Array.from({ length: opts.inbound }, (_, i) => sendOne(smtpPort, FROM, rcpt, msg.head(i), msg.body, track)))),
    );
  } else if (kind === "submission") {
    // As large as outbound.max_size allows, with room for the Message-ID and Date Postroom adds.
    const to = "someone@dest.bench.test";
    const msg = largeMessage(size(opts.apiSize) - 1024, FROM, to);
    const auth = { user: ACCOUNT.outboundId, pass: ACCOUNT.smtpKey };
    outcomes.push(
      ...(await Promise.all(
        Array.from({ length: opts.submission }, (_, i) => sendOne(smtpPort, FROM, to, msg.head(i), msg.body, track, auth)),
      )),
    );
  } else {
    // As much attachment as the composed message may hold (Base64 in lines of 76 + CRLF), in
    // files of at most 4 MB (before issue 15, E11's Base64 check failed on longer strings).
    const attachmentBytes = Math.floor(((size(opts.apiSize) - 16384) * 57) / 78);
    const files = Math.ceil(attachmentBytes / (4 * MB));
    const attachments = Array.from({ length: files }, (_, i) => ({
      file_name: `report-${i + 1}.pdf`,
      content_type: "application/pdf",
      content: Buffer.from(crypto.getRandomValues(new Uint8Array(Math.floor(attachmentBytes / files))).buffer).toString("base64"),
    }));
    const body = Buffer.from(
      JSON.stringify({
        from: `Reports <${FROM}>`,
        to: "someone@dest.bench.test",
        subject: "a large report",
        plain: "The report is attached.",
        attachments,
      }),
    );
    const url = `http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.outboundId}/messages`;
    outcomes.push(
      ...(await Promise.all(
        Array.from({ length: opts.api }, async () => {
          track(true);
          try {
            const res = await fetch(url, {
              method: "POST",
              headers: { authorization: `Bearer ${ACCOUNT.smtpKey}`, "content-type": "application/json" },
              body,
            });
            return {
              code: res.status,
              text: `${res.headers.get("retry-after") ? `Retry-After ${res.headers.get("retry-after")}: ` : ""}${(await res.text()).slice(0, 200)}`,
            };
          } catch (err) {
            return { code: 0, text: (err as Error).message };
          } finally {
            track(false);
          }
        }),
      )),
    );
  }
  const acceptedCode = kind === "api" ? 202 : 250;
  const deferredCode = kind === "api" ? 503 : 451;
  const accepted = outcomes.filter((o) => o.code === acceptedCode).length;
  const deferred = outcomes.filter((o) => o.code === deferredCode).length;
  const other = outcomes.filter((o) => o.code !== acceptedCode && o.code !== deferredCode).map((o) => `${o.code} ${o.text}`);
  // Inbound: posted before the 250. E11: delivered to the sink after the 202.
  const deliveredNow = () => (kind === "inbound" ? peers.target.counts.posts : peers.sink.counts.messages) - delivered0;
  await until(() => deliveredNow() >= accepted, 300_000);
  const seconds = (performance.now() - t0) / 1000;
  const peak = sampler.stop();
  const gaugeAfter = await metric(httpPort, GAUGE);
  const refusals = await metric(httpPort, "postroom_mail_refused_memory_total");
  const hwm = memoryOf(pid).hwm;
  await child.stop();
  return {
    label,
    idle,
    peak,
    hwm,
    maxInFlight,
    sent: outcomes.length,
    accepted,
    deferred,
    other,
    delivered: deliveredNow(),
    gaugeAfter,
    refusals,
    seconds,
  };
}

function report(r: PhaseResult): void {
  const perMessage = r.maxInFlight > 0 ? (r.peak - r.idle) / r.maxInFlight : 0;
  console.log(`\n${r.label}`);
  console.log(
    `  RSS: idle ${mb(r.idle)}, peak ${mb(r.peak)} (VmHWM ${mb(r.hwm)}); in flight at most ${r.maxInFlight} at once: ${mb(perMessage)} of peak growth per message in flight`,
  );
  console.log(
    `  ${r.sent} sent: ${r.accepted} accepted, ${r.deferred} deferred, ${r.other.length} other; ${r.delivered} delivered; ${r.seconds.toFixed(1)} s`,
  );
  if (r.gaugeAfter !== null) console.log(`  ${GAUGE} afterwards: ${r.gaugeAfter}; refusals for memory: ${r.refusals}`);
  for (const o of r.other.slice(0, 5)) console.log(`  other: ${o}`);
}

function checks(r: PhaseResult, budget: string | null, raised: boolean): string[] {
  const failed: string[] = [];
  if (r.other.length > 0) failed.push(`${r.label}: ${r.other.length} messages neither accepted nor deferred`);
  if (r.delivered !== r.accepted) failed.push(`${r.label}: ${r.accepted} accepted but ${r.delivered} delivered`);
  if (budget === null) return failed;
  if (r.gaugeAfter !== 0) failed.push(`${r.label}: ${GAUGE} is ${r.gaugeAfter} afterwards, not 0`);
  if (raised && r.accepted !== r.sent) failed.push(`${r.label}: only ${r.accepted} of ${r.sent} accepted with the budget raised`);
  if (!raised && r.peak > size(budget) + HEADROOM)
    failed.push(`${r.label}: peak RSS ${mb(r.peak)} is over the budget plus ${mb(HEADROOM)}`);
  return failed;
}

async function main() {
  const opts = options();
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
