import { describe, expect, test } from "bun:test";
import {
  clickLinkExpiresAtMs,
  clickToken,
  openToken,
  readClickToken,
  readOpenToken,
  readUnsubscribeToken,
  tokenKind,
  unsubscribeToken,
  type ClickTarget,
} from "../../src/outbound/tracking/tracking-tokens.ts";

const KEY = Buffer.alloc(32, 0x2a);
/** Issued by Postroom before click links carried an expiry, with KEY (message 0e77…aa, recipient r000000000000001). */
const LEGACY_CLICK_TOKEN =
  "eyJtIjoiMGU3NzAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMGFhIiwiciI6InIwMDAwMDAwMDAwMDAwMDEiLCJ1IjoiaHR0cHM6Ly9leGFtcGxlLmNvbS9vbGQtbmV3c2xldHRlciJ9.fjyb3p7XRu91lmzxS72rVQ";

describe("click tokens carry their expiry", () => {
  test("what is signed comes back, the expiry to the second (rounded up)", () => {
    const token = clickToken(KEY, { messageId: "m", recipientId: "r", url: "https://example.com/a?b=1", expiresAtMs: 1_700_000_000_123 });
    expect(readClickToken(KEY, token)).toEqual({
      messageId: "m",
      recipientId: "r",
      url: "https://example.com/a?b=1",
      expiresAtMs: 1_700_000_001_000,
    });
  });

  test("a link from before links carried an expiry still reads, without one", () => {
    expect(readClickToken(KEY, LEGACY_CLICK_TOKEN)).toEqual({
      messageId: "0e770000-0000-4000-8000-0000000000aa",
      recipientId: "r000000000000001",
      url: "https://example.com/old-newsletter",
      expiresAtMs: null,
    });
  });

  test("another key, an altered payload or expiry: nothing", () => {
    const token = clickToken(KEY, { messageId: "m", recipientId: "r", url: "https://example.com/", expiresAtMs: 1000 });
    expect(readClickToken(Buffer.alloc(32, 1), token)).toBeNull();
    const [payload, sig] = token.split(".");
    const later = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), e: 9_999_999_999 })).toString(
      "base64url",
    );
    expect(readClickToken(KEY, `${later}.${sig}`)).toBeNull();
  });
});

describe("clickLinkExpiresAtMs", () => {
  const DAY = 86_400_000;
  const target = (expiresAtMs: number | null): ClickTarget => ({
    messageId: "m",
    recipientId: "r",
    url: "https://example.com/",
    expiresAtMs,
  });
  test.each([
    // the link's own expiry, its message's acceptance (null: no longer kept), ttl → stops working at
    [5 * DAY, 1 * DAY, 180 * DAY, 5 * DAY],
    [5 * DAY, null, 180 * DAY, 5 * DAY],
    [null, 1 * DAY, 180 * DAY, 181 * DAY],
    [null, 1 * DAY, 30 * DAY, 31 * DAY],
    [null, null, 180 * DAY, 0],
  ])("link expiry %p, message accepted at %p, ttl %p → %p", (own, createdAt, ttl, expected) => {
    expect(clickLinkExpiresAtMs(target(own), createdAt, ttl)).toBe(expected);
  });
});

// Issue 31, finding 8: a token is good for its own kind only, and its signature only in
// the exact encoding we wrote (no padding, no other spelling of the same bytes).
describe("a token is read as its own kind only", () => {
  const target = { messageId: "m", recipientId: "r" };
  const tokens = {
    open: openToken(KEY, target),
    click: clickToken(KEY, { ...target, url: "https://example.com/", expiresAtMs: 1000 }),
    unsubscribe: unsubscribeToken(KEY, { ...target, outboundAccountId: "o", recipient: "bob@example.org" }),
    legacyClick: LEGACY_CLICK_TOKEN,
    // An open token as Postroom issued them before tokens carried their kind.
    legacyOpen: "eyJtIjoibSIsInIiOiJyIn0.RUs8r9MoRQZvVNGcm6DgjA",
  };
  const readers = { open: readOpenToken, click: readClickToken, unsubscribe: readUnsubscribeToken };
  test.each([
    // token, reader → read?
    ["open", "open", true],
    ["open", "click", false],
    ["open", "unsubscribe", false],
    ["click", "open", false],
    ["click", "click", true],
    ["click", "unsubscribe", false],
    ["unsubscribe", "open", false],
    ["unsubscribe", "click", false],
    ["unsubscribe", "unsubscribe", true],
    ["legacyOpen", "open", true],
    ["legacyOpen", "click", false],
    ["legacyOpen", "unsubscribe", false],
    ["legacyClick", "open", false],
    ["legacyClick", "click", true],
    ["legacyClick", "unsubscribe", false],
  ] as const)("%s token read as %s: %p", (token, reader, read) => {
    expect(readers[reader](KEY, tokens[token]) !== null).toBe(read);
  });
});

test("an unsubscribe token carries who is unsubscribed from which outbound account", () => {
  const token = unsubscribeToken(KEY, { messageId: "m", recipientId: "r", outboundAccountId: "o", recipient: "bob@example.org" });
  expect(readUnsubscribeToken(KEY, token)).toEqual({
    messageId: "m",
    recipientId: "r",
    outboundAccountId: "o",
    recipient: "bob@example.org",
  });
  expect(readUnsubscribeToken(KEY, `${token}=`)).toBeNull();
});

describe("a signature verifies only as written", () => {
  const token = openToken(KEY, { messageId: "m", recipientId: "r" });
  const [payload, sig] = token.split(".") as [string, string];
  // The same 16 bytes, spelt another way: the last character's 4 spare bits set.
  const lastIndex = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".indexOf(sig.at(-1)!);
  const spareBits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[lastIndex | 1]!;
  test.each([
    ["as issued", token, true],
    ["one trailing =", `${token}=`, false],
    ["two trailing =", `${token}==`, false],
    [
      "Base64 instead of Base64url",
      `${payload}.${Buffer.from(sig, "base64url").toString("base64")}`,
      sig === Buffer.from(sig, "base64url").toString("base64"),
    ],
    ["a space inside", `${payload}.${sig.slice(0, 5)} ${sig.slice(5)}`, false],
    ["the same bytes with spare bits set", `${payload}.${sig.slice(0, -1)}${spareBits}`, spareBits === sig.at(-1)],
    ["cut short", `${payload}.${sig.slice(0, -1)}`, false],
  ])("%s: %p", (_name, given, read) => {
    expect(readOpenToken(KEY, given) !== null).toBe(read);
  });
});

describe("tokenKind: what a token's payload is for", () => {
  test.each([
    // payload → kind
    [{ k: "o", m: "m", r: "r" }, "open"],
    [{ k: "c", m: "m", r: "r", u: "https://x/", e: 1 }, "click"],
    [{ k: "u", m: "m", r: "r", o: "o", a: "a@b.c" }, "unsubscribe"],
    [{ k: "x", m: "m", r: "r" }, null],
    // issued before tokens carried their kind
    [{ m: "m", r: "r" }, "open"],
    [{ m: "m", r: "r", u: "https://x/" }, "click"],
    [{ m: "m", r: "r", u: "https://x/", e: 1 }, "click"],
    [{ m: "m", r: "r", e: 1 }, null],
    [{ m: "m", r: "r", u: 5 }, null],
    [null, null],
    ["open", null],
  ])("%p → %p", (payload, kind) => expect(tokenKind(payload)).toBe(kind as ReturnType<typeof tokenKind>));
});
