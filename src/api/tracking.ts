// Open and click tracking endpoints (public: the signed token is the credential).
// GET /t/o/{token}.gif records an open and answers a 1x1 GIF; GET /t/c/{token} records a
// click and redirects (302) to the original link. A forged or altered token is 404, so
// the redirect can never be aimed anywhere else. A click link works for
// outbound.tracking_link_ttl after its message was accepted (the click is recorded while
// the message is kept); after that it is 410 Gone with a short page, and records nothing.
import { t } from "elysia";
import type { NewEvent } from "../events/message-event.ts";
import type { Clock } from "../lib/clock.ts";
import type { OutboundRepo } from "../outbound/queue/queue.port.ts";
import { clickLinkExpiresAtMs, readClickToken, readOpenToken, type OpenTarget } from "../outbound/tracking/tracking-tokens.ts";
import { notFound } from "../http/errors.ts";
import { NO_SUCH_LINK } from "../http/refusals.ts";
import { publicRoutes } from "./context.ts";

// The smallest transparent GIF.
const PIXEL = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

// What a recipient's browser shows for an expired link: no redirect, no trace of where it led.
const EXPIRED_PAGE =
  '<!doctype html><html lang="en"><meta charset="utf-8"><title>Link expired</title><p>This link has expired.</p></html>\n';

export interface TrackingDeps {
  outbound: OutboundRepo;
  clock: Clock;
  /** Signs tracking links (opens and clicks). */
  key: Buffer;
  linkTtlMs(): number;
}

export function trackingRoutes(deps: TrackingDeps) {
  const record = async (
    target: OpenTarget,
    request: Request,
    remoteIp: string | null,
    kind: "open" | "click",
    extra: Record<string, unknown>,
  ): Promise<boolean> => {
    const recipient = await deps.outbound.getRecipient(target.messageId, target.recipientId);
    if (!recipient) return false;
    const details = { ...extra, ip: remoteIp, user_agent: request.headers.get("user-agent") };
    const event: NewEvent = {
      messageId: target.messageId,
      recipientId: target.recipientId,
      kind,
      details,
      createdAtMs: deps.clock.nowMs(),
    };
    await deps.outbound.addEvents(recipient.id, kind, [event]);
    return true;
  };
  return publicRoutes("tracking")
    .get(
      "/t/o/:token",
      async ({ params, request, remoteIp }) => {
        const target = readOpenToken(deps.key, params.token.replace(/\.gif$/, ""));
        if (!target || !(await record(target, request, remoteIp, "open", {}))) throw notFound(NO_SUCH_LINK);
        return new Response(PIXEL, {
          headers: { "content-type": "image/gif", "cache-control": "no-store, no-cache, must-revalidate, private" },
        });
      },
      { params: t.Object({ token: t.String() }), detail: { hide: true } },
    )
    .get(
      "/t/c/:token",
      async ({ params, request, remoteIp }) => {
        const target = readClickToken(deps.key, params.token);
        if (!target) throw notFound(NO_SUCH_LINK);
        // Links from before links carried an expiry count from their message's acceptance.
        const createdAtMs =
          target.expiresAtMs === null ? ((await deps.outbound.getMessageById(target.messageId))?.createdAtMs ?? null) : null;
        if (deps.clock.nowMs() >= clickLinkExpiresAtMs(target, createdAtMs, deps.linkTtlMs())) {
          return new Response(EXPIRED_PAGE, {
            status: 410,
            headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
          });
        }
        // Recorded while the message is kept (retention); the link works all the same.
        await record(target, request, remoteIp, "click", { url: target.url });
        return new Response(null, { status: 302, headers: { location: target.url, "cache-control": "no-store" } });
      },
      { params: t.Object({ token: t.String() }), detail: { hide: true } },
    );
}
