// The benchmarks' message: a ~4 KB newsletter-style mail with the headers a real one
// carries, a quoted-printable text part and its HTML alternative. Built once; each send
// only swaps in its own Message-ID, so every message is distinct (distinct md5s) and of
// identical size and shape. buildMessage gives it from sender.bench.test, unsigned (what
// bench:outbound, bench:webhooks and bench:purge send; in bench:outbound each sender adds
// its DKIM signatures on the way out); bench:inbound sends it from many sender domains,
// each with its own DKIM signature (bench/signed-senders.ts), built on messageParts.

export const SENDER_DOMAIN = "sender.bench.test";
export const MAIL_FROM = `news@${SENDER_DOMAIN}`;

const PARAGRAPHS = [
  "Thanks for being part of the Postroom early access group. This month we shipped faster inbound delivery, a new incoming-status search and better handling of oversized attachments.",
  "Inbound messages are now parsed once and posted to every address they reach in parallel, so a message to several addresses costs little more than a message to one. Targets that answer slowly no longer hold up the others.",
  "Incoming statuses can be searched by sender, recipient, subject and date. Try a query such as from:billing created_at>2024-05-01 in the dashboard or through the API, and let us know what else you would like to filter on.",
  "Attachments can be kept on local disk or in an S3 bucket and handed to your target as signed URLs instead of Base64 inside the payload. Large files no longer make your target's request bodies grow without bound.",
  "As always, reply to this message if something does not work the way you expect. Every reply reaches a person on the team, usually within a working day.",
];

function qpEncode(text: string): string {
  // Quoted-printable (RFC 2045): escape "=" and non-ASCII, soft-break lines at 76 characters.
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const enc = Array.from(Buffer.from(line, "utf8"), (b) =>
      b === 0x3d || b > 0x7e || (b < 0x20 && b !== 0x09) ? `=${b.toString(16).toUpperCase().padStart(2, "0")}` : String.fromCharCode(b),
    ).join("");
    let rest = enc;
    while (rest.length > 76) {
      let cut = 75;
      // Never split an =XX escape.
      const eq = rest.lastIndexOf("=", cut);
      if (eq > cut - 3) cut = eq;
      out.push(rest.slice(0, cut) + "=");
      rest = rest.slice(cut);
    }
    out.push(rest);
  }
  return out.join("\r\n");
}

export interface BenchMessage {
  /** The wire bytes for message number `i` (CRLF, dot-stuffed, ending in CRLF "." CRLF). */
  data(i: number): Uint8Array;
  /** Size of one message without the final "." line. */
  size: number;
}

/** Width of the Message-ID's local part, so every message has the same size. */
export const MESSAGE_ID_WIDTH = 12;

/** The local part of message `i`'s Message-ID: `bench-000042`, MESSAGE_ID_WIDTH characters. */
export const messageIdOf = (i: number) => `bench-${String(i).padStart(MESSAGE_ID_WIDTH - 6, "0")}`;

/** The message as text: its header section for a Message-ID and a sender's domain (no final CRLF), and its body (from the blank line on). */
export interface MessageParts {
  head(id: string, domain: string): string;
  body: string;
}

/** SMTP's dot-stuffing (RFC 5321 section 4.5.2) of a message's lines. */
export const dotStuff = (s: string) => s.replace(/(^|\r\n)\./g, "$1..");

/** The wire bytes after DATA of `head` (already dot-stuffed) and a body's prepared `tail`. */
export const wireOf = (stuffedHead: string, tail: Buffer) => Buffer.concat([Buffer.from(stuffedHead + "\r\n", "latin1"), tail]);

/** The body as sent: dot-stuffed, with the final "." line. */
export const wireTail = (body: string) => Buffer.from(dotStuff(body) + "\r\n.\r\n", "latin1");

export function messageParts(rcptTo: string): MessageParts {
  const text = [
    "Hello,",
    "",
    ...PARAGRAPHS.flatMap((p) => [p, ""]),
    "The Postroom team",
    "",
    "You get this mail because you joined early access. Unsubscribe: https://sender.bench.test/unsubscribe?u=8f2c1e",
  ].join("\n");
  const html = [
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Postroom news</title></head>',
    '<body style="margin:0;padding:0;font-family:Helvetica,Arial,sans-serif;color:#222;">',
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td style="padding:24px;">',
    "<p>Hello,</p>",
    ...PARAGRAPHS.map((p) => `<p style="line-height:1.5;margin:0 0 16px 0;">${p}</p>`),
    "<p>The Postroom team</p>",
    '<p style="font-size:12px;color:#888;">You get this mail because you joined early access. <a href="https://sender.bench.test/unsubscribe?u=8f2c1e">Unsubscribe</a></p>',
    "</td></tr></table></body></html>",
  ].join("\n");
  const boundary = "----=_Part_4711_1296432170.1716200000000";
  const head = (id: string, domain: string) =>
    [
      `Received: from mail.${domain} (mail.${domain} [127.0.0.1]) by relay.${domain} with ESMTPS id 4Vq7Xk2Lm9z; Mon, 20 May 2024 10:13:20 +0000`,
      `From: "Postroom News" <news@${domain}>`,
      `To: <${rcptTo}>`,
      `Subject: What's new in Postroom this month`,
      `Date: Mon, 20 May 2024 10:13:20 +0000`,
      `Message-ID: <${id}@${domain}>`,
      `Reply-To: support@${domain}`,
      `List-Unsubscribe: <https://${domain}/unsubscribe?u=8f2c1e>, <mailto:unsubscribe@${domain}>`,
      `List-Unsubscribe-Post: List-Unsubscribe=One-Click`,
      `X-Mailer: bench-mailer 1.0`,
      `MIME-Version: 1.0`,
      `Content-Type: multipart/alternative; boundary="${boundary}"`,
    ].join("\r\n");
  const body = [
    "",
    `--${boundary}`,
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    qpEncode(text),
    `--${boundary}`,
    "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    qpEncode(html),
    `--${boundary}--`,
    "",
  ].join("\r\n");
  return { head, body };
}

export function buildMessage(rcptTo: string): BenchMessage {
  const { head, body } = messageParts(rcptTo);
  const tail = wireTail(body);
  const size = Buffer.byteLength(head(messageIdOf(0), SENDER_DOMAIN) + "\r\n" + body);
  return {
    size,
    data: (i: number) => wireOf(dotStuff(head(messageIdOf(i), SENDER_DOMAIN)), tail),
  };
}
