// List paging on the wire (docs/api.md, Lists and paging): at most 50 records, newest first; the
// deprecated `page` still works; `before=<cursor>` and a `Link: <...>; rel="next"`
// header are the way forward because they stay correct while records arrive.
import { t } from "elysia";
import type { Cursor, Page, PageRequest } from "../store/paging.ts";
import type { Logger } from "../lib/logger.ts";
import { SearchTimeoutError } from "../store/sliced-search.ts";
import { ApiError, invalid } from "../http/errors.ts";

export const PAGE_SIZE = 50;

export const pagingQueryFields = {
  query: t.Optional(t.String({ maxLength: 500, description: "search text" })),
  // A string with a pattern rather than a coerced number: Elysia reports coercion
  // failures without the parameter's name.
  page: t.Optional(
    t.String({
      pattern: "^[1-9][0-9]{0,6}$",
      description: "page number, from 1 (deprecated: use the Link header)",
      errorMessage: "must be a whole number from 1",
    }),
  ),
  before: t.Optional(t.String({ maxLength: 200, description: "cursor from the Link header of the previous page" })),
};

export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${c.createdAtMs}.${c.id}`, "utf8").toString("base64url");
}

export function decodeCursor(text: string): Cursor | null {
  const m = /^(\d{1,16})\.([0-9a-zA-Z-]{1,64})$/.exec(Buffer.from(text, "base64url").toString("utf8"));
  return m ? { createdAtMs: Number(m[1]), id: m[2]! } : null;
}

export function pageRequest(q: { page?: string; before?: string }): PageRequest {
  if (q.before !== undefined) {
    const before = decodeCursor(q.before);
    if (!before) throw invalid("before", 'is not a cursor this server issued; follow the Link header\'s rel="next" URL as it is');
    return { limit: PAGE_SIZE, before };
  }
  return { limit: PAGE_SIZE, offset: (Number(q.page ?? "1") - 1) * PAGE_SIZE };
}

/**
 * The Link header to the next page, or null on the last one. Relative to the request
 * (RFC 8288 allows it), so it is right behind any proxy. Page-number callers get the
 * next page number while their pages fill; everyone else, and a search whose page ended
 * at its window's edge (page.next), gets a cursor: the next page number would search the
 * same first window again (paging.ts, searchWindowRows).
 */
export function nextLink<T extends { createdAtMs: number; id: string }>(
  requestUrl: string,
  q: { page?: string },
  page: Page<T>,
): string | null {
  const last = page.next ?? page.items.at(-1);
  if (!page.hasMore || !last) return null;
  const url = new URL(requestUrl);
  if (q.page !== undefined && !page.next) {
    url.searchParams.set("page", String(Number(q.page) + 1));
  } else {
    url.searchParams.delete("page");
    url.searchParams.set("before", encodeCursor({ createdAtMs: last.createdAtMs, id: last.id }));
  }
  return `<${url.pathname}${url.search}>; rel="next"`;
}

/**
 * A list read with `read(timeoutMs)`; a search that ran past http.search_timeout is 503
 * saying so and how to narrow it, with Retry-After (it may have waited behind others),
 * and a warning in the log naming the list and how many terms it had (not the query:
 * it holds addresses).
 */
export async function timedSearch<T>(
  ctx: { set: { headers: Record<string, unknown> }; logger: Pick<Logger, "warn">; list: string; accountId: string; terms: number },
  timeoutMs: number,
  read: (timeoutMs: number) => Promise<T>,
): Promise<T> {
  try {
    return await read(timeoutMs);
  } catch (err) {
    if (!(err instanceof SearchTimeoutError)) throw err;
    ctx.logger.warn("search timed out", { list: ctx.list, account: ctx.accountId, terms: ctx.terms, timeout_ms: timeoutMs });
    ctx.set.headers["retry-after"] = String(Math.max(1, Math.ceil(timeoutMs / 1000)));
    throw new ApiError(
      503,
      `search timed out: it took longer than ${timeoutMs} ms (http.search_timeout); narrow it with a field (from:, to:, subject:) or a created_at range, use fewer words, or try again later`,
    );
  }
}
