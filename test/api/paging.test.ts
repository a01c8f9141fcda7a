// The paging decisions of a list request, as tables: which requests read a search window
// (every search, paged by cursor or by number), and which Link the next page gets.
import { describe, expect, test } from "bun:test";
import { decodeCursor, nextLink } from "../../src/api/paging.ts";
import { searchWindowRows, type Page } from "../../src/store/paging.ts";

describe("searchWindowRows", () => {
  test.each([
    // [search terms, http.search_window, rows the request may read (null: no window)]
    [0, 10_000, null],
    [1, 10_000, 10_000],
    [16, 100, 100],
    [3, Number.POSITIVE_INFINITY, null],
  ])("%p terms, window %p: %p", (terms, window, rows) => expect(searchWindowRows(terms, window)).toBe(rows));
});

describe("nextLink", () => {
  const item = (n: number) => ({ createdAtMs: n, id: `id${n}` });
  const full: Page<ReturnType<typeof item>> = { items: [item(9), item(8)], hasMore: true };
  const atEdge: Page<ReturnType<typeof item>> = { items: [item(9)], hasMore: true, next: item(5) };
  const last: Page<ReturnType<typeof item>> = { items: [item(9)], hasMore: false };
  const url = "http://h/api/x?query=a&page=3";
  const cursorUrl = "http://h/api/x?query=a";

  test.each([
    // [request, its page= parameter, page, the Link's query (null: no Link)]
    ["page 3, a full page", url, "3", full, "query=a&page=4"],
    ["page 3, ended at the window's edge", url, "3", atEdge, "query=a&before=cursor:5.id5"],
    ["page 3, the last", url, "3", last, null],
    ["cursor, a full page", cursorUrl, undefined, full, "query=a&before=cursor:8.id8"],
    ["cursor, ended at the window's edge", cursorUrl, undefined, atEdge, "query=a&before=cursor:5.id5"],
    ["cursor, the last", cursorUrl, undefined, last, null],
  ])("%s", (_, requestUrl, pageParam, page, expected) => {
    const link = nextLink(requestUrl, { page: pageParam }, page);
    if (expected === null) return expect(link).toBeNull();
    const target = new URL(/^<([^>]+)>; rel="next"$/.exec(link ?? "")![1]!, "http://h");
    const before = target.searchParams.get("before");
    const shown = [...target.searchParams]
      .map(([k, v]) => (k === "before" ? `before=cursor:${decodeCursor(v)!.createdAtMs}.${decodeCursor(v)!.id}` : `${k}=${v}`))
      .join("&");
    expect(shown).toBe(expected);
    expect(before === null).toBe(!expected.includes("before="));
  });
});
