// {"store": "s3", ...}: attachments uploaded to the address's S3-compatible bucket and
// given as presigned URLs valid for inbound.attachment_url_ttl. The endpoint is a
// user-given host: each upload goes through the egress guard's fetch, which resolves it
// through [dns], checks every address and connects to the address it checked (with the
// endpoint's name as Host and TLS server name). We sign the PUT ourselves (SigV4) for
// that reason: S3 clients resolve the name again through the system and connect there.
import type { DnsResolver } from "../../lib/dns.ts";
import { guardedFetch, readBodyPrefix } from "../../lib/egress-fetch.ts";
import type { EgressPolicy } from "../../lib/egress.ts";
import { randomHex } from "../../lib/ids.ts";
import type { AttachmentStore } from "../addresses/attachment-store.ts";
import type { MessageAttachment } from "../payload/payload.ts";
import { presignedUrl, sha256Hex, signedHeaders, uriEncode, type S3Credentials } from "./s3-sigv4.ts";

/** Presigned URLs of S3 (SigV4) are valid at most 7 days. */
export const S3_PRESIGN_MAX_S = 7 * 24 * 3600;

/** How much of an S3 error answer is read, for its <Code>. */
const ERROR_BODY_MAX_BYTES = 4096;

export function s3Endpoint(store: AttachmentStore): string {
  return store.endpoint ?? `https://s3.${store.region}.amazonaws.com`;
}

/** The object key: prefix, date, a random ID, the file name (so the URL ends with it). */
export function s3Key(store: AttachmentStore, fileName: string, nowMs: number): string {
  const day = new Date(nowMs).toISOString().slice(0, 10).replace(/-/g, "/");
  const prefix = store.path_prefix ? store.path_prefix.replace(/^\/+/, "").replace(/\/*$/, "/") : "";
  return `${prefix}${day}/${randomHex(12)}/${fileName.replace(/[/\\]/g, "_")}`;
}

/** The object's URL, path-style: endpoint, bucket, key (each byte encoded as SigV4 signs it). */
export function s3ObjectUrl(store: AttachmentStore, key: string): URL {
  const url = new URL(s3Endpoint(store));
  const base = url.pathname.replace(/\/+$/, "");
  url.pathname = `${base}/${uriEncode(store.bucket ?? "", false)}/${uriEncode(key, true)}`;
  url.search = "";
  url.hash = "";
  return url;
}

const credentialsOf = (store: AttachmentStore): S3Credentials => ({
  accessKeyId: store.access_key_id ?? "",
  secretAccessKey: store.secret_access_key ?? "",
  region: store.region ?? "us-east-1",
});

export interface S3UploadContext {
  nowMs: number;
  ttlMs: number;
  resolver: DnsResolver;
  policy: EgressPolicy;
  /** The whole PUT, connection included. */
  timeoutMs: number;
}

export async function uploadToS3(store: AttachmentStore, a: MessageAttachment, ctx: S3UploadContext): Promise<string> {
  const url = s3ObjectUrl(store, s3Key(store, a.fileName, ctx.nowMs));
  const credentials = credentialsOf(store);
  const headers = signedHeaders(
    { method: "PUT", url, headers: { "content-type": a.contentType }, payloadHash: sha256Hex(a.content), nowMs: ctx.nowMs },
    credentials,
  );
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("the S3 endpoint did not answer in time", "TimeoutError")),
    ctx.timeoutMs,
  );
  try {
    const { response } = await guardedFetch(
      { url: url.toString(), method: "PUT", headers, body: a.content, maxRedirects: 0, signal: controller.signal },
      { resolver: ctx.resolver, policy: ctx.policy },
    );
    if (!response.ok) {
      const code = /<Code>([^<]{1,100})<\/Code>/.exec(await readBodyPrefix(response, ERROR_BODY_MAX_BYTES))?.[1];
      throw new Error(`S3 answered ${response.status}${code ? ` ${code}` : ""}`);
    }
    await response.body?.cancel();
  } catch (err) {
    if (controller.signal.aborted) throw new Error("the S3 endpoint did not answer in time");
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return presignedUrl(
    { method: "GET", url, expiresS: Math.min(S3_PRESIGN_MAX_S, Math.ceil(ctx.ttlMs / 1000)), nowMs: ctx.nowMs },
    credentials,
  );
}
