// AWS Signature Version 4 for the two S3 requests Postroom makes: a PUT of an attachment
// (signed headers) and a presigned GET URL for the target (signed query). We sign them
// ourselves so that the PUT can go through the egress guard's fetch, which connects to
// the address it checked; a client library resolves the endpoint's name again itself.
// https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-authenticating-requests.html
import { createHash, createHmac } from "node:crypto";

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export const UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";
const ALGORITHM = "AWS4-HMAC-SHA256";

export const sha256Hex = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string): Buffer => createHmac("sha256", key).update(data).digest();

/** RFC 3986 encoding as S3 wants it: everything but A-Z a-z 0-9 - . _ ~ (and / in paths). */
export function uriEncode(value: string, keepSlash: boolean): string {
  return Array.from(Buffer.from(value, "utf8"), (b) => {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === "/")) return c;
    return "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }).join("");
}

/** "20130524T000000Z". */
export function amzDate(nowMs: number): string {
  return new Date(nowMs)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

const scopeOf = (date: string, region: string) => `${date.slice(0, 8)}/${region}/s3/aws4_request`;

function canonicalQuery(url: URL): string {
  return [...url.searchParams]
    .map(([k, v]) => [uriEncode(k, false), uriEncode(v, false)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

/** The signature over a canonical request; `url.pathname` must already be encoded with uriEncode. */
function signature(
  method: string,
  url: URL,
  headers: Record<string, string>,
  payloadHash: string,
  date: string,
  cred: S3Credentials,
): { signature: string; signedHeaders: string } {
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${headers[n]!.trim().replace(/\s+/g, " ")}\n`).join("");
  const signedHeaders = names.join(";");
  const canonicalRequest = [method, url.pathname, canonicalQuery(url), canonicalHeaders, signedHeaders, payloadHash].join("\n");
  const stringToSign = [ALGORITHM, date, scopeOf(date, cred.region), sha256Hex(canonicalRequest)].join("\n");
  let key = hmac(`AWS4${cred.secretAccessKey}`, date.slice(0, 8));
  for (const part of [cred.region, "s3", "aws4_request"]) key = hmac(key, part);
  return { signature: createHmac("sha256", key).update(stringToSign).digest("hex"), signedHeaders };
}

/**
 * The headers of a signed request: the caller's (names lower-cased), host (the URL's,
 * which is what the request must carry), x-amz-date, x-amz-content-sha256 and authorization.
 */
export function signedHeaders(
  req: { method: string; url: URL; headers: Record<string, string>; payloadHash: string; nowMs: number },
  cred: S3Credentials,
): Record<string, string> {
  const date = amzDate(req.nowMs);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
  Object.assign(headers, { host: req.url.host, "x-amz-date": date, "x-amz-content-sha256": req.payloadHash });
  const signed = signature(req.method, req.url, headers, req.payloadHash, date, cred);
  headers.authorization = `${ALGORITHM} Credential=${cred.accessKeyId}/${scopeOf(date, cred.region)},SignedHeaders=${signed.signedHeaders},Signature=${signed.signature}`;
  return headers;
}

/** A presigned URL (query-string authentication) valid for `expiresS` seconds from `nowMs`. */
export function presignedUrl(req: { method: string; url: URL; expiresS: number; nowMs: number }, cred: S3Credentials): string {
  const date = amzDate(req.nowMs);
  const url = new URL(req.url);
  url.searchParams.set("X-Amz-Algorithm", ALGORITHM);
  url.searchParams.set("X-Amz-Credential", `${cred.accessKeyId}/${scopeOf(date, cred.region)}`);
  url.searchParams.set("X-Amz-Date", date);
  url.searchParams.set("X-Amz-Expires", String(req.expiresS));
  url.searchParams.set("X-Amz-SignedHeaders", "host");
  const { signature: sig } = signature(req.method, url, { host: url.host }, UNSIGNED_PAYLOAD, date, cred);
  // Written out by hand: URLSearchParams would encode with + and leave some characters bare.
  return `${url.origin}${url.pathname}?${canonicalQuery(url)}&X-Amz-Signature=${sig}`;
}
