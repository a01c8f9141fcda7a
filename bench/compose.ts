// `bun run bench:compose`: what composing an E11 message costs Postroom's main thread
// (issue 22), against its peer: nodemailer's MailComposer as Postroom used it before,
// compile().build() (the tree streamed through nodemailer's PassThrough and QP/Base64
// Transform streams). Postroom today: the same compiled tree written by
// src/outbound/compose/mime-writer.ts. Both run in this process on the same drafts, which
// go through E11's own input checks first (draftFromBody):
//   - bench:outbound's message: the ~4 KB newsletter's subject, text and HTML as its API
//     client sends them (bench/api-client.ts), from "Postroom News" <news@...>;
//   - a UTF-8 subject and display names, plain text with non-ASCII letters;
//   - HTML and plain text with an inline PNG (content_id: multipart/related);
//   - plain text with a 30 KB PDF attachment (multipart/mixed, Base64).
// Each round composes every draft K times with one side. The rounds alternate in an order
// fixed before the first (peer, postroom, postroom, peer, ...: each side as often first
// as second), after one untimed warm-up round of each; a full GC before each round. The
// figure per side is the median over its rounds of CPU µs per message (this process's
// user + system time: composing is all it does meanwhile, and CPU time, unlike the wall
// clock, does not count the time other processes on a shared machine hold the core; the
// wall clock is printed too); ratio = postroom / peer.
//
//   bun run bench:compose [--rounds R] [--messages K]
//   defaults: R=6 (3 per side), K=2000 per draft (or BENCH_ROUNDS, BENCH_MESSAGES)
import MailComposer from "nodemailer/lib/mail-composer";
import { composeMessage, mailOptionsOf, toCrlf } from "../src/outbound/compose/compose.ts";
import { draftFromBody, type MessageBody, type MessageDraft } from "../src/outbound/compose/message-input.ts";
import { apiContent, FROM_HEADER } from "./api-client.ts";
import { intOption, parseOptions } from "./args.ts";
import { loadAverage, median } from "./measure.ts";
import { buildMessage } from "./message.ts";

function options() {
  const values = parseOptions("bun run bench:compose [--rounds R] [--messages K]", {
    rounds: { type: "string" },
    messages: { type: "string" },
  });
  return { rounds: intOption(values.rounds, "BENCH_ROUNDS", 6, 2), messages: intOption(values.messages, "BENCH_MESSAGES", 2000, 1) };
}

const PNG_1X1 = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const PDF_30K = Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.from(Array.from({ length: 30_000 }, (_, i) => (i * 131 + 7) % 256))]);

async function drafts(): Promise<[name: string, draft: MessageDraft][]> {
  const content = await apiContent(buildMessage("rcpt@dest-1.bench.test"));
  const bodies: [string, MessageBody][] = [
    ["bench:outbound message", { from: FROM_HEADER, to: "r1@dest-1.bench.test", ...content }],
    [
      "UTF-8 subject and names",
      {
        from: '"Anna Müller" <news@sender.bench.test>',
        to: '"Józef Żółć" <r1@dest-1.bench.test>',
        subject: "Ihre Bestellung ✓ — Übersicht für November",
        plain: "Grüße aus Köln!\nIhre Bestellung ist unterwegs. Zahlung: 42,00 €.\n",
      },
    ],
    [
      "html+plain+inline image",
      {
        from: FROM_HEADER,
        to: "r1@dest-1.bench.test",
        subject: content.subject,
        plain: content.plain,
        html: content.html.replace("<p>Hello,</p>", '<p><img src="cid:logo@sender.bench.test"></p><p>Hello,</p>'),
        attachments: [
          { file_name: "logo.png", content: PNG_1X1.toString("base64"), content_type: "image/png", content_id: "logo@sender.bench.test" },
        ],
      },
    ],
    [
      "plain+30 KB attachment",
      {
        from: FROM_HEADER,
        to: "r1@dest-1.bench.test",
        subject: "Your invoice",
        plain: "Your invoice for November is attached.\n",
        attachments: [{ file_name: "invoice-2026-11.pdf", content: PDF_30K.toString("base64"), content_type: "application/pdf" }],
      },
    ],
  ];
  const rules = { maxRecipients: 50, blockedExtensions: [], markdownAllowed: true, forcedTestMode: false };
  return bodies.map(([name, body]) => [name, draftFromBody(body, rules)]);
}

type Compose = (draft: MessageDraft, messageId: string, date: Date) => Promise<Buffer>;

/** The peer: the composition Postroom did before issue 22, nodemailer's build() (streams). */
const peer: Compose = async (draft, messageId, date) =>
  toCrlf(
    await new Promise<Buffer>((resolve, reject) =>
      new MailComposer(mailOptionsOf(draft, messageId, date)).compile().build((err, msg) => (err ? reject(err) : resolve(msg))),
    ),
  );
const postroom: Compose = async (draft, messageId, date) => (await composeMessage(draft, messageId, date)).raw;
const SIDES = { peer, postroom };
type Side = keyof typeof SIDES;

/** CPU time this process has used, in µs (user + system; the GC's helper threads included). */
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** One round: every draft K times; CPU µs per message over all drafts and per draft, and wall µs per message. */
async function round(
  compose: Compose,
  list: [string, MessageDraft][],
  k: number,
): Promise<{ all: number; perDraft: number[]; wall: number }> {
  Bun.gc(true);
  const perDraft: number[] = [];
  let bytes = 0;
  const wall0 = performance.now();
  for (const [, draft] of list) {
    const cpu0 = cpuUs();
    for (let i = 0; i < k; i++) bytes += (await compose(draft, `<bench-${i}@postroom.bench.test>`, new Date())).length;
    perDraft.push((cpuUs() - cpu0) / k);
  }
  if (bytes === 0) throw new Error("nothing composed");
  return {
    all: perDraft.reduce((a, b) => a + b, 0) / list.length,
    perDraft,
    wall: ((performance.now() - wall0) * 1000) / (k * list.length),
  };
}

async function main() {
  const opts = options();
  const list = await drafts();
  // Both sides must give a message of the same size for each draft (same headers and
  // encodings; the boundaries differ only in their random part, of the same length).
  const date = new Date();
  for (const [name, draft] of list) {
    const [a, b] = [await peer(draft, "<x@h>", date), await postroom(draft, "<x@h>", date)];
    if (a.length !== b.length) throw new Error(`${name}: the peer composes ${a.length} bytes, Postroom ${b.length}`);
  }
  // The order, fixed before the first round: peer, postroom, postroom, peer, ...
  const order: Side[] = Array.from({ length: opts.rounds }, (_, r) => (r % 4 === 0 || r % 4 === 3 ? "peer" : "postroom"));
  console.log(
    `compose benchmark: ${list.length} drafts (${list.map(([n]) => n).join("; ")}), K=${opts.messages} each per round, ${opts.rounds} rounds in the order ${order.join(", ")}, after a warm-up round of each`,
  );
  console.log(`machine: ${navigator.hardwareConcurrency} cores, bun ${Bun.version}; load average ${loadAverage()}`);
  for (const side of ["peer", "postroom"] as const) await round(SIDES[side], list, Math.min(opts.messages, 500));
  const results: Record<Side, { all: number; perDraft: number[]; wall: number }[]> = { peer: [], postroom: [] };
  for (const [r, side] of order.entries()) {
    const res = await round(SIDES[side], list, opts.messages);
    results[side].push(res);
    console.log(
      `round ${r + 1} ${side.padEnd(8)} ${res.all.toFixed(1).padStart(7)} CPU µs/msg (wall ${res.wall.toFixed(1)})   (${res.perDraft.map((us, i) => `${list[i]![0]}: ${us.toFixed(1)}`).join(", ")})`,
    );
  }
  const med = (side: Side) => median(results[side].map((x) => x.all));
  for (const [i, [name]] of list.entries()) {
    const p = median(results.peer.map((x) => x.perDraft[i]!));
    const q = median(results.postroom.map((x) => x.perDraft[i]!));
    console.log(
      `${name.padEnd(26)} peer ${p.toFixed(1).padStart(7)} CPU µs   postroom ${q.toFixed(1).padStart(7)} CPU µs   ratio ${(q / p).toFixed(2)}`,
    );
  }
  console.log(
    `median CPU µs per message: peer (MailComposer build, streams) ${med("peer").toFixed(1)}, postroom (mime-writer) ${med("postroom").toFixed(1)}`,
  );
  console.log(
    `median wall µs per message: peer ${median(results.peer.map((x) => x.wall)).toFixed(1)}, postroom ${median(results.postroom.map((x) => x.wall)).toFixed(1)}`,
  );
  console.log(
    `ratio: ${(med("postroom") / med("peer")).toFixed(2)} (postroom / peer, CPU; lower is better); load average ${loadAverage()}`,
  );
}

await main();
