// Composing without nodemailer's streams (issue 22): mime-writer.ts writes MailComposer's
// compiled tree itself. The peer is nodemailer's own build() of the same kind of message.
// For every draft of the table: (1) the same compiled tree written both ways gives the same
// bytes (same boundaries, so byte for byte), and (2) composeMessage (new path) and a fresh
// MailComposer build (the old path) read by mailparser give a recipient the same headers,
// text, html, attachments and MIME tree.
import { describe, expect, test } from "bun:test";
import { simpleParser, type ParsedMail } from "mailparser";
import MailComposer from "nodemailer/lib/mail-composer";
import { composeMessage, mailOptionsOf, toCrlf } from "../../src/outbound/compose/compose.ts";
import { draftFromBody, type MessageBody } from "../../src/outbound/compose/message-input.ts";
import { writeMime } from "../../src/outbound/compose/mime-writer.ts";

const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");
const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
const LONG_WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
const BINARY = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37) % 256));

const DRAFTS: [name: string, body: MessageBody][] = [
  ["ASCII plain, short lines (7bit)", { from: "ann@sender.test", to: "bob@example.org", subject: "Hello", plain: "Hi Bob,\nsee you.\n" }],
  [
    "UTF-8 subject and display names",
    {
      from: '"Anna Müller" <ann@sender.test>',
      to: ['"Józef Żółć" <bob@example.org>', "carol@example.org"],
      subject: "Quarterly report ✓ — Größe 日本語 and a subject long enough to be folded over several lines of the header",
      plain: "Grüße aus Köln\n",
    },
  ],
  [
    "long lines (QP soft breaks)",
    {
      from: "ann@sender.test",
      to: "bob@example.org",
      subject: "long",
      plain: `${LONG_WORDS} ${LONG_WORDS}\n=equals= and trailing space \n`,
    },
  ],
  [
    "html only",
    { from: "ann@sender.test", to: "bob@example.org", subject: "html", html: '<p style="color:#222">Hello <b>Bob</b> — ça va?</p>' },
  ],
  [
    "markdown (html and plain made from it)",
    {
      from: "ann@sender.test",
      to: "bob@example.org",
      subject: "md",
      markdown: "# Title\n\nSome *text* with a [link](https://example.org/a?b=c).\n\n- one\n- two ✓\n",
    },
  ],
  [
    "plain and html (alternative)",
    { from: "ann@sender.test", to: "bob@example.org", subject: "both", plain: "Plain body", html: "<p>HTML body</p>" },
  ],
  [
    "html, plain and an inline image (related)",
    {
      from: "ann@sender.test",
      to: "bob@example.org",
      subject: "inline",
      plain: "Plain",
      html: '<p>Logo <img src="cid:logo@sender.test"></p>',
      attachments: [{ file_name: "logo.png", content: b64(PNG), content_type: "image/png", content_id: "<logo@sender.test>" }],
    },
  ],
  [
    "attachments: binary, text, non-ASCII file name (mixed)",
    {
      from: "ann@sender.test",
      to: "bob@example.org",
      subject: "files",
      plain: "See attached.",
      attachments: [
        { file_name: "data.bin", content: b64(BINARY), content_type: "application/octet-stream" },
        { file_name: "report.csv", content: b64("a,b\n1,2\n"), content_type: "text/csv" },
        {
          file_name: "Übersicht für das Jahr 2026 — sehr lange Datei.pdf",
          content: b64(BINARY.subarray(0, 100)),
          content_type: "application/pdf",
        },
      ],
    },
  ],
  [
    "inline image and attachment together (mixed around related around alternative)",
    {
      from: "ann@sender.test",
      to: "bob@example.org",
      subject: "all",
      plain: "P",
      html: '<img src="cid:logo">',
      attachments: [
        { file_name: "logo.png", content: b64(PNG), content_type: "image/png", content_id: "logo" },
        { file_name: "a.txt", content: b64("hello\n") },
      ],
    },
  ],
  [
    "attachments at Base64's line edges (0, 57, 58, 114 bytes)",
    {
      from: "ann@sender.test",
      to: "bob@example.org",
      subject: "edges",
      plain: "x",
      attachments: [0, 57, 58, 114].map((n) => ({
        file_name: `f${n}.bin`,
        content: b64(BINARY.subarray(0, n)),
        content_type: "application/octet-stream",
      })),
    },
  ],
  [
    "mostly non-Latin text (nodemailer picks Base64 for it)",
    {
      from: '"山田太郎" <ann@sender.test>',
      to: "bob@example.org",
      subject: "お知らせ",
      plain: "こんにちは。来月の予定をお知らせします。\n".repeat(20),
      html: "<p>こんにちは。</p>",
    },
  ],
  [
    "custom headers (repeated, non-ASCII value)",
    {
      from: "ann@sender.test",
      to: "bob@example.org",
      subject: "h",
      plain: "x",
      headers: { "X-Campaign": ["a", "b"], "List-Unsubscribe": "<https://sender.test/u?x=1>", "X-Note": "naïve café" },
    },
  ],
  [
    "cc and reply-to",
    {
      from: "ann@sender.test",
      to: "bob@example.org",
      cc: ['"Dave" <dave@example.net>', "erin@example.net"],
      subject: "cc",
      plain: "x",
      headers: { "Reply-To": '"Support Team" <support@sender.test>' },
    },
  ],
];

const RULES = { maxRecipients: 50, blockedExtensions: [], markdownAllowed: true, forcedTestMode: false };
const DATE = new Date(Date.UTC(2026, 10, 24, 22, 0, 0));
const ID = "<m1@mx.postroom.test>";
const draftOf = (body: MessageBody) => draftFromBody(body, RULES);
const nodemailerBuild = (mail: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> =>
  new Promise((resolve, reject) => new MailComposer(mail).compile().build((err, msg) => (err ? reject(err) : resolve(msg))));

/** The MIME tree as content types, nested: "multipart/mixed(multipart/alternative(text/plain,text/html),image/png)". */
function treeOf(raw: Buffer): string {
  const text = raw.toString("latin1");
  const walk = (part: string): string => {
    const head = part.slice(0, part.indexOf("\r\n\r\n") + 2).replace(/\r\n[ \t]+/g, " ");
    const type = /^content-type:\s*([^;\r\n]+)/im.exec(head)?.[1]?.trim().toLowerCase() ?? "text/plain";
    if (!type.startsWith("multipart/")) return type;
    const boundary = /boundary="?([^";\r\n]+)"?/i.exec(head)![1]!;
    const body = part.slice(part.indexOf("\r\n\r\n") + 4);
    const children = body
      .split(`--${boundary}`)
      .slice(1, -1)
      .map((c) => walk(c.replace(/^\r\n/, "")));
    return `${type}(${children.join(",")})`;
  };
  return walk(text);
}

/** What a recipient sees, as mailparser reads it. */
function seen(m: ParsedMail) {
  const headers = [...m.headers].filter(([k]) => k !== "content-type").map(([k, v]) => [k, JSON.stringify(v)]);
  const contentType = m.headers.get("content-type") as { value: string; params: Record<string, string> } | undefined;
  return {
    headers,
    contentType: contentType?.value,
    subject: m.subject,
    text: m.text,
    html: m.html,
    attachments: m.attachments.map((a) => ({
      name: a.filename,
      type: a.contentType,
      cid: a.cid ?? null,
      disposition: a.contentDisposition,
      related: a.related ?? false,
      hex: a.content.toString("hex"),
    })),
  };
}

describe("mime-writer writes MailComposer's tree as its build() does", () => {
  for (const [name, body] of DRAFTS) {
    test(name, async () => {
      const tree = new MailComposer(mailOptionsOf(draftOf(body), ID, DATE)).compile();
      const streamed = await new Promise<Buffer>((resolve, reject) => tree.build((err, msg) => (err ? reject(err) : resolve(msg))));
      expect(writeMime(tree).toString("latin1")).toBe(streamed.toString("latin1"));
    });
  }
});

describe("composeMessage: a recipient sees what nodemailer's build() gave", () => {
  for (const [name, body] of DRAFTS) {
    test(name, async () => {
      const draft = draftOf(body);
      const composed = (await composeMessage(draft, ID, DATE)).raw;
      const old = toCrlf(await nodemailerBuild(mailOptionsOf(draft, ID, DATE)));
      // CRLF everywhere: no bare LF or CR.
      expect(composed.toString("latin1").replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
      // Unfolded header and body lines are within RFC 5322's 998 and MailComposer's 78/76 where it folds.
      for (const line of composed.toString("latin1").split("\r\n")) expect(line.length).toBeLessThanOrEqual(998);
      expect(treeOf(composed)).toBe(treeOf(old));
      const [mine, theirs] = await Promise.all([simpleParser(composed, { keepCidLinks: true }), simpleParser(old, { keepCidLinks: true })]);
      expect(seen(mine)).toEqual(seen(theirs));
    });
  }

  test("the table covers the shapes: 7bit, QP, Base64, alternative, related, mixed", async () => {
    const all = await Promise.all(DRAFTS.map(async ([, body]) => (await composeMessage(draftOf(body), ID, DATE)).raw.toString("latin1")));
    const joined = all.join("\n");
    for (const needle of [
      "Content-Transfer-Encoding: 7bit",
      "Content-Transfer-Encoding: quoted-printable",
      "Content-Transfer-Encoding: base64",
      "multipart/alternative",
      "multipart/related",
      "multipart/mixed",
      "=?UTF-8?",
      "filename*0*=utf-8''",
    ]) {
      expect(joined).toContain(needle);
    }
  });

  test("one case read in detail: UTF-8 subject, names and a non-ASCII file name decode for the recipient", async () => {
    const body = { ...DRAFTS[1]![1], attachments: [{ file_name: "Übersicht.pdf", content: b64("%PDF"), content_type: "application/pdf" }] };
    const m = await simpleParser((await composeMessage(draftOf(body), ID, DATE)).raw);
    expect(m.subject).toBe(body.subject!);
    expect(m.from?.value[0]).toEqual({ address: "ann@sender.test", name: "Anna Müller" });
    expect(m.to && "value" in m.to ? m.to.value.map((a) => a.name) : []).toEqual(["Józef Żółć", ""]);
    expect(m.text?.trim()).toBe("Grüße aus Köln");
    expect(m.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([["Übersicht.pdf", "%PDF"]]);
  });
});
