// Signed attachment URLs verify only as issued (issue 31, finding 8): another spelling of
// the same expiry (leading zeros) or of the signature (upper case, padding) is refused.
import { describe, expect, test } from "bun:test";
import { AttachmentUrls } from "../../../src/inbound/attachments/attachment-url.ts";

const urls = new AttachmentUrls(Buffer.alloc(32, 7), () => "https://mail.example.org");
const NOW = 1_700_000_000_000;
const issued = new URL(urls.issue("a.pdf", NOW, 3_600_000).url);
const id = issued.pathname.split("/")[2]!;
const expires = issued.searchParams.get("expires")!;
const signature = issued.searchParams.get("signature")!;

describe("AttachmentUrls.valid", () => {
  test.each([
    ["as issued", id, expires, signature, true],
    ["expiry with a leading zero", id, `0${expires}`, signature, false],
    ["expiry with a plus sign", id, `+${expires}`, signature, false],
    ["signature in upper case", id, expires, signature.toUpperCase(), false],
    ["signature padded", id, expires, `${signature}=`, false],
    ["another id", "0".repeat(32), expires, signature, false],
  ])("%s: %p", (_name, i, e, s, ok) => {
    expect(urls.valid(i, e, s, NOW)).toBe(ok);
  });
  test("expired", () => expect(urls.valid(id, expires, signature, NOW + 3_601_000)).toBe(false));
});
