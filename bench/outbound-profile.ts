// Where Postroom's main thread spends its time while sending, from a `bun --cpu-prof`
// profile of `bun run bench:outbound --profile DIR`: the outbound counterpart of
// bench/profile-summary.ts (same method: samples are counted, not summed by time delta,
// and each sample is charged to a stage by the frames on its stack).
//
//   bun bench/outbound-profile.ts FILE.cpuprofile MESSAGES
//
// A sample is charged to the first rule (in the order below) that matches its stack, so
// SQLite work is split by who asked for it (the API's queue insert, the worker's claim,
// the worker's per-attempt commits), and fsync waits inside a synchronous call (the
// blob's fsync, SQLite's commit with synchronous=FULL) count where they block the loop.
// Only the JavaScript thread is sampled, and idle time is not: the total is the time the
// event loop was busy.
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

type Stack = Frame[]; // innermost first
const any = (stack: Stack, test: (f: Frame) => boolean) => stack.some(test);
const inUrl =
  (...parts: string[]) =>
  (f: Frame) =>
    parts.some((p) => f.url.includes(p));
const fn =
  (...names: string[]) =>
  (f: Frame) =>
    names.includes(f.functionName);
const sqlite = inUrl("bun:sqlite", "outbound/queue/queue.repo", "events/events.repo", "store/store");

const RULES: [stage: string, test: (s: Stack) => boolean][] = [
  [
    "start-up: sending domain created and verified (once)",
    (s) => any(s, inUrl("api/sending-domains", "domains/verification", "domains/checker")),
  ],
  [
    "DKIM signing (key decrypt + parse, RSA + Ed25519 sign, mailauth canonicalization)",
    (s) => any(s, inUrl("mailauth", "domains/keys")) || (any(s, inUrl("domains/service")) && any(s, fn("sign", "createPrivateKey"))),
  ],
  ["sending-domain lookups (SQLite; on accept and again to sign)", (s) => any(s, inUrl("domains/"))],
  [
    "webhook outbox (dispatcher reading and dropping rows)",
    (s) => any(s, inUrl("events/dispatcher", "events/outbox", "events/webhook-schedule")),
  ],
  ["accept: suppression check (SQLite)", (s) => any(s, inUrl("suppressions"))],
  ["accept: queue insert commit (SQLite, synchronous=FULL)", (s) => any(s, sqlite) && any(s, inUrl("outbound/queue/enqueue"))],
  [
    "accept: raw message file (mkdir, open, write, fsync file + dir, rename)",
    (s) => any(s, inUrl("lib/durable-file")) || (any(s, inUrl("outbound/queue/blobs")) && any(s, inUrl("outbound/queue/enqueue"))),
  ],
  ["delivery: claim (SQLite)", (s) => any(s, sqlite) && any(s, fn("claimDue", "claimAndStart", "release", "nextDueMs", "tick"))],
  ["delivery: dispatch event commit (SQLite, synchronous=FULL)", (s) => any(s, sqlite) && any(s, fn("addEvents"))],
  ["delivery: outcome commit (SQLite, synchronous=FULL)", (s) => any(s, sqlite) && any(s, inUrl("outbound/delivery/worker"))],
  ["delivery: read raw message file", (s) => any(s, inUrl("outbound/queue/blobs"))],
  // SMTP submission (--feed smtp); what it shares with the API (suppressions, queue insert, send) is "accept:".
  ["submission: Message-ID claim (SQLite)", (s) => any(s, inUrl("outbound/sending/idempotency"))],
  [
    "submission: message checks (header split, author, recipients, NUL, Message-ID, Date)",
    (s) =>
      any(s, inUrl("outbound/submission", "compose/raw-headers", "compose/author")) &&
      !any(s, inUrl("outbound/sending/send", "outbound/queue/enqueue")),
  ],
  ["submission: SMTP server (smtp-server commands and DATA stream, src/smtp)", (s) => any(s, inUrl("smtp-server", "src/smtp/"))],
  ["logging", (s) => any(s, inUrl("lib/logger"))],
  [
    "delivery: SMTP client (nodemailer smtp-connection, sockets)",
    (s) => any(s, inUrl("smtp-connection", "outbound/delivery/smtp-client", "node:net", "node:tls", "data-stream")),
  ],
  [
    "delivery: hop planning (smarthost/MX, egress guard, DNS)",
    (s) => any(s, inUrl("outbound/delivery/next-hop", "outbound/delivery/mx", "lib/egress", "lib/dns", "dns2", "ipaddr")),
  ],
  [
    "delivery: per-recipient copy (tracking, List-Unsubscribe)",
    (s) => any(s, inUrl("outbound/delivery/prepare", "outbound/tracking/personalize", "tracking-tokens")),
  ],
  ["delivery: worker glue (grouping, events, schedule)", (s) => any(s, inUrl("outbound/delivery/worker", "outbound/queue/schedule"))],
  [
    "API: compose (nodemailer mail-composer, libmime, QP)",
    (s) =>
      any(
        s,
        inUrl(
          "mail-composer",
          "mime-node",
          "mime-funcs",
          "libmime",
          "/qp/",
          "/base64/",
          "mime-types",
          "outbound/compose/compose",
          "html-to-text",
          "marked",
        ),
      ),
  ],
  [
    "accept: input checks (draft, addresses, send, enqueue)",
    (s) =>
      any(
        s,
        inUrl("outbound/compose/message-input", "outbound/compose/addresses", "outbound/sending/send", "outbound/queue/enqueue", "lib/ids"),
      ),
  ],
  [
    "API: HTTP, Elysia routing, auth, validation, JSON",
    (s) =>
      any(s, inUrl("elysia", "src/api/", "src/http/", "src/router.ts", "src/auth/", "typebox", "sinclair", "lib/rate-limit")) ||
      any(s, fn("parse", "stringify", "json")),
  ],
];
const OTHER = "other (runtime, timers, GC)";

export function summarizeOutboundProfile(path: string, messages: number): string {
  const p = JSON.parse(readFileSync(path, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = stageOf.get(id);
    if (known) return known;
    const stack: Stack = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
    const rule = RULES.find(([, test]) => test(stack));
    const stage = rule ? rule[0] : OTHER;
    stageOf.set(id, stage);
    return stage;
  };
  const counts = new Map<string, number>();
  for (const s of p.samples) {
    const stage = classify(s);
    counts.set(stage, (counts.get(stage) ?? 0) + 1);
  }
  const deltas = [...p.timeDeltas].sort((a, b) => a - b);
  const intervalUs = deltas[deltas.length >> 1] ?? 1000;
  const total = p.samples.length;
  const lines = [
    `${total} samples of ~${(intervalUs / 1000).toFixed(2)} ms for ${messages} messages: ${((total * intervalUs) / messages).toFixed(0)} µs of busy main-thread time per message`,
  ];
  for (const [stage, n] of [...counts].sort((a, b) => b[1] - a[1])) {
    lines.push(
      `  ${((100 * n) / total).toFixed(1).padStart(5)}%  ${((n * intervalUs) / messages).toFixed(0).padStart(5)} µs/msg  ${stage}`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const [file, messages] = Bun.argv.slice(2);
  if (!file || !Number(messages)) {
    console.error("usage: bun bench/outbound-profile.ts FILE.cpuprofile MESSAGES");
    process.exit(1);
  }
  console.log(summarizeOutboundProfile(file, Number(messages)));
}
