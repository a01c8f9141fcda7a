// GET /attachments/{id}/{file name}?expires=&signature=: locally stored attachments of
// received mail. The signed URL is the credential; anything else is 404.
import { Elysia, t } from "elysia";
import { ATTACHMENT_PATH_PREFIX, type LocalAttachmentStore } from "../inbound/attachment-files.ts";
import type { Clock } from "../lib/clock.ts";
import { notFound } from "./errors.ts";

export function attachmentRoutes(store: LocalAttachmentStore, clock: Clock) {
  return new Elysia({ name: "attachments" }).get(
    `${ATTACHMENT_PATH_PREFIX}/:id/:name`,
    ({ params, query }) => {
      const found = store.open(params.id, query.expires ?? "", query.signature ?? "", clock.nowMs());
      if (!found) throw notFound();
      return new Response(Bun.file(found.path), {
        headers: {
          "content-type": found.meta.content_type,
          "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(found.meta.file_name)}`,
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
