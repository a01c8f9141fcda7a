// One POST of a received message to a target, through the egress guard, with the
// target's Basic credentials, a hard timeout over the whole exchange, redirects followed
// a bounded number of times, and at most N bytes of the answer kept.
import type { DnsResolver } from "../lib/dns.ts";
import { guardedFetch, readBodyPrefix } from "../lib/egress-fetch.ts";
import { EgressRefused, type EgressPolicy } from "../lib/egress.ts";
import type { TargetOutcome } from "./target-reply.ts";
import { targetCall, type StoredTarget } from "./target-url.ts";

export interface TargetPostContext {
  resolver: DnsResolver;
  policy: EgressPolicy;
  timeoutMs: number;
  maxRedirects: number;
  responseMaxBytes: number;
  userAgent: string;
}

export interface TargetPost {
  target: StoredTarget;
  body: string | FormData;
  /** Stable per message and address, so a target can drop a message it already took. */
  messageKey: string;
}

export async function postToTarget(post: TargetPost, ctx: TargetPostContext): Promise<TargetOutcome> {
  const call = targetCall(post.target);
  const headers: Record<string, string> = { "user-agent": ctx.userAgent, "x-postroom-message-id": post.messageKey };
  if (typeof post.body === "string") headers["content-type"] = "application/json";
  if (call.authorization) headers.authorization = call.authorization;
  const signal = AbortSignal.timeout(ctx.timeoutMs);
  try {
    const { response } = await guardedFetch({ url: call.url, method: "POST", headers, body: post.body, maxRedirects: ctx.maxRedirects, signal }, ctx);
    const body = await readBodyPrefix(response, ctx.responseMaxBytes);
    return { kind: "answered", status: response.status, contentType: response.headers.get("content-type"), body };
  } catch (err) {
    if (signal.aborted) return { kind: "timeout" };
    if (err instanceof EgressRefused) return { kind: "unreachable", reason: `refused by the egress guard: ${err.message}` };
    const { code, message } = err as { code?: string; message?: string };
    return { kind: "unreachable", reason: [code, message].filter(Boolean).join(": ") || "connection failed" };
  }
}
