// (beyond) A kept message (its address had store_messages), for the dashboard's incoming
// Details:
// - GET  /api/v0.1/{accountId}/incoming_statuses/{statusId}/message?address_id=: its header
//   fields and the payload its target was posted, made again from the message and the
//   envelope kept with it;
// - POST /api/v0.1/{accountId}/incoming_statuses/{statusId}/post_again?address_id=: the
//   message goes to the address's target again, as a new posting with a new incoming
//   status; the answer is the SMTP reply a sender would get now ("Post again").
import { t } from "elysia";
import type { Address } from "../inbound/addresses/address.ts";
import type { IncomingStatus } from "../inbound/statuses/incoming-status.ts";
import type { AccountConfig } from "../config/config.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { inboundMessageCost } from "../inbound/post-message.ts";
import { costOf, MEMORY_RETRY_AFTER_S } from "../lib/memory-budget.ts";
import { ApiError, errorResponses, notFound } from "../http/errors.ts";
import { noRecord } from "../http/refusals.ts";

const params = t.Object({ accountId: t.String(), statusId: t.String() });
const query = t.Object({ address_id: t.String({ description: "the address the message came to" }) });

/**
 * The status, its address and the kept message's bytes, read while `use` runs; 404 for
 * what is not the caller's or is gone. The message is held in the memory budget for mail
 * in flight (limits.mail_in_flight) as a received one is: 503 when there is no room.
 */
async function withKept<T>(
  deps: KeptMessageDeps,
  account: AccountConfig,
  set: { headers: Record<string, unknown> },
  ids: { statusId: string; addressId: string },
  use: (kept: { status: IncomingStatus; address: Address; raw: Buffer }) => Promise<T>,
): Promise<T> {
  const accountId = account.id;
  const address = await deps.addresses.get(accountId, ids.addressId);
  if (!address) throw notFound(noRecord("address", ids.addressId, `GET /api/v0.1/${accountId}/addresses`));
  const status = await deps.statuses.get(accountId, address.id, ids.statusId);
  if (!status)
    throw notFound(noRecord("incoming status", ids.statusId, `GET /api/v0.1/${accountId}/incoming_statuses?address_id=${address.id}`));
  if (!status.storeUrl)
    throw new ApiError(
      422,
      "this message was not kept: its address's store_messages was off when it came; turn store_messages on (PATCH the address) to keep the next ones",
    );
  const held = deps.budget.reserve(costOf(inboundMessageCost(1), status.sizeBytes ?? deps.config().smtp.maxMessageSizeBytes), null);
  if (!held) {
    set.headers["retry-after"] = String(MEMORY_RETRY_AFTER_S);
    throw new ApiError(503, "insufficient system resources, try again later");
  }
  try {
    const raw = await deps.kept.read(status.storeUrl);
    if (!raw)
      throw new ApiError(
        404,
        "Not Found: the kept message is no longer there (it is kept for inbound.attachment_url_ttl; raise it to keep messages longer)",
      );
    return await use({ status, address, raw });
  } finally {
    held.release();
  }
}

const HeaderField = t.Object({ name: t.String(), value: t.String({ description: "unfolded and decoded" }) });
const PayloadView = t.Object(
  {
    content_type: t.String({ description: "application/json, multipart/form-data or message/rfc822" }),
    body: t.String({
      description:
        "JSON pretty-printed, a form's fields one per line (name: value), or the message; attachments' contents are not shown, their size is",
    }),
    truncated: t.Boolean({ description: "the body was cut at 256 KiB" }),
  },
  { title: "PayloadView" },
);

/** What the routes take of the API's dependencies. */
export type KeptMessageDeps = Pick<ApiDeps, "config" | "addresses" | "statuses" | "budget" | "kept">;

export function keptMessageRoutes(deps: KeptMessageDeps) {
  return accountRoutes("kept-messages")
    .get(
      "/incoming_statuses/:statusId/message",
      async ({ account, params, query, set }) =>
        withKept(deps, account, set, { statusId: params.statusId, addressId: query.address_id }, async ({ status, address, raw }) => {
          const view = await deps.kept.view(raw, status, address);
          return {
            size: raw.length,
            format: address.targetFormat,
            headers: view.headers,
            payload: view.payload && { content_type: view.payload.contentType, body: view.payload.body, truncated: view.payload.truncated },
          };
        }),
      {
        params,
        query,
        response: {
          200: t.Object(
            {
              size: t.Integer({ description: "bytes of the message as the sender sent it" }),
              format: t.String({ description: "the address's target_format now" }),
              headers: t.Array(HeaderField, {
                description:
                  "the message's header fields in order, as the sender sent them (the POST also carried our Return-Path and Received lines)",
              }),
              payload: t.Union([PayloadView, t.Null()], {
                description: "what the target was posted, in the address's format; null for a message kept without its envelope",
              }),
            },
            { title: "KeptMessage" },
          ),
          ...errorResponses(401, 403, 404, 422, 429, 503),
        },
        detail: {
          operationId: "getIncomingMessage",
          summary: "(beyond) a kept message's headers and the payload its target was posted",
          tags: ["Incoming statuses"],
          security: [{ bearerAPIToken: [] }],
        },
      },
    )
    .post(
      "/incoming_statuses/:statusId/post_again",
      async ({ account, params, query, set }) =>
        withKept(deps, account, set, { statusId: params.statusId, addressId: query.address_id }, async ({ status, address, raw }) => ({
          smtp_reply: await deps.kept.postAgain(raw, status, address),
        })),
      {
        params,
        query,
        response: {
          200: t.Object(
            { smtp_reply: t.String({ description: "what a sender would be told now; the new incoming status is first in E6" }) },
            { title: "PostAgainResult" },
          ),
          ...errorResponses(401, 403, 404, 422, 429, 503),
        },
        detail: {
          operationId: "postIncomingAgain",
          summary: "(beyond) deliver a kept message to its address's target again, as a new incoming status",
          tags: ["Incoming statuses"],
          security: [{ bearerAPIToken: [] }],
        },
      },
    );
}
