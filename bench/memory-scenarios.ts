// The two scenarios of bench:memory from issue 31 (bench/memory.ts runs them):
// - hostage: three strangers (127.0.0.3-5) declare SIZE=26000000, 26000000 and 14880000 and
//   trickle 1 KB/s; meanwhile another sender (127.0.0.2) sends ten 2 MB messages (five with
//   SIZE=, five without) one after another, and E11 sends three 1 MB attachments. Printed:
//   what the trio holds (postroom_mail_in_flight_bytes), what the others get and how long
//   each took. Before issue 31 the trio held 268,404,736 bytes and the others got 451 / 503.
// - senders: 24 senders (127.0.1.1-24) at once, each a message of 18 MB without SIZE=, as
//   issue 31 measured (before: 0 admitted at the first try). Printed: how many were accepted
//   at their first try, how many deferred (then sent again, one after another, until
//   accepted: none lost), peak RSS, and how long the first try took.
// - controls: two messages of 23 MB of control characters at once, without SIZE= (issue 31:
//   each became a 137 MB JSON body, `\u0001` for each byte, and RSS went from 140 MB to
//   670 MB against 184 MB reserved). Printed: replies, the bytes posted, peak RSS.
import { connect, type Socket } from "node:net";
import type { TestDnsServer } from "../test/helpers/dns-server.ts";
import type { Cleanup } from "./cleanup.ts";
import { until } from "./measure.ts";
import { largeMessage, mb, memoryOf, rssSampler, sendOne, MB, type discardingTarget, type SmtpOutcome } from "./memory-peers.ts";
import { ACCOUNT, METRICS_CONFIG, readMetric, startPostroom, verifiedSendingDomain } from "./postroom.ts";

export type Scenario = "hostage" | "senders" | "controls";

interface Peers {
  dns: TestDnsServer;
  target: ReturnType<typeof discardingTarget>;
  sink: { port: number };
  cleanup: Cleanup;
}

/** A fresh Postroom with `section` ([limits]), the inbound listener, an address and a verified sending domain; then the scenario. */
export async function runScenario(
  kind: Scenario,
  section: string,
  senderDomain: string,
  peers: Peers,
  senders: { senders: number; sizeBytes: number; budgetBytes: number; headroomBytes: number },
): Promise<ScenarioResult> {
  const workDir = peers.cleanup.tempDir(`postroom-memory-${kind}-`);
  const { child, httpPort } = await startPostroom(
    workDir,
    peers.dns.address,
    {
      http: METRICS_CONFIG,
      inboundListen: "127.0.0.1:0",
      submissionListen: "",
      inbound: "allow_private_targets = true",
      relay: `smarthost = "smtp://127.0.0.1:${peers.sink.port}"`,
      sections: section,
    },
    [],
  );
  peers.cleanup.add(() => child.stop());
  const smtpPort = (await child.waitFor((l) => l.msg === "inbound smtp listening")).port as number;
  const res = await fetch(`http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.id}/addresses`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT.token}`, "content-type": "application/json" },
    body: JSON.stringify({ target: peers.target.url, target_format: "json+n" }),
  });
  const rcpt = ((await res.json()) as { email: string }).email;
  await verifiedSendingDomain(httpPort, peers.dns, senderDomain);
  child.ready();
  await Bun.sleep(1000);
  const from = `reports@${senderDomain}`;
  const attachment = Buffer.from(crypto.getRandomValues(new Uint8Array(MB))).toString("base64");
  const p: ScenarioPostroom = {
    smtpPort,
    httpPort,
    pid: child.proc.pid,
    rcpt,
    from,
    posts: () => peers.target.counts.posts,
    inFlight: () => readMetric(httpPort, "postroom_mail_in_flight_bytes").catch(() => null),
    e11: async () => {
      const sent = await fetch(`http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.outboundId}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${ACCOUNT.smtpKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          from,
          to: "someone@dest.bench.test",
          subject: "beside the trio",
          plain: "attached",
          attachments: [{ file_name: "r.pdf", content_type: "application/pdf", content: attachment }],
        }),
      });
      await sent.body?.cancel();
      return sent.status;
    },
  };
  try {
    if (kind === "hostage") return await hostageScenario(p);
    if (kind === "controls") return await controlsScenario(p, senders.budgetBytes, senders.headroomBytes, () => peers.target.counts.bytes);
    return await sendersScenario(p, senders);
  } finally {
    await child.stop();
  }
}

export interface ScenarioPostroom {
  smtpPort: number;
  httpPort: number;
  pid: number;
  rcpt: string;
  from: string;
  /** Posts counted by the target so far. */
  posts(): number;
  /** postroom_mail_in_flight_bytes now. */
  inFlight(): Promise<number | null>;
  /** One E11 send of a 1 MB attachment: its status. */
  e11(): Promise<number>;
}

export interface ScenarioResult {
  lines: string[];
  failed: string[];
}

/** A session at 354 from `localAddress`, declaring `size`; throws on any other reply. */
async function atData(port: number, localAddress: string, from: string, to: string, size: number): Promise<Socket> {
  const socket = connect({ host: "127.0.0.1", port, localAddress });
  let buf = "";
  const waiters: ((line: string) => void)[] = [];
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\r\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      if (line.charAt(3) !== "-") waiters.shift()?.(line);
    }
  });
  socket.on("error", () => {});
  const reply = () => new Promise<string>((resolve) => waiters.push(resolve));
  const expectCode = async (line: string | null, code: string) => {
    if (line !== null) socket.write(`${line}\r\n`);
    const r = await reply();
    if (!r.startsWith(code)) throw new Error(`${line ?? "greeting"}: ${r}`);
  };
  await expectCode(null, "220");
  await expectCode("EHLO trickle.bench.test", "250");
  await expectCode(`MAIL FROM:<${from}> SIZE=${size}`, "250");
  await expectCode(`RCPT TO:<${to}>`, "250");
  await expectCode("DATA", "354");
  return socket;
}

export async function hostageScenario(p: ScenarioPostroom): Promise<ScenarioResult> {
  const lines: string[] = [];
  const failed: string[] = [];
  const trio = await Promise.all([
    atData(p.smtpPort, "127.0.0.3", p.from, p.rcpt, 26_000_000),
    atData(p.smtpPort, "127.0.0.4", p.from, p.rcpt, 26_000_000),
    atData(p.smtpPort, "127.0.0.5", p.from, p.rcpt, 14_880_000),
  ]);
  const line = `${"x".repeat(1022)}\r\n`;
  const trickle = setInterval(() => {
    for (const s of trio) s.write(line);
  }, 1000);
  try {
    await Bun.sleep(3000);
    const held = (await p.inFlight()) ?? 0;
    lines.push(`trio (SIZE= 26000000, 26000000, 14880000, 1 KB/s each) holds ${held} bytes (${mb(held)}) after 3 s`);
    if (held > 16 * MB) failed.push(`hostage: the trio holds ${held} bytes`);
    const msg = largeMessage(2 * MB, p.from, p.rcpt);
    const outcomes: { declared: boolean; outcome: SmtpOutcome; ms: number }[] = [];
    for (let i = 0; i < 10; i++) {
      const declared = i % 2 === 0;
      const t0 = performance.now();
      const outcome = await sendOne(p.smtpPort, p.from, p.rcpt, msg.head(i), msg.body, () => {}, undefined, {
        declareSize: declared,
        localAddress: "127.0.0.2",
      });
      outcomes.push({ declared, outcome, ms: performance.now() - t0 });
    }
    const accepted = outcomes.filter((o) => o.outcome.code === 250);
    const slowest = Math.max(...outcomes.map((o) => o.ms));
    lines.push(
      `another sender (127.0.0.2), 10 x 2 MB one after another (5 with SIZE=): ${accepted.length} accepted (250), slowest ${slowest.toFixed(0)} ms; replies ${[...new Set(outcomes.map((o) => o.outcome.code))].join(", ")}`,
    );
    if (accepted.length !== 10)
      failed.push(
        `hostage: only ${accepted.length} of 10 messages beside the trio accepted: ${outcomes.map((o) => `${o.outcome.code} ${o.outcome.text}`).join("; ")}`,
      );
    const e11 = [await p.e11(), await p.e11(), await p.e11()];
    lines.push(`E11 beside the trio: ${e11.join(", ")}`);
    if (e11.some((s) => s !== 202)) failed.push(`hostage: E11 answered ${e11.join(", ")}`);
  } finally {
    clearInterval(trickle);
    for (const s of trio) s.destroy();
  }
  return { lines, failed };
}

export async function sendersScenario(
  p: ScenarioPostroom,
  opts: { senders: number; sizeBytes: number; budgetBytes: number; headroomBytes: number },
): Promise<ScenarioResult> {
  const lines: string[] = [];
  const failed: string[] = [];
  const msg = largeMessage(opts.sizeBytes, p.from, p.rcpt);
  const addressOf = (i: number) => `127.0.1.${i + 1}`;
  const posts0 = p.posts();
  const idle = memoryOf(p.pid).rss;
  const sampler = rssSampler(p.pid);
  const t0 = performance.now();
  const first = await Promise.all(
    Array.from({ length: opts.senders }, (_, i) =>
      sendOne(p.smtpPort, p.from, p.rcpt, msg.head(i), msg.body, () => {}, undefined, { declareSize: false, localAddress: addressOf(i) }),
    ),
  );
  const firstSeconds = (performance.now() - t0) / 1000;
  const acceptedFirst = first.filter((o) => o.code === 250).length;
  const deferred = first.filter((o) => o.code === 451).length;
  const other = first.filter((o) => o.code !== 250 && o.code !== 451);
  // The deferred ones try again, one after another, as a sender's queue would (at most 5 times each).
  let retries = 0;
  for (const [i, o] of first.entries()) {
    if (o.code !== 451) continue;
    for (let attempt = 0; attempt < 5; attempt++) {
      retries++;
      const again = await sendOne(p.smtpPort, p.from, p.rcpt, msg.head(i), msg.body, () => {}, undefined, {
        declareSize: false,
        localAddress: addressOf(i),
      });
      if (again.code === 250) break;
    }
  }
  const accepted = acceptedFirst + Math.max(deferred, 0);
  await until(() => p.posts() - posts0 >= opts.senders - other.length, 300_000).catch(() => {});
  const peak = sampler.stop();
  const posted = p.posts() - posts0;
  lines.push(
    `${opts.senders} senders x ${mb(msg.size)} at once, without SIZE=, each from its own address: ${acceptedFirst} accepted at the first try, ${deferred} deferred (451), ${other.length} other; first try over in ${firstSeconds.toFixed(1)} s`,
  );
  lines.push(`  the deferred sent again one after another: ${retries} tries; ${posted} posted in all`);
  lines.push(`  RSS: idle ${mb(idle)}, peak ${mb(peak)} (VmHWM ${mb(memoryOf(p.pid).hwm)})`);
  for (const o of other.slice(0, 3)) lines.push(`  other: ${o.code} ${o.text}`);
  if (acceptedFirst * 2 <= opts.senders) failed.push(`senders: only ${acceptedFirst} of ${opts.senders} accepted at the first try`);
  if (posted !== opts.senders) failed.push(`senders: ${posted} of ${opts.senders} posted (accepted ${accepted})`);
  if (peak > opts.budgetBytes + opts.headroomBytes)
    failed.push(`senders: peak RSS ${mb(peak)} over the budget plus ${mb(opts.headroomBytes)}`);
  return { lines, failed };
}

/** A text/plain message of about `sizeBytes` of U+0001, in lines of 998 (nothing to dot-stuff). */
function controlsMessage(sizeBytes: number, from: string, to: string) {
  const line = `${"\u0001".repeat(998)}\r\n`;
  const body = Buffer.from(line.repeat(Math.ceil(sizeBytes / line.length)), "latin1");
  const head = (i: number) =>
    Buffer.from(
      `From: <${from}>\r\nTo: <${to}>\r\nSubject: controls ${i}\r\nMessage-ID: <controls-${i}-${Date.now()}@bench.test>\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n`,
      "latin1",
    );
  return { head, body };
}

export async function controlsScenario(
  p: ScenarioPostroom,
  budgetBytes: number,
  headroomBytes: number,
  postedBytes: () => number,
): Promise<ScenarioResult> {
  const lines: string[] = [];
  const failed: string[] = [];
  const msg = controlsMessage(23 * MB, p.from, p.rcpt);
  const posts0 = p.posts();
  const bytes0 = postedBytes();
  const idle = memoryOf(p.pid).rss;
  const sampler = rssSampler(p.pid);
  const outcomes = await Promise.all(
    [0, 1].map((i) =>
      sendOne(p.smtpPort, p.from, p.rcpt, msg.head(i), msg.body, () => {}, undefined, {
        declareSize: false,
        localAddress: `127.0.2.${i + 1}`,
      }),
    ),
  );
  await until(() => p.posts() - posts0 >= outcomes.filter((o) => o.code === 250).length, 120_000).catch(() => {});
  const peak = sampler.stop();
  const posted = p.posts() - posts0;
  lines.push(
    `2 x ${mb(msg.body.length)} of control characters at once, without SIZE=: replies ${outcomes.map((o) => o.code).join(", ")}; ${posted} posted, ${mb(postedBytes() - bytes0)} of JSON bodies`,
  );
  lines.push(`  RSS: idle ${mb(idle)}, peak ${mb(peak)} (VmHWM ${mb(memoryOf(p.pid).hwm)})`);
  if (outcomes.some((o) => o.code !== 250 && o.code !== 451))
    failed.push(`controls: replies ${outcomes.map((o) => `${o.code} ${o.text}`).join("; ")}`);
  if (peak > budgetBytes + headroomBytes) failed.push(`controls: peak RSS ${mb(peak)} over the budget plus ${mb(headroomBytes)}`);
  return { lines, failed };
}
