// Signed tokens for tracking URLs: an open pixel and a List-Unsubscribe URL name a message
// and recipient, a click link also the original URL and when it stops working
// (outbound.tracking_link_ttl after the message was accepted). HMAC-SHA256 with a key kept
// in data_dir: a forged or altered link verifies as nothing (404), so the redirect can
// never be pointed elsewhere, and a link we signed does not stay an open redirect forever.
import { createHmac, timingSafeEqual } from "node:crypto";

export interface OpenTarget {
  messageId: string;
  recipientId: string;
}

export interface ClickTarget extends OpenTarget {
  url: string;
  /** When the link stops redirecting; null in links issued before links carried an expiry. */
  expiresAtMs: number | null;
}

const SIG_BYTES = 16;

function sign(key: Buffer, payload: string): string {
  return createHmac("sha256", key).update(payload).digest().subarray(0, SIG_BYTES).toString("base64url");
}

function seal(key: Buffer, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${payload}.${sign(key, payload)}`;
}

/**
 * The payload of a token we signed, or null. The signature is compared as the exact text
 * we wrote (constant time): a decoder would also take it padded (`=`), in Base64, or with
 * other spare bits, and each such spelling would be another valid URL for the same link.
 */
function open(key: Buffer, token: string): unknown {
  const dot = token.lastIndexOf(".");
  if (dot <= 0) return null;
  const payload = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), "utf8");
  const expected = Buffer.from(sign(key, payload), "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
}

/** What a token's payload says it is for: open, click or unsubscribe. */
export type TokenKind = "open" | "click" | "unsubscribe";

/**
 * Pure: the kind of a token's payload. Tokens carry it (`k`); those issued before they did
 * are told apart by their fields (a click link's has the URL), and unsubscribe tokens
 * always carry it. A token of one kind is never accepted for another (issue 31: a click
 * token recorded an open).
 */
export function tokenKind(v: unknown): TokenKind | null {
  if (typeof v !== "object" || v === null) return null;
  const { k, u, e } = v as { k?: unknown; u?: unknown; e?: unknown };
  if (k === "o") return "open";
  if (k === "c") return "click";
  if (k === "u") return "unsubscribe";
  if (k !== undefined) return null;
  if (u === undefined && e === undefined) return "open";
  return typeof u === "string" ? "click" : null;
}

const openOf = (key: Buffer, token: string, kind: TokenKind): Record<string, unknown> | null => {
  const v = open(key, token);
  return tokenKind(v) === kind ? (v as Record<string, unknown>) : null;
};

export const openToken = (key: Buffer, t: OpenTarget): string => seal(key, { k: "o", m: t.messageId, r: t.recipientId });
/** A click link's token; its expiry is kept to the second. */
export const clickToken = (key: Buffer, t: OpenTarget & { url: string; expiresAtMs: number }): string =>
  seal(key, { k: "c", m: t.messageId, r: t.recipientId, u: t.url, e: Math.ceil(t.expiresAtMs / 1000) });
/** Who a List-Unsubscribe URL unsubscribes: carried in its token, so the link works whatever retention has removed. */
export interface UnsubscribeTarget extends OpenTarget {
  outboundAccountId: string;
  recipient: string;
}

/** A List-Unsubscribe URL's token (RFC 8058 one-click). */
export const unsubscribeToken = (key: Buffer, t: UnsubscribeTarget): string =>
  seal(key, { k: "u", m: t.messageId, r: t.recipientId, o: t.outboundAccountId, a: t.recipient });

const targetOf = (v: Record<string, unknown> | null): OpenTarget | null =>
  v && typeof v.m === "string" && typeof v.r === "string" ? { messageId: v.m, recipientId: v.r } : null;

export const readOpenToken = (key: Buffer, token: string): OpenTarget | null => targetOf(openOf(key, token, "open"));
export function readUnsubscribeToken(key: Buffer, token: string): UnsubscribeTarget | null {
  const v = openOf(key, token, "unsubscribe");
  const target = targetOf(v);
  if (!target || typeof v!.o !== "string" || typeof v!.a !== "string") return null;
  return { ...target, outboundAccountId: v!.o, recipient: v!.a };
}

export function readClickToken(key: Buffer, token: string): ClickTarget | null {
  const v = openOf(key, token, "click") as { m?: unknown; r?: unknown; u?: unknown; e?: unknown } | null;
  if (!v || typeof v.m !== "string" || typeof v.r !== "string" || typeof v.u !== "string") return null;
  if (v.e !== undefined && !Number.isSafeInteger(v.e)) return null;
  // Only what we rewrote can come back: http(s) links.
  if (!/^https?:\/\//i.test(v.u)) return null;
  return { messageId: v.m, recipientId: v.r, url: v.u, expiresAtMs: v.e === undefined ? null : (v.e as number) * 1000 };
}

/**
 * When a click link stops working: the expiry it carries; for a link issued before links
 * carried one, tracking_link_ttl after its message was accepted, or at once when the
 * message is no longer kept (retention), since then nothing says how old the link is.
 */
export function clickLinkExpiresAtMs(target: ClickTarget, messageCreatedAtMs: number | null, ttlMs: number): number {
  if (target.expiresAtMs !== null) return target.expiresAtMs;
  return messageCreatedAtMs === null ? 0 : messageCreatedAtMs + ttlMs;
}
