// One POST of a received message to a target, through the egress guard, with the
// target's Basic credentials, a hard timeout over the whole exchange, redirects followed
// a bounded number of times, and at most N bytes of the answer kept.
import { Webhook } from "standardwebhooks";
import type { DnsResolver } from "../../lib/dns.ts";
import { guardedFetch, readBodyPrefix } from "../../lib/egress-fetch.ts";
import { EgressRefused, type EgressPolicy } from "../../lib/egress.ts";
import { signatureOf, streamOf, type StreamedBody } from "../payload/payload-body.ts";
import { unreachableReason } from "./outcome-log.ts";
import type { TargetOutcome } from "./target-reply.ts";
import { targetCall, type StoredTarget } from "../addresses/target-url.ts";

export interface TargetPostContext {
  resolver: DnsResolver;
  policy: EgressPolicy;
  timeoutMs: number;
  maxRedirects: number;
  responseMaxBytes: number;
  userAgent: string;
  /** Every POST's outcome and how long it took, redirects included (/metrics). */
  observe?(outcome: TargetOutcome, seconds: number): void;
}

export interface TargetPost {
  target: StoredTarget;
  /** JSON text (json+n), form fields (multipart+n), or either with large attachments, streamed. */
  body: string | FormData | StreamedBody;
  /** Stable per message and address, so a target can drop a message it already took. */
  messageKey: string;
  /** (beyond) Standard Webhooks secret of the address, or null. */
  signingSecret: string | null;
  nowMs: number;
}

/**
 * The exact body and content type to send: signatures cover the bytes, and redirects
 * resend them. JSON text stays a string (sent and signed as its UTF-8 bytes, no copy);
 * a form is encoded once, so that its boundary and bytes are fixed.
 */
async function serialize(body: string | FormData): Promise<{ bytes: string | Buffer; contentType: string }> {
  if (typeof body === "string") return { bytes: body, contentType: "application/json" };
  // (A streamed body is never serialised: see postToTarget.)
  const encoded = new Response(body);
  // Read the type (it carries the boundary) before the body: Bun drops it once the body is consumed.
  const contentType = encoded.headers.get("content-type")!;
  return { bytes: Buffer.from(await encoded.arrayBuffer()), contentType };
}

export async function postToTarget(post: TargetPost, ctx: TargetPostContext): Promise<TargetOutcome> {
  const startedMs = performance.now();
  const outcome = await exchange(post, ctx);
  ctx.observe?.(outcome, (performance.now() - startedMs) / 1000);
  return outcome;
}

async function exchange(post: TargetPost, ctx: TargetPostContext): Promise<TargetOutcome> {
  const call = targetCall(post.target);
  const streamed = typeof post.body === "object" && "parts" in post.body ? post.body : null;
  const { bytes, contentType } = streamed
    ? { bytes: null, contentType: streamed.contentType }
    : await serialize(post.body as string | FormData);
  const headers: Record<string, string> = {
    "user-agent": ctx.userAgent,
    "content-type": contentType,
    "x-postroom-message-id": post.messageKey,
  };
  if (streamed) headers["content-length"] = String(streamed.length);
  if (call.authorization) headers.authorization = call.authorization;
  if (post.signingSecret) {
    const timestamp = new Date(post.nowMs);
    headers["webhook-id"] = post.messageKey;
    headers["webhook-timestamp"] = String(Math.floor(post.nowMs / 1000));
    // Over the bytes sent. The library's sign() takes JSON text as it is, but decodes a
    // Buffer (a form, with files in it) as UTF-8 first, which changes binary bytes.
    const signed = streamed ?? (typeof bytes === "string" ? null : { parts: [{ bytes: bytes! }], length: bytes!.length, contentType });
    headers["webhook-signature"] = signed
      ? signatureOf(post.signingSecret, post.messageKey, Math.floor(post.nowMs / 1000), signed)
      : new Webhook(post.signingSecret).sign(post.messageKey, timestamp, bytes as string);
  }
  // A timer of our own, cleared when the exchange ends: AbortSignal.timeout() keeps its
  // timer and signal alive for the whole timeout, tens of thousands of them under load.
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(new DOMException("target did not answer in time", "TimeoutError")), ctx.timeoutMs);
  try {
    const requestBody = streamed ? () => streamOf(streamed) : bytes!;
    const { response, refusedRedirect } = await guardedFetch(
      { url: call.url, method: "POST", headers, body: requestBody, maxRedirects: ctx.maxRedirects, signal },
      ctx,
    );
    if (refusedRedirect) {
      // The target answered, with a redirect we will not follow: its status, and why.
      await response.body?.cancel();
      return { kind: "answered", status: response.status, contentType: null, body: refusedRedirect };
    }
    const body = await readBodyPrefix(response, ctx.responseMaxBytes);
    return { kind: "answered", status: response.status, contentType: response.headers.get("content-type"), body };
  } catch (err) {
    if (signal.aborted) return { kind: "timeout" };
    if (err instanceof EgressRefused) {
      const allowKey = err.privateAddress ? "inbound.allow_private_targets" : null;
      return {
        kind: "unreachable",
        reason: unreachableReason({ message: `refused by the egress guard: ${err.message}` }, call.url, allowKey),
      };
    }
    return { kind: "unreachable", reason: unreachableReason(err as { code?: unknown; message?: unknown }, call.url) };
  } finally {
    clearTimeout(timer);
  }
}
