// The signed URLs of locally stored attachments and kept messages, the same whichever
// engine holds the bytes (files under data_dir on SQLite, the blobs table on PostgreSQL):
// /attachments/{id}/{file name}?expires={s}&signature={HMAC-SHA256 of "id.expires" under
// data_dir/keys/url-signing.key}. The signature is what grants access, so a URL one node
// made opens on every node that has the same key (docs/operations.md: copy keys/).
import { createHmac, timingSafeEqual } from "node:crypto";
import { randomHex } from "../../lib/ids.ts";

export const ATTACHMENT_PATH_PREFIX = "/attachments";

/** A new attachment's id, its signed URL and when that URL stops working (whole seconds, as signed). */
export interface IssuedUrl {
  id: string;
  url: string;
  expiresAtMs: number;
}

export class AttachmentUrls {
  constructor(
    private readonly key: Buffer,
    private readonly publicUrl: () => string,
  ) {}

  private sign(id: string, expiresS: number): string {
    return createHmac("sha256", this.key).update(`${id}.${expiresS}`).digest("hex");
  }

  /** A fresh id and its URL, valid for `ttlMs` from `nowMs`. */
  issue(fileName: string, nowMs: number, ttlMs: number): IssuedUrl {
    const id = randomHex(16);
    const expiresS = Math.floor((nowMs + ttlMs) / 1000);
    const url = new URL(`${this.publicUrl()}${ATTACHMENT_PATH_PREFIX}/${id}/${encodeURIComponent(fileName)}`);
    url.searchParams.set("expires", String(expiresS));
    url.searchParams.set("signature", this.sign(id, expiresS));
    return { id, url: url.toString(), expiresAtMs: expiresS * 1000 };
  }

  /**
   * Whether a URL's parts are ours, unaltered and not expired (malformed ones are not).
   * Each part only as we write it: an expiry with a leading zero would be another valid
   * URL for the same signature.
   */
  valid(id: string, expires: string, signature: string, nowMs: number): boolean {
    if (!/^[0-9a-f]{32}$/.test(id) || !/^[1-9]\d{0,11}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
    const expected = Buffer.from(this.sign(id, Number(expires)), "hex");
    if (!timingSafeEqual(expected, Buffer.from(signature, "hex"))) return false;
    return Number(expires) * 1000 > nowMs;
  }
}
