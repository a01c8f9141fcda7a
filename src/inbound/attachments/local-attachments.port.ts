// Where {"store": "local"} attachments and kept messages (store_messages) live, behind
// signed URLs (attachment-url.ts): files under data_dir/attachments on SQLite
// (attachment-files.ts), the blobs table on PostgreSQL (local-attachments.pg.repo.ts), so
// that a URL made by one node opens on every node sharing the database.
import type { MessageAttachment } from "../payload/payload.ts";

export interface OpenedAttachment {
  fileName: string;
  contentType: string;
  /** The bytes: a file on disk is read as it is sent, a row's bytes are already in memory. */
  body: Blob;
}

export interface LocalAttachments {
  /** Stores the attachment and returns its signed URL, valid for `ttlMs`. */
  save(a: MessageAttachment, nowMs: number, ttlMs: number): Promise<string>;
  /** The attachment behind a signed URL's parts, or null (unknown, forged, altered or expired: all alike). */
  open(id: string, expires: string, signature: string, nowMs: number): Promise<OpenedAttachment | null>;
  /** Deletes every attachment whose URL has expired; returns how many. */
  purgeExpired(nowMs: number): Promise<number>;
}
