// {"store": "local"} on SQLite: attachments kept under data_dir/attachments and served by
// the HTTP listener at signed URLs (attachment-url.ts) that stop working after
// inbound.attachment_url_ttl. Without the signature, or after the expiry, the file is 404
// as if it did not exist. On PostgreSQL the bytes are in the database instead
// (local-attachments.pg.repo.ts), readable from every node.
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileDurably } from "../../lib/durable-file.ts";
import { AttachmentUrls } from "./attachment-url.ts";
import type { LocalAttachments, OpenedAttachment } from "./local-attachments.port.ts";
import type { MessageAttachment } from "../payload/payload.ts";

interface Meta {
  file_name: string;
  content_type: string;
  expires_at_ms: number;
}

export class LocalAttachmentStore implements LocalAttachments {
  private readonly dir: string;
  private readonly urls: AttachmentUrls;

  constructor(dataDir: string, key: Buffer, publicUrl: () => string) {
    this.dir = join(dataDir, "attachments");
    this.urls = new AttachmentUrls(key, publicUrl);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  async save(a: MessageAttachment, nowMs: number, ttlMs: number): Promise<string> {
    const { id, url, expiresAtMs } = this.urls.issue(a.fileName, nowMs, ttlMs);
    writeFileDurably(join(this.dir, `${id}.bin`), a.content);
    const meta: Meta = { file_name: a.fileName, content_type: a.contentType, expires_at_ms: expiresAtMs };
    writeFileDurably(join(this.dir, `${id}.json`), JSON.stringify(meta));
    return url;
  }

  async open(id: string, expires: string, signature: string, nowMs: number): Promise<OpenedAttachment | null> {
    if (!this.urls.valid(id, expires, signature, nowMs)) return null;
    try {
      const meta = JSON.parse(readFileSync(join(this.dir, `${id}.json`), "utf8")) as Meta;
      return { fileName: meta.file_name, contentType: meta.content_type, body: Bun.file(join(this.dir, `${id}.bin`)) };
    } catch {
      return null;
    }
  }

  async purgeExpired(nowMs: number): Promise<number> {
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
