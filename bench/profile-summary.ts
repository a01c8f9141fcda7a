// Where a server's main thread spends its time, from a `bun --cpu-prof` profile: every
// sample is charged to the innermost frame on its stack that belongs to a known stage
// (reply extraction, SPF/DKIM/DMARC, MIME parsing, the status commit, ...), and the
// stages are printed as a share of the samples and as µs per message, then the functions
// with the most samples of their own (self time).
//
//   bun bench/profile-summary.ts FILE.cpuprofile MESSAGES
//
// Samples are counted, not summed by time delta: Bun charges idle gaps to the sample
// before them, so "self time" in its markdown report overstates whatever ran last before
// the loop went idle. A sample stands for one sampling interval (the median delta).
// Only the JavaScript thread is sampled; fetch's HTTP thread and GC helpers are not.
import { readFileSync } from "node:fs";

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Profile {
  nodes: { id: number; callFrame: Frame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

type Rule = [stage: string, test: (url: string, fn: string) => boolean];
const SMTP_STAGE = "smtp-server, sockets";
const has = (url: string, parts: string[]) => parts.some((p) => url.includes(p));

// Checked innermost frame first; the first frame that matches a rule decides the stage.
const RULES: Rule[] = [
  ["reply_plain extraction (inbound/payload/reply)", (u) => u.includes("inbound/payload/reply")],
  ["SPF/DKIM/DMARC (mailauth)", (u) => has(u, ["mailauth", "inbound/parse/auth-checks"])],
  [
    "incoming statuses (journal, grouped commits)",
    (u) => has(u, ["inbound/statuses/statuses.repo", "inbound/statuses/status-journal", "store/mapped-journal", "bun:sqlite"]),
  ],
  ["recipient routing (address lookup)", (u) => has(u, ["inbound/addresses/route", "inbound/addresses/addresses.repo"])],
  [
    "MIME parsing (mailparser, mailsplit, libmime, libqp)",
    (u) => has(u, ["mailparser", "mailsplit", "libmime", "libqp", "iconv", "encoding-japanese", "punycode", "linkify", "/he/"]),
  ],
  ["payload (headers, JSON.stringify)", (u, f) => has(u, ["inbound/payload/payload", "inbound/payload/headers"]) || f === "stringify"],
  [
    "POST (egress guard, fetch, answer read)",
    (u, f) => has(u, ["lib/egress", "inbound/targets/target-post", "inbound/addresses/target-url", "ipaddr"]) || f === "fetch",
  ],
  ["DNS cache, dns2 client", (u) => has(u, ["lib/dns", "dns2"])],
  ["logging", (u) => u.includes("lib/logger")],
  [SMTP_STAGE, (u) => has(u, ["smtp-server", "inbound/smtp-listener", "src/smtp/reply", "src/smtp/server-compat"]) || u === "node:net"],
  ["delivery glue (md5, message key, status rows)", (u) => has(u, ["inbound/post-message", "bench/bare-pipeline"])],
];
const OTHER = "other (runtime, streams, GC)";

export function summarizeProfile(path: string, messages: number): string {
  const p = JSON.parse(readFileSync(path, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = stageOf.get(id);
    if (known) return known;
    const { url, functionName } = byId.get(id)!.callFrame;
    const rule = RULES.find(([, test]) => test(url, functionName));
    const up = parent.get(id);
    const stage = rule ? rule[0] : up !== undefined ? classify(up) : OTHER;
    stageOf.set(id, stage);
    return stage;
  };
  // Start-up (loading modules, opening the store) is not per-message work: samples
  // before the first one in smtp-server (the first SMTP session) are left out.
  const first = p.samples.findIndex((s) => classify(s) === SMTP_STAGE);
  const counted = first < 0 ? p.samples : p.samples.slice(first);
  const counts = new Map<string, number>();
  for (const s of counted) {
    const stage = classify(s);
    counts.set(stage, (counts.get(stage) ?? 0) + 1);
  }
  const deltas = [...p.timeDeltas].sort((a, b) => a - b);
  const intervalUs = deltas[deltas.length >> 1] ?? 1000;
  const total = counted.length;
  const lines = [
    `${total} samples of ~${(intervalUs / 1000).toFixed(2)} ms for ${messages} messages: ${((total * intervalUs) / messages).toFixed(0)} µs of main-thread time per message ` +
      `(${p.samples.length - total} samples of start-up before the first SMTP session not counted)`,
  ];
  for (const [stage, n] of [...counts].sort((a, b) => b[1] - a[1])) {
    lines.push(
      `  ${((100 * n) / total).toFixed(1).padStart(5)}%  ${((n * intervalUs) / messages).toFixed(0).padStart(5)} µs/msg  ${stage}`,
    );
  }
  // The functions the samples were taken in (self time), with where they are: a native
  // function (fetch, a socket's write) also holds the time its thread waited for a core
  // while in it, so on a busy machine those read high.
  const self = new Map<string, number>();
  for (const s of counted) {
    const { functionName, url, lineNumber } = byId.get(s)!.callFrame;
    const where =
      url === "" ? "native" : `${url.replace(/^.*\/node_modules\//, "").replace(/^.*\/(src|bench)\//, "$1/")}:${lineNumber + 1}`;
    const name = `${functionName || "(anonymous)"} (${where})`;
    self.set(name, (self.get(name) ?? 0) + 1);
  }
  lines.push(`  top ${TOP_FUNCTIONS} functions by self time:`);
  for (const [name, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP_FUNCTIONS)) {
    lines.push(`  ${((100 * n) / total).toFixed(1).padStart(5)}%  ${((n * intervalUs) / messages).toFixed(0).padStart(5)} µs/msg  ${name}`);
  }
  return lines.join("\n");
}

const TOP_FUNCTIONS = 12;

if (import.meta.main) {
  const [file, messages] = Bun.argv.slice(2);
  if (!file || !Number(messages)) {
    console.error("usage: bun bench/profile-summary.ts FILE.cpuprofile MESSAGES");
    process.exit(1);
  }
  console.log(summarizeProfile(file, Number(messages)));
}
