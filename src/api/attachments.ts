// GET /attachments/{id}/{file name}?expires=&signature=: locally stored attachments of
// received mail. The signed URL is the credential; anything else is 404.
import { Elysia, t } from "elysia";
import { ATTACHMENT_PATH_PREFIX } from "../inbound/attachments/attachment-url.ts";
import type { LocalAttachments } from "../inbound/attachments/local-attachments.port.ts";
import type { Clock } from "../lib/clock.ts";
import { notFound } from "../http/errors.ts";
import { NO_SUCH_LINK } from "../http/refusals.ts";

export function attachmentRoutes(store: LocalAttachments, clock: Clock) {
  return new Elysia({ name: "attachments" }).get(
    `${ATTACHMENT_PATH_PREFIX}/:id/:name`,
    async ({ params, query }) => {
      const found = await store.open(params.id, query.expires ?? "", query.signature ?? "", clock.nowMs());
      if (!found) throw notFound(NO_SUCH_LINK);
      return new Response(found.body, {
        headers: {
          "content-type": found.contentType,
          "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(found.fileName)}`,
          "cache-control": "private, max-age=3600",
          "x-content-type-options": "nosniff",
        },
      });
    },
    {
      params: t.Object({ id: t.String(), name: t.String() }),
      query: t.Object({ expires: t.Optional(t.String()), signature: t.Optional(t.String()) }),
      detail: { hide: true },
    },
  );
}
