// {"store": "local"} on PostgreSQL (only: on SQLite they are files in data_dir,
// attachment-files.ts): the attachments and kept messages go into the blobs table (bytea)
// rather than this node's disk, so the signed URL one node gave a target
// opens on whichever node the target's GET reaches. Same URLs as the files on SQLite
// (attachment-url.ts); the purge deletes expired rows a batch at a time
// (rows another node's purge is deleting are skipped, not waited for).
import type { SQL } from "bun";
import { pgInteger } from "../../store/pg-values.ts";
import { AttachmentUrls } from "./attachment-url.ts";
import type { LocalAttachments } from "./local-attachments.port.ts";

export interface PgLocalAttachmentsOptions {
  /** data_dir/keys/url-signing.key (the same on every node). */
  key: Buffer;
  /** http.public_url of the moment. */
  publicUrl: () => string;
  /** Rows one purge statement deletes at most (retention.batch_size), so no statement holds a long lock or a huge transaction. */
  purgeBatchRows: () => number;
}

export function createPgLocalAttachments(sql: SQL, opts: PgLocalAttachmentsOptions): LocalAttachments {
  const urls = new AttachmentUrls(opts.key, opts.publicUrl);
  return {
    async save(a, nowMs, ttlMs) {
      const { id, url, expiresAtMs } = urls.issue(a.fileName, nowMs, ttlMs);
      await sql`INSERT INTO blobs (id, file_name, content_type, content, expires_at) VALUES (${id}, ${a.fileName}, ${a.contentType}, ${a.content}, ${expiresAtMs})`;
      return url;
    },
    async open(id, expires, signature, nowMs) {
      if (!urls.valid(id, expires, signature, nowMs)) return null;
      const rows: { file_name: string; content_type: string; content: Uint8Array }[] = await sql`
        SELECT file_name, content_type, content FROM blobs WHERE id = ${id} AND expires_at > ${nowMs}`;
      const row = rows[0];
      return row ? { fileName: row.file_name, contentType: row.content_type, body: new Blob([row.content]) } : null;
    },
    async purgeExpired(nowMs) {
      let removed = 0;
      for (;;) {
        const batch = opts.purgeBatchRows();
        const rows: { n: unknown }[] = await sql`
          WITH gone AS (DELETE FROM blobs WHERE id IN (SELECT id FROM blobs WHERE expires_at <= ${nowMs} ORDER BY expires_at LIMIT ${batch} FOR UPDATE SKIP LOCKED) RETURNING 1)
          SELECT count(*) AS n FROM gone`;
        const n = pgInteger(rows[0]?.n, "count");
        removed += n;
        if (n < batch) return removed;
      }
    },
  };
}
