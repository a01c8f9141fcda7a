// One POST of a batch of events to a webhook receiver: the body (docs/api.md, E10), the
// Bearer token and Standard Webhooks signature headers, the egress guard, the timeout, and
// the record of what the receiver answered (the dashboard's webhook page). Apart from
// dispatcher.ts, which decides when and which batch is posted and what its answer means;
// the dashboard's test POST (a sample event outside the outbox) is posted here too.
import { Webhook } from "standardwebhooks";
import type { Config } from "../config/config.ts";
import { type Clock, isoTime } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import { guardedFetch, readBodyPrefix } from "../lib/egress-fetch.ts";
import { newId16 } from "../lib/ids.ts";
import { replaceNul } from "../lib/stored-text.ts";
import type { WebhookBody, WebhookEvent } from "./event-schema.ts";
import type { Batch } from "./outbox-event.ts";
import type { WebhookPost } from "./webhook-post.ts";
import type { WebhookPostRepo } from "./webhook-posts.port.ts";
import { retryAfterMs } from "./webhook-schedule.ts";

/** What a POST to a receiver needs (a part of the dispatcher's deps). */
export interface ExchangeDeps {
  resolver: DnsResolver;
  clock: Clock;
  config(): Config;
  userAgent: string;
  /** Counts POSTs by result: the answer's status, or none and whether it timed out (metrics). */
  onPosted?(status: number | null, timedOut: boolean): void;
  /** Where each POST and the receiver's answer are recorded (the dashboard's webhook page). */
  posts?: WebhookPostRepo;
}

/** Where a POST goes: the config's webhook (WebhookConfig) or an endpoint (webhook-endpoint.ts). */
export interface Receiver {
  url: string;
  /** Sent as `Authorization: Bearer <token>`; null = no Authorization header. */
  token: string | null;
  /** Standard Webhooks secret; null = unsigned. */
  signingSecret: string | null;
}

/** What a receiver made of one POST. */
export interface Exchange {
  status: number | null;
  retryAfter: number | null;
  problem: string;
  timedOut: boolean;
  durationMs: number;
}

/** The nil UUID: the message of the sample event a test POST carries (no message has it). */
export const TEST_MESSAGE_ID = "00000000-0000-0000-0000-000000000000";

export function webhookBody(batch: Batch): string {
  const body: WebhookBody = {
    events: batch.events.map((e) => ({
      id: e.id,
      // Only lifecycle kinds reach the outbox (internal kinds are never posted).
      kind: e.kind as WebhookEvent["kind"],
      recipient: e.recipient,
      message_id: e.messageId,
      outbound_account_id: e.outboundAccountId,
      created_at: isoTime(e.createdAtMs),
      details: e.details,
      ...(e.metadata ? { metadata: e.metadata } : {}),
    })),
  };
  return JSON.stringify(body);
}

/** POSTs `body` under the Bearer token and signature headers, through the egress guard; records the answer. */
export async function postToWebhook(
  deps: ExchangeDeps,
  webhook: Receiver,
  outboundAccountId: string,
  batchId: string,
  body: string,
  events: number,
  test: boolean,
): Promise<Exchange> {
  const c = deps.config().webhooks;
  const now = deps.clock.nowMs();
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": deps.userAgent,
    "webhook-id": batchId,
    "webhook-timestamp": String(Math.floor(now / 1000)),
  };
  if (webhook.token !== null) headers["authorization"] = `Bearer ${webhook.token}`;
  if (webhook.signingSecret) headers["webhook-signature"] = new Webhook(webhook.signingSecret).sign(batchId, new Date(now), body);
  const result: Exchange = { status: null, retryAfter: null, problem: "", timedOut: false, durationMs: 0 };
  const startedMs = performance.now();
  try {
    const { response } = await guardedFetch(
      { url: webhook.url, method: "POST", headers, body, maxRedirects: 0, signal: AbortSignal.timeout(c.timeoutMs) },
      { resolver: deps.resolver, policy: { allowPrivate: c.allowPrivate } },
    );
    result.status = response.status;
    result.retryAfter = retryAfterMs(response.headers.get("retry-after"), now);
    // The receiver's own words, kept on the webhook post: NUL replaced (src/lib/stored-text.ts).
    result.problem = response.status >= 200 && response.status < 300 ? "" : replaceNul((await readBodyPrefix(response, 512)).slice(0, 200));
  } catch (err) {
    result.timedOut = (err as Error).name === "TimeoutError";
    result.problem = result.timedOut ? `no answer within ${c.timeoutMs} ms` : (err as Error).message;
  }
  result.durationMs = Math.round(performance.now() - startedMs);
  deps.onPosted?.(result.status, result.timedOut);
  await deps.posts?.record({
    outboundAccountId,
    batchId,
    events,
    test,
    status: result.status,
    problem: result.problem,
    durationMs: result.durationMs,
    createdAtMs: now,
  });
  return result;
}

/**
 * The dashboard's "send a test event": one sample delivery event (details.test true, the
 * nil UUID as message) posted now to the outbound account's webhook, outside the outbox
 * (nothing is retried).
 */
export async function postTestEvent(deps: ExchangeDeps, webhook: Receiver, outboundAccountId: string): Promise<WebhookPost> {
  const nowMs = deps.clock.nowMs();
  const batchId = `msg_test_${newId16()}`;
  const body = webhookBody({
    id: batchId,
    attempts: 0,
    events: [
      {
        id: `test_${newId16()}`,
        kind: "delivery",
        recipient: "test@example.com",
        messageId: TEST_MESSAGE_ID,
        outboundAccountId,
        accountId: "",
        createdAtMs: nowMs,
        details: { test: true, mx: "mx.example.com", smtp_code: 250, smtp_response: "250 2.0.0 OK (test)", attempt: 1 },
      },
    ],
  });
  const r = await postToWebhook(deps, webhook, outboundAccountId, batchId, body, 1, true);
  return {
    id: batchId,
    outboundAccountId,
    batchId,
    events: 1,
    test: true,
    status: r.status,
    problem: r.problem,
    durationMs: r.durationMs,
    createdAtMs: nowMs,
  };
}
