// The List-Unsubscribe URL of sent messages (RFC 8058 one-click), public: its signed token
// is the credential. POST /t/u/{token} (what a mail provider sends for its unsubscribe
// button, and what the page below submits) passes the request on to the account's
// unsubscribe.url (outbound/tracking/unsubscribe-relay.ts) and says whether it went
// through. GET shows a page with a button that POSTs: link scanners and prefetchers fetch
// URLs, and a GET must not unsubscribe anyone (RFC 8058 section 3.2). A token that is not
// ours, was altered or is of another kind (an open or click token) is 404 for both.
import { Elysia, t } from "elysia";
import type { AccountRegistry } from "../auth/accounts.ts";
import type { Config } from "../config/config.ts";
import type { Clock } from "../lib/clock.ts";
import type { DnsResolver } from "../lib/dns.ts";
import type { Logger } from "../lib/logger.ts";
import { readUnsubscribeToken } from "../outbound/tracking/tracking-tokens.ts";
import { relayRequest, relayTargetOf, relayUnsubscribe } from "../outbound/tracking/unsubscribe-relay.ts";
import { notFound } from "../http/errors.ts";
import { NO_SUCH_LINK } from "../http/refusals.ts";

export interface UnsubscribeDeps {
  config(): Config;
  registry: AccountRegistry;
  resolver: DnsResolver;
  clock: Clock;
  logger: Logger;
  key: Buffer;
  userAgent: string;
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const page = (status: number, title: string, body: string) =>
  new Response(
    `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title>${body}</html>\n`,
    {
      status,
      // Never framed (a hidden frame must not click the button for a visitor), no scripts.
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "x-frame-options": "DENY",
        "content-security-policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
      },
    },
  );

export function unsubscribeRoutes(deps: UnsubscribeDeps) {
  const params = t.Object({ token: t.String() });
  // One relay per link at a time: a link POSTed again while its relay runs shares it, so
  // one recipient's link cannot make Postroom open any number of requests to the app.
  const relaying = new Map<string, ReturnType<typeof relayUnsubscribe>>();
  const relayOnce = (key: string, run: () => ReturnType<typeof relayUnsubscribe>) => {
    let pending = relaying.get(key);
    if (!pending) {
      pending = run().finally(() => relaying.delete(key));
      relaying.set(key, pending);
    }
    return pending;
  };
  return new Elysia({ name: "unsubscribe" })
    .get(
      "/t/u/:token",
      ({ params: { token } }) => {
        const target = readUnsubscribeToken(deps.key, token);
        if (!target) throw notFound(NO_SUCH_LINK);
        return page(
          200,
          "Unsubscribe",
          `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><p>Stop this mail to ${escapeHtml(target.recipient)}?</p><button type="submit">Unsubscribe</button></form>`,
        );
      },
      { params, detail: { hide: true } },
    )
    .post(
      "/t/u/:token",
      async ({ params: { token } }) => {
        const target = readUnsubscribeToken(deps.key, token);
        if (!target) throw notFound(NO_SUCH_LINK);
        const relay = relayTargetOf(deps.registry.outbound(target.outboundAccountId));
        const fields = { message_id: target.messageId, outbound_account_id: target.outboundAccountId };
        if (!relay) {
          deps.logger.warn("unsubscribe: the account has no unsubscribe.url now; nothing passed on", fields);
          return page(410, "Unsubscribe", "<p>This unsubscribe link no longer works; reply to the message to ask the sender.</p>");
        }
        const c = deps.config().webhooks;
        const result = await relayOnce(`${target.messageId}/${target.recipientId}`, () =>
          relayUnsubscribe(relayRequest(relay.url, target, relay.webhook, deps.clock.nowMs(), deps.userAgent), {
            resolver: deps.resolver,
            allowPrivate: c.allowPrivate,
            timeoutMs: c.timeoutMs,
            userAgent: deps.userAgent,
          }),
        );
        if (result.problem) {
          deps.logger.warn("unsubscribe: not passed on to the account's unsubscribe.url", {
            ...fields,
            status: result.status,
            problem: result.problem,
          });
          return page(502, "Unsubscribe", "<p>Your request could not be passed on to the sender. Try again later.</p>");
        }
        deps.logger.info("unsubscribe passed on", { ...fields, status: result.status });
        return page(200, "Unsubscribed", "<p>You are unsubscribed.</p>");
      },
      // The body (List-Unsubscribe=One-Click) says nothing the signed URL does not: left unread.
      { params, parse: "none", detail: { hide: true } },
    );
}
