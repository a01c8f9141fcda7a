// File names of a raw message's parts, judged by the blocked-extension rule (issue 31,
// finding 9): as written, unquoted, RFC 2231 (filename*=, continuations), encoded words.
import { describe, expect, test } from "bun:test";
import { blockedAttachmentOf, partFileNames } from "../../src/outbound/compose/raw-attachments.ts";

const BLOCKED = ["exe", "bat"];
const message = (partHeaders: string) =>
  Buffer.from(
    [
      "From: ann@sender.test",
      "To: bob@example.org",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="b1"',
      "",
      "--b1",
      "Content-Type: text/plain",
      "",
      "hello",
      "--b1",
      partHeaders,
      "Content-Transfer-Encoding: base64",
      "",
      "TVqQAAMAAAAEAAAA",
      "--b1--",
      "",
    ].join("\r\n"),
  );

describe("blockedAttachmentOf", () => {
  test.each([
    // the part's headers → the blocked extension found (null: allowed)
    ['Content-Type: application/pdf\r\nContent-Disposition: attachment; filename="invoice.pdf"', null],
    ['Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="evil.exe"', "exe"],
    ['Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="evil.exe\\""', "exe"],
    ['Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=evil.exe"', "exe"],
    ["Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename*=UTF-8''evil%2Eexe", "exe"],
    [
      "Content-Type: application/octet-stream\r\nContent-Disposition: attachment;\r\n filename*0*=UTF-8''evil;\r\n filename*1=.e;\r\n filename*2=xe",
      "exe",
    ],
    ['Content-Type: application/octet-stream; name="=?UTF-8?Q?evil=2Eexe?="', "exe"],
    ['Content-Type: application/octet-stream; name="evil.exe."\r\nContent-Disposition: attachment; filename="invoice.pdf"', "exe"],
    [
      'Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="invoice.pdf"\r\nContent-Disposition: attachment; filename="run.bat"',
      "bat",
    ],
    ['Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="evil.exe.txt"', null],
    ['content-type: application/octet-stream\r\ncontent-disposition: attachment;\r\n\tfilename="evil.exe"', "exe"],
    ['Content-Type: application/octet-stream\r\nX-Content-Disposition: attachment; filename="evil.exe"', null],
  ])("%p → %p", async (headers, extension) => {
    const found = await blockedAttachmentOf(message(headers), BLOCKED);
    expect(found?.extension ?? null).toBe(extension);
  });

  test("a nested message/rfc822's parts count too", async () => {
    const inner = message('Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="evil.exe"').toString();
    const outer = message(`Content-Type: message/rfc822\r\n\r\n${inner}`.replace("\r\nContent-Transfer-Encoding: base64", ""));
    expect((await blockedAttachmentOf(outer, BLOCKED))?.extension).toBe("exe");
  });

  test("a message without parts, and an empty list, find nothing", async () => {
    expect(await blockedAttachmentOf(Buffer.from("From: a@b.c\r\n\r\nhi\r\n"), BLOCKED)).toBeNull();
    expect(await blockedAttachmentOf(message('Content-Disposition: attachment; filename="evil.exe"'), [])).toBeNull();
  });
});

describe("partFileNames", () => {
  test("written and decoded, from both headers", () => {
    expect(partFileNames(["attachment; filename*=UTF-8''a%2Eexe"], ['application/x; name="b.pdf"'])).toEqual([
      "a.exe",
      "UTF-8''a%2Eexe",
      "b.pdf",
      '"b.pdf"',
    ]);
  });
});
