// An unsubscribe request whose signed link Postroom has checked, passed on to the account's
// unsubscribe.url (docs/sending.md, List-Unsubscribe): a POST with the message and the
// recipient in the query (as before links were signed) and in the form body, and, when the
// outbound account (or its account) has an events webhook, its `Authorization: Bearer` and
// Standard Webhooks signature over the body, so the app can tell the request is
// Postroom's. Through the egress guard, like a webhook POST.
import { Webhook } from "standardwebhooks";
import type { AccountConfig, OutboundAccountConfig, WebhookConfig } from "../../config/config.ts";
import type { DnsResolver } from "../../lib/dns.ts";
import { guardedFetch } from "../../lib/egress-fetch.ts";
import { randomHex } from "../../lib/ids.ts";
import type { UnsubscribeTarget } from "./tracking-tokens.ts";

export interface RelayRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Pure: the request passed on to `unsubscribeUrl` for `target`, signed with `webhook` when there is one. */
export function relayRequest(
  unsubscribeUrl: string,
  target: UnsubscribeTarget,
  webhook: WebhookConfig | null,
  nowMs: number,
  userAgent: string,
): RelayRequest {
  const url = new URL(unsubscribeUrl);
  url.searchParams.set("message_id", target.messageId);
  url.searchParams.set("recipient", target.recipient);
  const body = new URLSearchParams({
    "List-Unsubscribe": "One-Click",
    message_id: target.messageId,
    recipient: target.recipient,
  }).toString();
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", "user-agent": userAgent };
  if (webhook) {
    headers.authorization = `Bearer ${webhook.token}`;
    if (webhook.signingSecret) {
      const id = `unsub_${randomHex(16)}`;
      headers["webhook-id"] = id;
      headers["webhook-timestamp"] = String(Math.floor(nowMs / 1000));
      headers["webhook-signature"] = new Webhook(webhook.signingSecret).sign(id, new Date(nowMs), body);
    }
  }
  return { url: url.toString(), headers, body };
}

export interface RelayDeps {
  resolver: DnsResolver;
  allowPrivate: boolean;
  timeoutMs: number;
  userAgent: string;
}

/** Posts the request; the app's HTTP status, or why there was none. */
export async function relayUnsubscribe(req: RelayRequest, deps: RelayDeps): Promise<{ status: number | null; problem: string }> {
  try {
    const { response } = await guardedFetch(
      { url: req.url, method: "POST", headers: req.headers, body: req.body, maxRedirects: 0, signal: AbortSignal.timeout(deps.timeoutMs) },
      { resolver: deps.resolver, policy: { allowPrivate: deps.allowPrivate } },
    );
    await response.body?.cancel();
    return { status: response.status, problem: response.ok ? "" : `answered ${response.status}` };
  } catch (err) {
    const timedOut = (err as Error).name === "TimeoutError";
    return { status: null, problem: timedOut ? `no answer within ${deps.timeoutMs} ms` : (err as Error).message };
  }
}

/** The account's unsubscribe.url and the webhook that signs for an outbound account, or null when it has none now. */
export function relayTargetOf(
  found: { account: AccountConfig; outbound: OutboundAccountConfig } | undefined,
): { url: string; webhook: WebhookConfig | null } | null {
  if (!found?.account.unsubscribe.url) return null;
  return { url: found.account.unsubscribe.url, webhook: found.outbound.webhook ?? found.account.webhook };
}
