// {"store": "local"}: attachments kept under data_dir/attachments and served by the
// HTTP listener at signed URLs that stop working after inbound.attachment_url_ttl.
// The signature (HMAC-SHA256 over ID and expiry) is what grants access: without it, or
// after the expiry, the file is 404 as if it did not exist.
import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileDurably } from "../lib/durable-file.ts";
import { randomHex } from "../lib/ids.ts";
import type { MessageAttachment } from "./payload.ts";

export const ATTACHMENT_PATH_PREFIX = "/attachments";

interface Meta {
  file_name: string;
  content_type: string;
  expires_at_ms: number;
}

export class LocalAttachmentStore {
  private readonly dir: string;

  constructor(
    dataDir: string,
    private readonly key: Buffer,
    private readonly publicUrl: () => string,
  ) {
    this.dir = join(dataDir, "attachments");
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  private sign(id: string, expiresS: number): string {
    return createHmac("sha256", this.key).update(`${id}.${expiresS}`).digest("hex");
  }

  /** Stores the attachment and returns its signed URL. */
  save(a: MessageAttachment, nowMs: number, ttlMs: number): string {
    const id = randomHex(16);
    const expiresAtMs = nowMs + ttlMs;
    const expiresS = Math.floor(expiresAtMs / 1000);
    writeFileDurably(join(this.dir, `${id}.bin`), a.content);
    const meta: Meta = { file_name: a.fileName, content_type: a.contentType, expires_at_ms: expiresS * 1000 };
    writeFileDurably(join(this.dir, `${id}.json`), JSON.stringify(meta));
    const url = new URL(`${this.publicUrl()}${ATTACHMENT_PATH_PREFIX}/${id}/${encodeURIComponent(a.fileName)}`);
    url.searchParams.set("expires", String(expiresS));
    url.searchParams.set("signature", this.sign(id, expiresS));
    return url.toString();
  }

  /** The file behind a signed URL, or null (unknown, forged, altered or expired: all alike). */
  open(id: string, expires: string, signature: string, nowMs: number): { meta: Meta; path: string } | null {
    if (!/^[0-9a-f]{32}$/.test(id) || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return null;
    const expected = Buffer.from(this.sign(id, Number(expires)), "hex");
    if (!timingSafeEqual(expected, Buffer.from(signature, "hex"))) return null;
    if (Number(expires) * 1000 <= nowMs) return null;
    try {
      const meta = JSON.parse(readFileSync(join(this.dir, `${id}.json`), "utf8")) as Meta;
      return { meta, path: join(this.dir, `${id}.bin`) };
    } catch {
      return null;
    }
  }

  /** Deletes every attachment whose URL has expired; returns how many. */
  purgeExpired(nowMs: number): number {
    let removed = 0;
    for (const name of readdirSync(this.dir)) {
      if (!name.endsWith(".json")) continue;
      const id = name.slice(0, -5);
      try {
        const meta = JSON.parse(readFileSync(join(this.dir, name), "utf8")) as Meta;
        if (meta.expires_at_ms > nowMs) continue;
      } catch {
        // Unreadable metadata: the file cannot be served, so it goes too.
      }
      rmSync(join(this.dir, `${id}.bin`), { force: true });
      rmSync(join(this.dir, name), { force: true });
      removed++;
    }
    return removed;
  }
}
