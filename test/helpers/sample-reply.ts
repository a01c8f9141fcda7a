// A real message worth receiving in payload tests: a DKIM-signed reply with quoted history,
// text and HTML, an inline image and an attachment, sent over SMTP with nodemailer.
import { expect } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { sendWithNodemailer } from "./smtp.ts";

/** A 1x1 PNG. */
export const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a6a30000000049454e44ae426082",
  "hex",
);

/** Sends the reply to `to` at the inbound listener on `port` and expects it accepted. */
export async function sendSampleReply(port: number, to: string[]): Promise<void> {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const result = await sendWithNodemailer(port, {
    from: '"Alice Example" <alice@sender.example.org>',
    to,
    subject: "Re: Invoice 2026-118",
    inReplyTo: "<inv-2026-118@shop.example.net>",
    text: "Thanks, paid today.\n\nAlice\n\nOn Mon, 23 Nov 2026, Shop <billing@shop.example.net> wrote:\n> Your invoice is attached.\n",
    html: '<p>Thanks, paid today.</p><p><img src="cid:logo@sender.example.org"></p>',
    attachments: [
      { filename: "logo.png", content: PNG, contentType: "image/png", cid: "logo@sender.example.org" },
      { filename: "receipt.txt", content: "Paid: 118.00 EUR\n", contentType: "text/plain" },
    ],
    dkim: {
      domainName: "sender.example.org",
      keySelector: "s2026",
      privateKey: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    },
  });
  expect(result.response).toBe("250 2.0.0 Accepted");
}
