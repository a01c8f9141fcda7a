// One phase of bench:memory (bench/memory.ts's header says what each does): a fresh
// Postroom, N messages at once (inbound SMTP, E11 sends or submissions), its RSS sampled
// throughout; what came of each message, and the in-flight gauge afterwards.
import { parseConfigText } from "../src/config/load.ts";
import { parseSizeBytes } from "../src/config/units.ts";
import type { TestDnsServer } from "../test/helpers/dns-server.ts";
import type { Cleanup } from "./cleanup.ts";
import { until } from "./measure.ts";
import { type discardingSink, type discardingTarget, largeMessage, memoryOf, rssSampler, sendOne, MB } from "./memory-peers.ts";
import type { MemoryOptions } from "./memory-options.ts";
import { ACCOUNT, METRICS_CONFIG, postroomConfig, startPostroom, verifiedSendingDomain } from "./postroom.ts";

/** A size as the config writes it ("25MB", binary units), in bytes. */
export function size(text: string): number {
  const bytes = parseSizeBytes(text);
  if (bytes === null) throw new Error(`not a size: ${text}`);
  return bytes;
}

export const SENDER_DOMAIN = "sender.bench.test";
const FROM = `reports@${SENDER_DOMAIN}`;
export const HEADROOM = 200 * MB;
export const GAUGE = "postroom_mail_in_flight_bytes";

/** The budget's config lines, or null on a tree that has no such key (before issue 15). */
export function budgetSection(budget: string): string | null {
  const section = `[limits]\nmail_in_flight = "${budget}"`;
  return parseConfigText(postroomConfig("/tmp/x", "127.0.0.1:53", { sections: section })).ok ? section : null;
}

async function metric(httpPort: number, name: string): Promise<number | null> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`, { headers: { authorization: "Bearer pr_bench_metrics_token" } });
  const text = await res.text();
  const lines = text.split("\n").filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return lines.length === 0 ? null : lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

export interface PhaseResult {
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

export interface Peers {
  dns: TestDnsServer;
  target: ReturnType<typeof discardingTarget>;
  sink: Awaited<ReturnType<typeof discardingSink>>;
  cleanup: Cleanup;
}

export type Kind = "inbound" | "api" | "submission";

export async function phase(kind: Kind, budget: string | null, opts: MemoryOptions, peers: Peers): Promise<PhaseResult> {
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
