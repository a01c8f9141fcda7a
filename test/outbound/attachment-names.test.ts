import { describe, expect, test } from "bun:test";
import { blockedExtensionOf, normalizedFileName } from "../../src/outbound/compose/attachment-names.ts";
import { draftFromBody } from "../../src/outbound/compose/message-input.ts";

const BLOCKED = ["vbs", "exe", "bin", "bat", "chm", "com", "hta", "pif", "reg", "vbe", "vba", "msc", "msi"];

describe("blockedExtensionOf: the extension a file name has where it is saved", () => {
  test.each([
    // file name as given, → the blocked extension found (null: allowed)
    ["invoice.pdf", null],
    ["evil.exe", "exe"],
    ["EVIL.ExE", "exe"],
    ["invoice.pdf.exe", "exe"],
    ["evil.exe.", "exe"],
    ["evil.exe...", "exe"],
    ["evil.exe ", "exe"],
    ["evil.exe . .", "exe"],
    ["evil.exe\u00a0", "exe"],
    ["evil.exe::$DATA", "exe"],
    ["evil.exe::$data.", "exe"],
    ["evil.exe\u200b", "exe"],
    ["evil.e\u200bxe", "exe"],
    ["evil\u202egnp.exe", "exe"],
    ["=?UTF-8?Q?evil=2Eexe?=", "exe"],
    ["=?utf-8?B?ZXZpbC5leGU=?=", "exe"],
    ["evil%2Eexe", "exe"],
    ["evil.exe%00.txt", "exe"],
    ["evil.exe%2e", "exe"],
    ["evil.exe.txt", null],
    ["exe", null],
    [".exe", "exe"],
    ["report.v1.0", null],
    ["100%.txt", null],
    ["setup.msi", "msi"],
    ["script.VBS.", "vbs"],
    // Issue 31: quotes (which Windows cannot store, and a careless quoting leaves around
    // the name), RFC 2231 values, and the same after encoded words.
    ['evil.exe"', "exe"],
    ['"evil.exe"', "exe"],
    ["'evil.exe'", "exe"],
    ['evil.exe"."', "exe"],
    ["evil.exe<", "exe"],
    ["evil.exe|", "exe"],
    ["evil.exe?", "exe"],
    ["evil.exe*", "exe"],
    ["evil.exe:", "exe"],
    ["UTF-8''evil%2Eexe", "exe"],
    ["utf-8'en'evil.%65xe", "exe"],
    ["iso-8859-1''evil.exe%22", "exe"],
    ["=?UTF-8?Q?evil.exe=22?=", "exe"],
    ['report "final".pdf', null],
    ["it's.pdf", null],
  ])("%p → %p", (name, ext) => expect(blockedExtensionOf(name, BLOCKED)).toBe(ext));

  test("the configured list is read without regard to case", () => {
    expect(blockedExtensionOf("evil.exe", ["EXE"])).toBe("exe");
  });

  test("normalizedFileName: what Windows keeps", () => {
    expect(normalizedFileName("a.exe. . ")).toBe("a.exe");
    expect(normalizedFileName("a.exe\u0000.txt")).toBe("a.exe");
    expect(normalizedFileName("report final.pdf")).toBe("report final.pdf");
  });
});

describe("draftFromBody refuses those names (E11's 422)", () => {
  const rules = { maxRecipients: 20, blockedExtensions: BLOCKED, markdownAllowed: false, forcedTestMode: false };
  test.each(["evil.exe.", "evil.exe::$DATA", "=?UTF-8?Q?evil=2Eexe?=", "evil.exe%00.txt", 'evil.exe"', "UTF-8''evil%2Eexe"])(
    "%p",
    (file_name) => {
      const body = {
        from: "a@sender.test",
        to: "b@example.org",
        plain: "x",
        attachments: [{ file_name, content: "AAAA", content_type: "application/octet-stream" }],
      };
      expect(() => draftFromBody(body, rules)).toThrow("attachments[0].file_name: files ending in .exe are not allowed");
    },
  );
});
