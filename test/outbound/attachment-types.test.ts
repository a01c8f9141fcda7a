// The content type of an E11 attachment: given (with parameters, as Go's
// http.DetectContentType writes them), or inferred from the file name when empty or absent.
import { describe, expect, test } from "bun:test";
import { draftFromBody, type MessageBody } from "../../src/outbound/compose/message-input.ts";

const rules = { maxRecipients: 20, blockedExtensions: [], markdownAllowed: false, forcedTestMode: false };
const typeOf = (file_name: string, content_type?: string): string => {
  const attachment: NonNullable<MessageBody["attachments"]>[number] = { file_name, content: "AAAA" };
  if (content_type !== undefined) attachment.content_type = content_type;
  return draftFromBody({ from: "a@sender.test", to: "b@example.org", plain: "x", attachments: [attachment] }, rules).attachments[0]!
    .contentType;
};

describe("the type used for an attachment", () => {
  const cases: [name: string, fileName: string, given: string | undefined, used: string][] = [
    ["given", "logo.png", "image/png", "image/png"],
    ["given, with a parameter (Go's DetectContentType)", "notes.txt", "text/plain; charset=utf-8", "text/plain; charset=utf-8"],
    ["given, with a quoted parameter", "a.txt", 'text/plain; name="a b.txt"', 'text/plain; name="a b.txt"'],
    ["given, differing from the name: kept", "logo.png", "application/octet-stream", "application/octet-stream"],
    ["empty: from the extension", "logo.png", "", "image/png"],
    ["empty: from an upper-case extension", "INVOICE.PDF", "", "application/pdf"],
    ["blank: from the extension", "table.csv", "  ", "text/csv"],
    ["absent: from the extension", "page.html", undefined, "text/html"],
    ["empty, an unknown extension", "data.zzqx", "", "application/octet-stream"],
    ["empty, no extension", "README", "", "application/octet-stream"],
  ];
  for (const [name, fileName, given, used] of cases) test(name, () => expect(typeOf(fileName, given)).toBe(used));
});

describe("still refused: 422 naming the field", () => {
  test.each(["text", "text/plain;", "text/plain; charset", "image/png\r\nBcc: x@example.org", "a b/c"])("%p", (content_type) => {
    expect(() => typeOf("a.txt", content_type)).toThrow("attachments[0].content_type: must be a MIME type such as image/png");
  });
});
