// patches/mailparser@3.9.31.patch (option rootHeaderKeys): mailparser decodes only the
// top-level headers Postroom reads (From, Subject, Message-ID, Content-ID), which made a
// parse about a sixth cheaper (bench/RESULTS.md: 157 -> 129 µs on the benchmark message).
// The payload still carries every header (from the raw header lines), and MIME parts keep
// all of theirs. Without the patch mailparser ignores the option and decodes them all.
import { expect, test } from "bun:test";
import { extractMessage } from "../../../src/inbound/parse/extract.ts";
import { parseMessage, ROOT_HEADER_KEYS } from "../../../src/inbound/parse/parse.ts";

const LIMITS = { maxHeaderBytes: 65_536, maxMimeDepth: 20, maxMimeParts: 100 };
const MESSAGE = Buffer.from(
  [
    "Received: from mail.sender.example.org (mail.sender.example.org [192.0.2.7]) by mx.example.net; Fri, 27 Nov 2026 10:00:01 +0000",
    'From: "Alice Example" <alice@sender.example.org>',
    "To: =?UTF-8?Q?J=C3=B6rg?= <joerg@example.net>, Bob <bob@example.net>",
    "Cc: carol@example.net",
    "Reply-To: help@sender.example.org",
    "Date: Fri, 27 Nov 2026 10:00:00 +0000",
    "Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=",
    "Message-ID: <m1@sender.example.org>",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="b1"',
    "",
    "--b1",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Hello",
    "--b1",
    'Content-Type: text/plain; name="notes.txt"',
    'Content-Disposition: attachment; filename="=?UTF-8?Q?n=C3=B6tes.txt?="',
    "Content-ID: <notes@sender.example.org>",
    "",
    "some notes",
    "--b1--",
    "",
  ].join("\r\n"),
);

test("only the root headers Postroom reads are decoded; what it reads is intact", async () => {
  const parsed = await parseMessage(MESSAGE, LIMITS);
  expect([...parsed.headers.keys()].sort()).toEqual(["from", "message-id", "subject"]);
  expect([...parsed.headers.keys()].every((key) => ROOT_HEADER_KEYS.has(key))).toBe(true);
  expect(parsed.to).toBeUndefined();
  expect(parsed.date).toBeUndefined();
  expect(parsed.from?.value).toEqual([{ address: "alice@sender.example.org", name: "Alice Example" }]);
  expect(parsed.subject).toBe("Grüße");
  expect(parsed.messageId).toBe("<m1@sender.example.org>");
});

test("the payload still has every header, and a MIME part keeps its own", async () => {
  const { content, facts, messageId, subject } = await extractMessage(MESSAGE, LIMITS);
  expect(content.headers.to).toBe("Jörg <joerg@example.net>, Bob <bob@example.net>");
  expect(content.headers.cc).toBe("carol@example.net");
  expect(content.headers.date).toBe("Fri, 27 Nov 2026 10:00:00 +0000");
  expect(content.headers.received).toBeDefined();
  expect({ facts, messageId, subject }).toEqual({
    facts: { hasDkimSignature: false, fromAddresses: ["alice@sender.example.org"], fromFields: 1 },
    messageId: "m1@sender.example.org",
    subject: "Grüße",
  });
  expect(content.attachments.map((a) => [a.fileName, a.contentId, a.content.toString()])).toEqual([
    ["nötes.txt", "<notes@sender.example.org>", "some notes"],
  ]);
});
