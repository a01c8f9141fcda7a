// {"store": "s3", ...}: attachments uploaded to the address's S3-compatible bucket and
// given as presigned URLs valid for inbound.attachment_url_ttl. The endpoint is a
// user-given host, so it passes the egress guard before every upload.
import { S3Client } from "bun";
import type { DnsResolver } from "../lib/dns.ts";
import { checkedAddress, type EgressPolicy } from "../lib/egress.ts";
import { randomHex } from "../lib/ids.ts";
import type { AttachmentStore } from "./attachment-store.ts";
import type { MessageAttachment } from "./payload.ts";

/** Presigned URLs of S3 (SigV4) are valid at most 7 days. */
export const S3_PRESIGN_MAX_S = 7 * 24 * 3600;

export function s3Endpoint(store: AttachmentStore): string {
  return store.endpoint ?? `https://s3.${store.region}.amazonaws.com`;
}

/** The object key: prefix, date, a random ID, the file name (so the URL ends with it). */
export function s3Key(store: AttachmentStore, fileName: string, nowMs: number): string {
  const day = new Date(nowMs).toISOString().slice(0, 10).replace(/-/g, "/");
  const prefix = store.path_prefix ? store.path_prefix.replace(/^\/+/, "").replace(/\/*$/, "/") : "";
  return `${prefix}${day}/${randomHex(12)}/${fileName.replace(/[\/\\]/g, "_")}`;
}

export async function uploadToS3(
  store: AttachmentStore,
  a: MessageAttachment,
  ctx: { nowMs: number; ttlMs: number; resolver: DnsResolver; policy: EgressPolicy },
): Promise<string> {
  const endpoint = s3Endpoint(store);
  await checkedAddress(new URL(endpoint).hostname, ctx.resolver, ctx.policy);
  const client = new S3Client({
    accessKeyId: store.access_key_id,
    secretAccessKey: store.secret_access_key,
    bucket: store.bucket,
    region: store.region,
    endpoint,
  });
  const key = s3Key(store, a.fileName, ctx.nowMs);
  await client.write(key, a.content, { type: a.contentType });
  return client.presign(key, { expiresIn: Math.min(S3_PRESIGN_MAX_S, Math.ceil(ctx.ttlMs / 1000)), method: "GET" });
}
