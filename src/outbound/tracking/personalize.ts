// The per-recipient touches of a message at delivery: tracking (an open pixel and link
// redirects in HTML parts, through mailsplit so every transfer encoding stays right)
// and List-Unsubscribe headers (RFC 2369, RFC 8058 one-click). The List-Unsubscribe URL is
// ours, signed (/t/u/<token>): Postroom checks it before it passes the request on to the
// account's unsubscribe.url (api/unsubscribe.ts). DKIM signing comes after.
import { Joiner, Rewriter, Splitter } from "@zone-eu/mailsplit";
import { Readable, Transform } from "node:stream";
import { clickToken, openToken, unsubscribeToken } from "./tracking-tokens.ts";

export interface Tracking {
  opens: boolean;
  clicks: boolean;
  unsubscribe: { url: string | null; mailto: string | null };
}

export interface PersonalizeContext {
  publicUrl: string;
  key: Buffer;
  messageId: string;
  outboundAccountId: string;
  recipientId: string;
  recipient: string;
  /** When the click links of this copy stop redirecting (outbound.tracking_link_ttl after acceptance). */
  linkExpiresAtMs: number;
}

export const needsPersonalizing = (t: Tracking): boolean =>
  t.opens || t.clicks || t.unsubscribe.url !== null || t.unsubscribe.mailto !== null;

const HREF = /(<a\b[^>]*?\bhref\s*=\s*)(["'])(https?:\/\/[^"'<>\s]+)\2/gi;
const unescapeHtml = (s: string) => s.replace(/&amp;/g, "&");
const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;");

/** Pure: the HTML (as a byte-preserving string) with links rewritten and the pixel added. */
export function trackHtml(html: string, t: Pick<Tracking, "opens" | "clicks">, ctx: PersonalizeContext): string {
  let out = html;
  const target = { messageId: ctx.messageId, recipientId: ctx.recipientId };
  if (t.clicks) {
    out = out.replace(HREF, (_all, before: string, quote: string, url: string) => {
      const tracked = `${ctx.publicUrl}/t/c/${clickToken(ctx.key, { ...target, url: unescapeHtml(url), expiresAtMs: ctx.linkExpiresAtMs })}`;
      return `${before}${quote}${escapeHtml(tracked)}${quote}`;
    });
  }
  if (t.opens) {
    const pixel = `<img src="${ctx.publicUrl}/t/o/${openToken(ctx.key, target)}.gif" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`;
    const close = out.search(/<\/body\s*>(?![\s\S]*<\/body\s*>)/i);
    out = close >= 0 ? out.slice(0, close) + pixel + out.slice(close) : out + pixel;
  }
  return out;
}

export function unsubscribeHeaders(u: Tracking["unsubscribe"], ctx: PersonalizeContext): [string, string][] {
  const targets: string[] = [];
  if (u.url) {
    const token = unsubscribeToken(ctx.key, {
      messageId: ctx.messageId,
      recipientId: ctx.recipientId,
      outboundAccountId: ctx.outboundAccountId,
      recipient: ctx.recipient,
    });
    targets.push(`<${ctx.publicUrl}/t/u/${token}>`);
  }
  if (u.mailto) targets.push(`<mailto:${u.mailto}?subject=${encodeURIComponent(`unsubscribe ${ctx.messageId}`)}>`);
  if (targets.length === 0) return [];
  const headers: [string, string][] = [["List-Unsubscribe", targets.join(", ")]];
  if (u.url) headers.push(["List-Unsubscribe-Post", "List-Unsubscribe=One-Click"]);
  return headers;
}

interface SplitNode {
  type: string;
  root?: boolean;
  headers?: { remove(key: string): void; add(key: string, value: string, index?: number): void };
}

export async function personalize(raw: Buffer, t: Tracking, ctx: PersonalizeContext): Promise<Buffer> {
  const headers = unsubscribeHeaders(t.unsubscribe, ctx);
  // The root node comes first out of the splitter: that is where message headers go.
  const addHeaders = new Transform({
    objectMode: true,
    transform(data: SplitNode, _enc, cb) {
      if (data.type === "node" && data.root && data.headers) {
        for (const [k] of headers) data.headers.remove(k);
        for (const [i, [k, v]] of headers.entries()) data.headers!.add(k, v, i);
      }
      cb(null, data);
    },
  });
  const rewriter = new Rewriter((node) => (t.opens || t.clicks) && node.contentType === "text/html");
  rewriter.on("node", (data: { decoder: NodeJS.ReadableStream; encoder: NodeJS.WritableStream }) => {
    const chunks: Buffer[] = [];
    data.decoder.on("data", (c: Buffer) => chunks.push(c));
    // Byte-preserving: only ASCII is inserted, so any ASCII-compatible charset survives.
    data.decoder.on("end", () => data.encoder.end(Buffer.from(trackHtml(Buffer.concat(chunks).toString("binary"), t, ctx), "binary")));
  });
  const splitter = new Splitter();
  const joiner = new Joiner();
  const out: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    for (const s of [splitter, addHeaders, rewriter, joiner] as NodeJS.EventEmitter[]) s.on("error", reject);
    (joiner as NodeJS.EventEmitter).on("data", (c: Buffer) => out.push(c));
    (joiner as NodeJS.EventEmitter).on("end", resolve);
    Readable.from([raw]).pipe(splitter).pipe(addHeaders).pipe(rewriter).pipe(joiner);
  });
  return Buffer.concat(out);
}
